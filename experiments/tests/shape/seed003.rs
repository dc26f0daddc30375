//! seed 003 — CPU-bound: a loop vs rayon vs one task per item (`src/catalog/seed003.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::seed003;

#[test]
fn one_task_per_item_is_far_slower_than_a_loop() -> Result {
    assert_shapes!(seed003::one_task_per_item_is_far_slower_than_a_loop(
        Claimed
    )?);
    Ok(())
}
