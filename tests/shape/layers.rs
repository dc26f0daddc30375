//! A tower stack under the gate: a concurrency limit of 2 around an async handler shows as
//! what it is, a pool of ≈2 — and the handler still gives its worker back. The control
//! (tests/controls/) claims ≈2 of a limit of 4.

use perfshape::{Result, assert_shape};

use crate::common::layers::limited;

#[test]
fn a_concurrency_limit_layer_behaves_like_a_pool_of_its_size() -> Result {
    let target = limited(2)?;
    let checked = crate::common::layers::behaves_like_a_pool_of_two(&target).check()?;
    assert_shape!(checked);
    Ok(())
}
