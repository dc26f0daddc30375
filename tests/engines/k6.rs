//! Seed 004 on k6 (`src/catalog/k6.rs`): the exported script run by one k6 process, and
//! by two splitting every scenario, their summaries added up by the judge.

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::k6;
use perfshape::{Result, assert_shapes};

#[test]
fn seed004_from_k6() -> Result {
    assert_shapes!(k6::seed004_from_k6(Claimed)?);
    Ok(())
}

#[test]
fn seed004_split_between_two_runners() -> Result {
    assert_shapes!(k6::seed004_split_between_two_runners(Claimed)?);
    Ok(())
}
