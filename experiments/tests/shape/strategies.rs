//! Every strategy against the model, and the options that shape a load
//! (`src/catalog/strategies.rs`).

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::strategies;

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
