//! Seed 004 on k6 (`src/catalog/k6.rs`): the exported script run by two k6 processes
//! splitting every scenario, their summaries added up by the judge — judged as one k6
//! process's load, and as the split's.

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::expect_broken;
use perfshape_experiments::catalog::k6;

/// Both entries' claims, and their negative controls read from the same run (they must
/// break): the same statistics on the wrong rows and think time, and the first runner's
/// summary alone.
#[test]
fn seed004_from_k6_and_split_between_two_runners() -> Result {
    let [(claimed, control), (split, split_control)] =
        k6::seed004_from_k6_and_split_with_control()?;
    expect_broken(&control)?;
    expect_broken(&split_control)?;
    assert_shapes!(claimed);
    assert_shapes!(split);
    Ok(())
}
