//! Every strategy against the model, and the options that shape a load
//! (`src/catalog/strategies.rs`).

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::strategies;
use perfshape::{Result, assert_shapes};

#[test]
fn mixed_cpu_and_lock_match_the_model() -> Result {
    assert_shapes!(strategies::mixed_cpu_and_lock_match_the_model(Claimed)?);
    Ok(())
}

#[test]
fn tails_match_the_model() -> Result {
    assert_shapes!(strategies::tails_match_the_model(Claimed)?);
    Ok(())
}

#[test]
fn a_ramp_spreads_the_users() -> Result {
    assert_shapes!(strategies::a_ramp_spreads_the_users(Claimed)?);
    Ok(())
}

#[test]
fn an_in_flight_cap_bounds_the_queue() -> Result {
    assert_shapes!(strategies::an_in_flight_cap_bounds_the_queue(Claimed)?);
    Ok(())
}
