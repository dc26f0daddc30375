//! Claims that need what only tests have (wiremock, proptest, the examples' services),
//! shared by the claims in `tests/shape/` and their negative controls in
//! `tests/controls/`. Each binary uses what it needs.
#![allow(dead_code)]

pub(crate) mod layers;
pub(crate) mod model_vs_reality;
pub(crate) mod orders;
pub(crate) mod wiremock;
