//! # perfshape — the performance *shape* of async vs blocking code, as tested facts
//!
//! Five well-known experiments (ASP.NET, C#) showed that async only pays when client and
//! server are both async, that blocking handlers starve a thread pool, that offloading
//! blocking work only moves the cap, that a per-host connection cap turns an async client
//! back into a queue, and that one task per tiny CPU item is far slower than a loop.
//! perfshape reproduces them with tokio, axum and reqwest as **claims** — ratios measured
//! side by side in one run, inside tolerance bands, with a three-way verdict — and lets
//! you put the same claims on **your own service**:
//!
//! ```
//! use axum::{Router, routing::get};
//! use perfshape::{PoolSettings, Target, Verdict};
//!
//! // Your router; perfshape serves it on one worker of its own.
//! let app = Router::new()
//!     .route("/health", get(|| async { "ok" }))
//!     .route("/report", get(|| async {
//!         std::thread::sleep(std::time::Duration::from_millis(20)); // oops: blocks the worker
//!         "report"
//!     }));
//! let target = Target::serve(PoolSettings::workers(1)?, app)?;
//! let checked = target.get("/report").does_not_block_its_worker().check()?;
//! assert_eq!(checked.verdict(), Verdict::Broken);
//! // "waits ≈20 ms of each 21 ms request while holding its worker (97.5 %, at most 5 %) …"
//! # Ok::<(), perfshape::Error>(())
//! ```
//!
//! What a service team writes, all at the crate's root:
//! - a [`Target`] is what is measured: your `axum::Router` on a constrained pool
//!   ([`PoolSettings`]: workers, blocking cap; [`TargetBuilder`] for the load client's
//!   settings), or a running service's URL — a cheap handle, like `reqwest::Client`;
//! - an [`Endpoint`] is a [`Request`] on a target (method, path, headers, body, optionally
//!   varied per request), with the ready-made claims ([`claims`]: does not block its
//!   worker, keeps answering, concurrency limit, faster than); a [`Mix`] sends several by
//!   weight and names the route that blocks. On a router perfshape serves, every poll of
//!   every response is timed and split into computing, waiting and preempted by the worker
//!   thread's own clocks, so a 50 µs handler that never waits holds and a 2 ms sync call on
//!   the worker breaks;
//! - a [`Downstream`] puts the test's database at production's distance;
//! - a [`Claim`] checks to a [`Checked`] claim with its [`Verdict`]; [`assert_shape!`]
//!   snapshots its shape and applies the gate; the [`Error`] names what is wrong.
//!
//! The experiments' vocabulary has modules of its own: a [`scenario::Scenario`] is strategy
//! × pools × load; on perfshape's demo service it becomes a [`load::Load`] whose measures
//! expect what the [`model::Model`] predicts; a [`client::LoadClient`] offers a load and
//! returns a [`run::Run`] (one record per request, `sent == ok + failed`) and its
//! [`summary::Summary`]; a custom claim's sides are [`claim::Measure`]s; two builds are
//! compared with a [`compare::Comparison`].
//!
//! Nothing here asserts an absolute time: every timing claim is a ratio measured in one
//! run, and a machine too noisy to tell gets [`Verdict::Inconclusive`], not a false failure.
//!
//! Layers, bottom to top (nothing reaches up; `scripts/import-circles.py` checks it): the
//! vocabulary (strategies, lifecycles, pool settings, phases, the wire format) and what a
//! claim decided, as data (its band, verdict and report, which the error type's gate
//! failure carries) → [`error`] → [`pool`], [`server`], [`inproc`] → [`run`] and
//! [`summary`] → [`client`] → [`usage`] → [`model`] → [`claim`] → [`Target`] and its
//! [`TargetBuilder`] → [`scenario`], [`load`], [`endpoint`], [`mix`] (each adding the
//! `Target` methods that make it), [`probe`] → the ready-made [`claims`] and [`compare`] →
//! `experiment`, `report` and `external` (a fixture's rows on Locust or k6, judged from
//! their statistics) → the `perfshape` CLI.
//!
//! Every builder reads as reqwest's: a setter never fails, and what it refuses is named
//! where the chain ends — a claim's [`check`](Claim::check), an endpoint's first request, a
//! [`TargetBuilder`]'s constructor — before anything is sent.
#![warn(missing_docs)]

#[cfg(feature = "insta")]
mod assert;
mod blocked_call;
mod build;
#[cfg(feature = "experiments")]
pub mod catalog;
pub mod claim;
pub mod claims;
pub mod client;
pub mod compare;
pub mod cpu_quota;
mod cut_short;
pub mod downstream;
pub mod endpoint;
pub mod error;
mod evidence;
#[cfg(feature = "experiments")]
pub mod experiment;
#[cfg(feature = "experiments")]
pub mod external;
mod fd_limit;
pub mod inproc;
mod kernel;
pub mod limits;
pub mod load;
mod local_downstream;
pub mod mix;
pub mod model;
mod outcome;
mod platform;
pub mod pool;
pub mod probe;
mod record;
#[cfg(feature = "experiments")]
pub mod report;
pub mod run;
pub mod scenario;
pub mod server;
mod service_process;
pub mod summary;
mod target;
mod target_builder;
mod thread_clock;
pub mod usage;
mod vocab;

pub use claim::{Checked, Claim, Verdict};
pub use client::Request;
pub use downstream::Downstream;
pub use endpoint::Endpoint;
pub use error::{Error, Result};
pub use mix::Mix;
pub use pool::PoolSettings;
pub use server::Shutdown;
pub use target::Target;
pub use target_builder::TargetBuilder;

#[cfg(feature = "insta")]
#[doc(hidden)]
pub use insta as __insta;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
