//! # perfshape — does your async service block its workers? A tested fact, in CI
//!
//! Serve your own `axum::Router` on a pool of perfshape's, watch it while your functional
//! tests send their requests, and every route they called is decided on what the kernel
//! saw its worker do — asleep in a call, computing past a poll budget — with no load and no
//! timing: **holds**, **broken** (naming the call and your line) or **inconclusive**
//! (saying why, and what would tell).
//!
//! ```
//! use axum::{Router, routing::get};
//! use perfshape::{PoolSettings, Target, Verdict};
//!
//! #[tokio::main] // #[tokio::test], in a test
//! async fn main() -> perfshape::Result {
//!     let app = Router::new()
//!         .route("/health", get(|| async { "ok" }))
//!         .route("/report", get(|| async {
//!             std::thread::sleep(std::time::Duration::from_millis(5)); // oops: blocks the worker
//!             "report"
//!         }));
//!     let target = Target::serve(PoolSettings::workers(1)?, app)?; // your router, served
//!     let watch = target.watch()?;
//!     let client = reqwest::Client::new(); // the test's own requests, as it sends them
//!     for path in ["/health", "/report", "/report"] {
//!         let answered = client.get(target.url_of(path)?).send().await.expect("an answer");
//!         assert_eq!(answered.status(), 200);
//!     }
//!     let checked = watch.nothing_blocked()?; // in a test: `watch.nothing_blocked()?.gate()?`
//!     # if checked.report().unread().is_some() { return Ok(()); } // off Linux: not read here
//!     assert_eq!(checked.verdict(), Verdict::Broken);
//!     // broken: "no route the test called blocks its worker" — GET /report blocked in
//!     // clock_nanosleep(): a sleep, called from …
//!     Ok(())
//! }
//! ```
//!
//! Installed once in a test helper ([`Watch::gate_on_drop`], [`WatchGuard`]), the watch
//! decides at the end of every test that calls the helper, with no line in the test; a
//! blocking call the team accepts is allowed by name ([`Allow`]). For what only a load
//! shows — "/health keeps answering while /report runs", a pool's size, old build against
//! new — a claim measures side by side in one run, and [`assert_shape!`] snapshots its
//! shape (with insta) and gates it:
//! `assert_shape!(target.get("/report").does_not_block_its_worker().check()?)`.
//!
//! What a service team writes is at the crate's root:
//! - a [`Target`] is what is measured: your router on a constrained pool ([`PoolSettings`]:
//!   workers, blocking cap), built on that pool ([`Target::serve_with`]) or started as its
//!   `main` starts it ([`Target::launch`]), or a running service's URL; a cheap handle,
//!   like `reqwest::Client` ([`TargetBuilder`] for the load client's settings);
//! - an [`Endpoint`] is a [`Request`] on a target (method, path, headers, a JSON or form
//!   body, varied per request), with the ready-made [`claims`]: does not block its worker,
//!   keeps answering during another route, concurrency limit, faster than another build; a
//!   [`Mix`] sends several routes by weight and names the one that blocks;
//! - a [`Watch`] records what a served target serves while a test's own requests reach it
//!   (a [`WatchLayer`] on a router a test calls in its own process), and a [`WatchGuard`]
//!   decides it when a test's app is dropped; an [`Allow`] names a hold the team accepts;
//! - a [`Downstream`] puts the test's database at production's distance;
//! - a [`Claim`] checks to a [`Checked`] claim with its [`Verdict`]; the [`Error`] names
//!   what is wrong.
//!
//! On a router perfshape serves, every poll of every response is timed and split into
//! computing, waiting and preempted by the worker thread's own clocks, so a 50 µs handler
//! that never waits holds and a 2 ms sync call on the worker breaks. Nothing asserts an
//! absolute time: every timing claim is a ratio measured in one run, and a machine too noisy
//! to tell gets [`Verdict::Inconclusive`], not a false failure.
//!
//! The modules hold what a team reaches for less often: [`claim`] (a claim of your own,
//! its measures, band and decision rule), [`claims`] (the ready-made claims' types and a
//! comparison of two builds), [`client`] (the load client's strategies and lifecycles),
//! [`load`] (what a load measured: one record per request, `sent == ok + failed`), [`probe`]
//! (the pool behind any URL) and [`runtime`] (the pool and server perfshape runs a service
//! on, and the downstream proxy).
//!
//! Every builder reads as reqwest's: a setter never fails, and what it refuses is named
//! where the chain ends — a claim's [`check`](Claim::check), an endpoint's first request, a
//! [`TargetBuilder`]'s constructor — before anything is sent.
//!
//! # Features
//! - `insta` (default): [`assert_shape!`] and [`assert_shapes!`], snapshotting with insta.
//! - `https`: `https://` targets (rustls with ring).
//! - `grpc`: gRPC unary calls (`Request::grpc`, `Target::grpc`), over HTTP/2; a served router answers
//!   HTTP/2 too, as a tonic server's routes need.
//!
//! The five experiments perfshape reproduces (ASP.NET's, in Rust) are the crate
//! `perfshape-experiments` beside this one, and the `perfshape` command runs them.
#![warn(missing_docs)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[doc(hidden)]
pub mod __support;
#[cfg(feature = "insta")]
mod assert;
mod blocked_call;
mod build;
pub mod claim;
pub mod claims;
pub mod client;
mod compare;
mod cpu_quota;
mod cut_short;
mod downstream;
mod endpoint;
mod error;
mod evidence;
mod fd_limit;
mod held;
mod limits;
mod local_downstream;
mod local_traffic;
mod mix;
mod outcome;
#[cfg(linux_reads)]
mod own_sockets;
mod platform;
mod pool;
pub mod probe;
mod record;
mod run;
mod server;
mod service_process;
mod stack;
mod summary;
mod target;
mod target_builder;
mod thread_clock;
mod usage;
mod vocab;
mod watch;

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
pub use vocab::Allow;
pub use watch::{Watch, WatchGuard, WatchLayer, WatchService};

/// What a load measured: one record per request (`sent == ok + failed`, always), the
/// load's figures, and what the machine and both pools were doing meanwhile.
pub mod load {
    pub use crate::run::{Connection, CutShort, FailureKind, Outcome, RequestRecord, Run};
    pub use crate::summary::{Latency, Summary, count_waves};
    pub use crate::usage::{CpuReading, OWN_SHARE, SATURATED, StealReading, Usage, WAITING};
}

/// Where perfshape runs a service: the constrained [`Pool`](runtime::Pool), the
/// [`Server`](runtime::Server) on it with the headers it stamps on every response, the
/// cgroup's CPU quota, the bounds on every setting, and the [`Downstream`] proxy.
pub mod runtime {
    pub use crate::cpu_quota::{CpuQuota, QuotaReading, cpus_in_words};
    pub use crate::downstream::{Carried, MAX_CONNECTIONS, MAX_LATENCY, Proxy};
    pub use crate::limits::*;
    pub use crate::pool::{Activity, Pool, PoolSettings, Scheduler, Window, WorkerActivity};
    pub use crate::server::{
        HELD, Held, PEER, RUNTIME, RuntimeFigures, SEQ, SERVED_BY, Server, Service, Shutdown, Split,
    };
}
#[cfg(feature = "insta")]
#[doc(hidden)]
pub use assert::snapshot as __snapshot;
#[cfg(feature = "insta")]
#[doc(hidden)]
pub use insta as __insta;

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
