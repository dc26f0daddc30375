//! The five experiments' tables, gated (`src/catalog/tables.rs`): every modelled row at
//! test scale agrees with its model within [0.9, 1.3], as a claim with rounds — 25 of 26;
//! seed 002's HTTP AIO row is a named finding with a claim of its own (below).
//!
//! Its own nextest profile (`cargo nextest run --profile tables`, run by `.ci/run` after
//! the main suite), like the negative controls: it measures 25 rows in about nine
//! seconds, and the main suite stays within its time.

use perfshape::assert_shapes;
use perfshape_experiments::Result;
use perfshape_experiments::catalog::Setup::Claimed;
use perfshape_experiments::catalog::{expect_broken, tables};

/// The claims, and their negative control read from the same rounds (it must break).
#[test]
fn every_row_agrees_with_the_model() -> Result {
    let (claimed, control) = tables::every_row_agrees_with_the_model_with_control()?;
    expect_broken(&control)?;
    assert_shapes!(claimed);
    Ok(())
}

#[test]
fn an_http_aio_fan_out_of_1000_hides_its_wait() -> Result {
    assert_shapes!(tables::an_http_aio_fan_out_hides_its_wait(Claimed)?);
    Ok(())
}
