//! Seed 004 on k6 (`src/catalog/k6.rs`): the exported script run by one k6 process, and
//! by two splitting every scenario, their summaries added up by the judge.

use perfshape::catalog::expect_broken;
use perfshape::catalog::k6;
use perfshape::{Result, assert_shapes};

/// The claims, and their negative control read from the same k6 run (it must break).
#[test]
fn seed004_from_k6() -> Result {
    let (claimed, control) = k6::seed004_from_k6_with_control()?;
    expect_broken(&control)?;
    assert_shapes!(claimed);
    Ok(())
}

/// The split run's claims, and their control (the first runner's summary alone) from the
/// same two runners.
#[test]
fn seed004_split_between_two_runners() -> Result {
    let (claimed, control) = k6::seed004_split_with_control()?;
    expect_broken(&control)?;
    assert_shapes!(claimed);
    Ok(())
}
