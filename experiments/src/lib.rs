//! # perfshape-experiments — five async-vs-blocking experiments, reproduced as claims
//!
//! Five well-known experiments (ASP.NET, C#) showed that async only pays when client and
//! server are both async, that blocking handlers starve a thread pool, that offloading
//! blocking work only moves the cap, that a per-host connection cap turns an async client
//! back into a queue, and that one task per tiny CPU item is far slower than a loop. This
//! crate reproduces them with tokio, axum and reqwest on the gate's public API
//! ([`perfshape`]): each claim a ratio measured side by side in one run, inside a band,
//! with a three-way verdict, its expectation from a discrete-event [`model`].
//!
//! - [`scenario::Scenario`] is strategy × pools × load; on the [`demo`] service it becomes
//!   a [`load::Load`] ([`Loads`](load::Loads)) whose measures expect what the
//!   [`model::Model`] predicts;
//! - [`experiment::Experiment`] is one source experiment, loaded from `fixtures/*.toml`
//!   with its published figures; [`report`] draws its tables and plots;
//! - [`catalog`] holds every claim perfshape makes about the experiments, each with its
//!   negative control;
//! - [`external`] runs a fixture's rows on Locust or k6 and judges their statistics;
//! - [`inproc`] is seed 003's in-process CPU strategies.
//!
//! Layers, bottom to top (nothing reaches up; `scripts/import-circles.py` checks it): the
//! vocabulary and the [`error`] → [`demo`] and [`inproc`] → [`model`] → [`scenario`] and
//! [`load`] → [`experiment`] → [`catalog`], [`report`] and [`external`] → the `perfshape`
//! command.
#![warn(missing_docs)]

pub mod catalog;
pub mod demo;
pub mod error;
pub mod experiment;
pub mod external;
pub mod inproc;
mod kernel;
pub mod load;
pub mod model;
pub mod report;
pub mod scenario;
pub mod vocab;

pub use error::{Error, Result};

/// The repository this crate is built from: its `fixtures/` and its `target/`.
pub(crate) fn repository() -> &'static std::path::Path {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}
