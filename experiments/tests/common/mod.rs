//! What the experiments' claims share across test binaries: wiremock's mock, the model's
//! random scenarios, the pools of any size and kind. Each binary uses what it needs.
#![allow(dead_code)]

// The tower-limited service the gate's tests stack as teams do: one of the pools' kinds.
#[path = "../../../tests/common/layers.rs"]
pub(crate) mod layers;
pub(crate) mod model_vs_reality;
pub(crate) mod pools;
pub(crate) mod wiremock;

// The gate's helper: a claim's verdict where every read it needs is made.
#[path = "../../../tests/common/decided.rs"]
mod decided;
#[allow(unused_imports)]
pub(crate) use decided::decided;
