//! Two builds compared in the same rounds, on two demo services (`src/catalog/compare.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::compare;

#[test]
fn the_same_build_is_no_regression() -> Result {
    assert_shapes!(compare::the_same_build_is_no_regression(Claimed)?);
    Ok(())
}

#[test]
fn a_faster_build_is_claimed_faster() -> Result {
    assert_shapes!(compare::a_faster_build_is_claimed_faster(Claimed)?);
    Ok(())
}
