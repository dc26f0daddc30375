//! The bounds perfshape puts on every setting, so that no typo can hang a run for hours or
//! ask the machine for a million threads. Each is named in the error a value beyond it gets.

use std::time::Duration;

/// The most worker threads a pool may have; more says nothing on a small machine.
pub const MAX_WORKERS: usize = 256;
/// The most blocking threads a pool may have (tokio's own default is 512).
pub const MAX_BLOCKING: usize = 4096;
/// tokio's default cap on blocking threads, used when none is given.
pub const DEFAULT_MAX_BLOCKING: usize = 512;
/// The accept queue a served target listens with: tokio's `TcpListener::bind` default,
/// room for a fan-out's new connections while a blocking server's workers sleep.
pub const ACCEPT_BACKLOG: u32 = 1024;

/// The longest work a request may ask for; anything above is refused (HTTP 400 on the
/// wire, an `Invalid` error in the library).
pub const MAX_WORK: Duration = Duration::from_secs(60);
/// The most logarithms one CPU request may ask for (a few seconds of one core).
pub const MAX_ITERATIONS: u64 = 1_000_000_000;

/// The most requests (or in-process waits) one load may plan.
pub const MAX_REQUESTS: usize = 100_000;
/// The most OS threads a sync-over-async client may start.
pub const MAX_CLIENT_THREADS: usize = 1024;
/// The most users a closed loop may have.
pub const MAX_USERS: usize = 10_000;
/// The longest closed-loop run, think time or ramp.
pub const MAX_LOOP_TIME: Duration = Duration::from_secs(600);
/// The highest open-loop rate, per second.
pub const MAX_RATE: f64 = 100_000.0;
/// The most HTTP clients a pooled lifecycle may build.
pub const MAX_POOLED_CLIENTS: usize = 1024;
/// The most tiny CPU-bound items one run may compute.
pub const MAX_ITEMS: u64 = 100_000_000;

/// The longest a served service's builder ([`Target::serve_with`](crate::Target::serve_with))
/// may run before it is named as hung: connecting a database pool and running migrations
/// take seconds, not minutes.
pub const BUILT_WITHIN: Duration = Duration::from_secs(60);
