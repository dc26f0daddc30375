//! The five experiments' tables, gated (`src/catalog/tables.rs`): every modelled row at
//! test scale agrees with its model within [0.9, 1.3], as a claim with rounds — 25 of 26;
//! seed 002's HTTP AIO row is a named finding with a claim of its own (below).
//!
//! Its own nextest profile (`cargo nextest run --profile tables`, run by `.ci/run` after
//! the main suite), like the negative controls: it measures 25 rows in about nine
//! seconds, and the main suite stays within its time.

use perfshape::catalog::Setup::Claimed;
use perfshape::catalog::tables;
use perfshape::{Result, assert_shapes};

#[test]
fn every_row_of_the_five_tables_agrees_with_the_model() -> Result {
    assert_shapes!(tables::every_row_agrees_with_the_model(Claimed)?);
    Ok(())
}

#[test]
fn an_http_aio_fan_out_of_1000_hides_its_wait() -> Result {
    assert_shapes!(tables::an_http_aio_fan_out_hides_its_wait(Claimed)?);
    Ok(())
}
