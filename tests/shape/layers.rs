//! A tower stack under the gate: a concurrency limit of 5 around an async handler shows as
//! what it is, a pool of ≈5 (between the sweep's doublings 4 and 8) — and the handler still
//! gives its worker back. The controls (tests/controls/) claim ≈2.5 and ≈10 of it.

use perfshape::{Result, assert_shape};

use crate::common::layers::limited;

#[test]
fn a_concurrency_limit_layer_behaves_like_a_pool_of_its_size() -> Result {
    let target = limited(5)?;
    let checked = crate::common::layers::behaves_like_a_pool_of(&target, 5.0).check()?;
    assert_shape!(checked);
    Ok(())
}
