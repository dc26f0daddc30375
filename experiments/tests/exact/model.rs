//! Properties of the model: pure and deterministic, so every property is exact (or, for
//! Little's law, within the edge effect of a finite run).

use perfshape_experiments::{model::Model, scenario::ServerStrategy};
use std::time::Duration;

use perfshape::{PoolSettings, client::ClientStrategy};
use perfshape_experiments::model::{Offered, ideal_wall};
use proptest::prelude::*;

use crate::ms;

fn pool(workers: usize, max_blocking: usize) -> PoolSettings {
    PoolSettings::new(workers, max_blocking).expect("valid pool")
}

fn wall(model: &Model) -> Duration {
    model.predict().expect("a valid model").wall
}

fn fan_out(server: ServerStrategy, p: PoolSettings, n: usize, work: Duration) -> Model {
    Model::of(server, p, work, ClientStrategy::FanOut, n)
}

fn any_simple_server() -> impl Strategy<Value = ServerStrategy> {
    prop_oneof![
        Just(ServerStrategy::Blocking),
        Just(ServerStrategy::Async),
        Just(ServerStrategy::Offload),
        Just(ServerStrategy::Cpu),
        Just(ServerStrategy::Lock),
    ]
}

fn any_client() -> impl Strategy<Value = ClientStrategy> {
    prop_oneof![
        Just(ClientStrategy::Sequential),
        Just(ClientStrategy::FanOut),
        (1usize..16).prop_map(|threads| ClientStrategy::SyncOverAsync { threads }),
    ]
}

proptest! {
    /// A sequential client takes N × work whatever the server and its pool.
    #[test]
    fn sequential_wall_is_n_times_work(
        server in any_simple_server(), w in 1usize..16, b in 1usize..64, n in 1usize..200, work in 1u64..100,
    ) {
        let model = Model::of(server, pool(w, b), ms(work), ClientStrategy::Sequential, n);
        prop_assert_eq!(wall(&model), ms(work) * n as u32);
    }

    /// A blocking server answers a fan-out in ceil(N/W) rounds, in ceil(N/W) waves.
    #[test]
    fn blocking_fan_out_takes_rounds_of_the_pool(w in 1usize..32, n in 1usize..300, work in 1u64..100) {
        let prediction = fan_out(ServerStrategy::Blocking, pool(w, 512), n, ms(work)).predict().unwrap();
        let rounds = n.div_ceil(w);
        prop_assert_eq!(prediction.wall, ms(work) * rounds as u32);
        prop_assert_eq!(prediction.waves, rounds);
    }

    /// An async server answers a fan-out in one work time, whatever W.
    #[test]
    fn async_fan_out_does_not_depend_on_workers(w in 1usize..32, n in 1usize..300, work in 1u64..100) {
        prop_assert_eq!(wall(&fan_out(ServerStrategy::Async, pool(w, 512), n, ms(work))), ms(work));
    }

    /// Offloading moves the cap from the workers to the blocking pool: ceil(N/B) rounds.
    #[test]
    fn offload_fan_out_takes_rounds_of_the_blocking_pool(w in 1usize..8, b in 1usize..64, n in 1usize..300, work in 1u64..100) {
        let expected = ms(work) * n.div_ceil(b) as u32;
        prop_assert_eq!(wall(&fan_out(ServerStrategy::Offload, pool(w, b), n, ms(work))), expected);
    }

    /// A lock held across the work serialises requests whatever the pool.
    #[test]
    fn a_lock_serialises_whatever_the_pool(w in 1usize..16, n in 1usize..100, work in 1u64..50) {
        prop_assert_eq!(wall(&fan_out(ServerStrategy::Lock, pool(w, 512), n, ms(work))), ms(work) * n as u32);
    }

    /// The simulation agrees with the closed form wherever the closed form is exact.
    #[test]
    fn the_simulation_agrees_with_the_closed_form(
        server in any_simple_server(), client in any_client(), w in 1usize..16, b in 1usize..32,
        n in 1usize..200, work in 1u64..100,
    ) {
        let model = Model::of(server, pool(w, b), ms(work), client, n);
        let (closed, _) = ideal_wall(client, server, pool(w, b), n, ms(work));
        prop_assert_eq!(wall(&model), closed);
    }

    /// More workers never make anything slower.
    #[test]
    fn wall_never_grows_with_more_workers(
        server in any_simple_server(), client in any_client(), w in 1usize..16, more in 1usize..16,
        n in 1usize..200, work in 1u64..100, block in 0u64..100,
    ) {
        for s in [server, ServerStrategy::Mixed { block: ms(block), wait: ms(work) }] {
            let before = wall(&Model::of(s, pool(w, 8), ms(work), client, n));
            let after = wall(&Model::of(s, pool(w + more, 8), ms(work), client, n));
            prop_assert!(after <= before, "{s}: {after:?} > {before:?}");
        }
    }

    /// A bigger blocking pool never makes anything slower.
    #[test]
    fn wall_never_grows_with_more_blocking_threads(
        server in any_simple_server(), client in any_client(), w in 1usize..8, b in 1usize..32,
        more in 1usize..32, n in 1usize..200, work in 1u64..100,
    ) {
        let before = wall(&Model::of(server, pool(w, b), ms(work), client, n));
        let after = wall(&Model::of(server, pool(w, b + more), ms(work), client, n));
        prop_assert!(after <= before);
    }

    /// A handler that blocks for part of its work lies between the async and the blocking
    /// one with the same total work.
    #[test]
    fn mixed_lies_between_async_and_blocking(
        w in 1usize..16, n in 1usize..200, block in 0u64..100, wait in 0u64..100,
    ) {
        let total = ms(block + wait);
        let mixed = ServerStrategy::Mixed { block: ms(block), wait: ms(wait) };
        let a = wall(&fan_out(ServerStrategy::Async, pool(w, 512), n, total));
        let m = wall(&fan_out(mixed, pool(w, 512), n, total));
        let b = wall(&fan_out(ServerStrategy::Blocking, pool(w, 512), n, total));
        prop_assert!(a <= m && m <= b, "async {a:?} ≤ mixed {m:?} ≤ blocking {b:?}");
    }

    /// A per-host connection cap c turns fan-out into rounds of min(c, W) on a blocking
    /// server, and of c on an async one: the cap is a queue.
    #[test]
    fn a_connection_cap_is_a_queue(w in 1usize..16, cap in 1usize..16, n in 1usize..200, work in 1u64..100) {
        let blocking = fan_out(ServerStrategy::Blocking, pool(w, 512), n, ms(work)).with_connection_cap(cap);
        prop_assert_eq!(wall(&blocking), ms(work) * n.div_ceil(cap.min(w)) as u32);
        let asynchronous = fan_out(ServerStrategy::Async, pool(w, 512), n, ms(work)).with_connection_cap(cap);
        prop_assert_eq!(wall(&asynchronous), ms(work) * n.div_ceil(cap) as u32);
    }

    /// A closed loop obeys Little's law: throughput × (mean latency + think) = users, up to
    /// the edge effect of starting and stopping: under 5 % when the run lasts 100 of a
    /// user's cycles even when all users queue behind one worker (users × (work + think)).
    #[test]
    fn a_closed_loop_obeys_littles_law(
        server in any_simple_server(), w in 1usize..8, users in 1usize..20,
        work in 5u64..50, think in 0u64..50,
    ) {
        let cycle = ms(work + think);
        let client = ClientStrategy::ClosedLoop {
            users,
            think: ms(think),
            ramp: Duration::ZERO,
            duration: cycle * 100 * users as u32,
        };
        // A closed loop is bounded by its duration; N only caps it, far above what it sends.
        let model = Model::of(server, pool(w, 4), ms(work), client, usize::MAX);
        let p = model.predict().unwrap();
        let in_system = p.throughput * (p.mean_latency + ms(think).as_secs_f64());
        prop_assert!((in_system / users as f64 - 1.0).abs() < 0.05, "{in_system} vs {users} users");
    }

    /// An open loop accounts for every intended request: sent = completed + dropped.
    #[test]
    fn an_open_loop_accounts_for_every_request(
        server in any_simple_server(), w in 1usize..8, rate in 10.0f64..2000.0,
        n in 1usize..400, max_in_flight in 1usize..50, work in 1u64..50,
    ) {
        let client = ClientStrategy::OpenLoop { rate, max_in_flight };
        let model = Model::of(server, pool(w, 4), ms(work), client, n);
        let p = model.predict().unwrap();
        prop_assert_eq!(p.sent, n);
        prop_assert_eq!(p.sent, p.completed + p.dropped);
    }

    /// A `/health` canary sent into a fan-out of W blocking requests waits for the rest of
    /// the work (every worker is blocked); into async or offloaded work it waits nothing.
    #[test]
    fn a_canary_waits_only_for_blocked_workers(w in 1usize..8, work in 2u64..200, after_pct in 1u64..99) {
        let after = ms(work) * after_pct as u32 / 100;
        let canary = |server| fan_out(server, pool(w, 512), w, ms(work)).with_canary(after).predict().unwrap().canary_latency;
        prop_assert_eq!(canary(ServerStrategy::Blocking), Some(ms(work) - after));
        prop_assert_eq!(canary(ServerStrategy::Async), Some(Duration::ZERO));
        prop_assert_eq!(canary(ServerStrategy::Offload), Some(Duration::ZERO));
    }

    /// The model is a pure function: the same inputs give the same prediction.
    #[test]
    fn predictions_are_deterministic(
        server in any_simple_server(), client in any_client(), w in 1usize..8, n in 1usize..100, work in 1u64..50,
    ) {
        let model = Model::of(server, pool(w, 4), ms(work), client, n);
        prop_assert_eq!(model.predict().unwrap(), model.predict().unwrap());
    }
}

#[test]
fn the_description_is_stable() {
    let model = fan_out(ServerStrategy::Blocking, pool(2, 512), 20, ms(20)).with_connection_cap(2);
    assert_eq!(
        model.to_string(),
        "model(fan-out of 20 → blocking, W=2 B=512, 2 connections per host, 20 ms)"
    );
}

#[test]
fn absurd_loads_are_refused_not_simulated() {
    let model = Model {
        server: ServerStrategy::Async,
        pool: pool(1, 1),
        work: ms(1),
        connection_cap: None,
        canary: None,
        overhead: Duration::ZERO,
        offered: Offered::OpenLoop {
            rate: f64::NAN,
            n: 10,
            max_in_flight: 1,
        },
    };
    assert_eq!(
        model.predict().unwrap_err().to_string(),
        "invalid rate: NaN (allowed: above 0 and at most 1e9 per second)"
    );
    let model = Model {
        offered: Offered::Concurrent {
            n: 0,
            concurrency: 1,
        },
        ..model
    };
    assert_eq!(
        model.predict().unwrap_err().to_string(),
        "invalid n: 0 (allowed: 1 to 10000000)"
    );
}

/// The per-request overhead is served one request at a time, half before the handler and
/// half after: a fan-out of 100 async requests takes 100 × overhead / 2 + work +
/// overhead / 2 (the answers are turned over while later requests wait); a sequential
/// client pays all of it on every request; a blocking pool overlaps it with other
/// workers' work.
#[test]
fn a_per_request_overhead_is_served_around_the_handler() -> perfshape_experiments::Result {
    let us = Duration::from_micros;
    let wall = |server, client, n, workers| -> perfshape_experiments::Result<Duration> {
        Ok(Model::of(server, pool(workers, 512), ms(10), client, n)
            .with_overhead(us(50))
            .predict()?
            .wall)
    };
    use ClientStrategy::{FanOut, Sequential};
    use ServerStrategy::{Async, Blocking};
    assert_eq!(wall(Async, FanOut, 100, 1)?, us(100 * 25) + ms(10) + us(25));
    assert_eq!(wall(Async, Sequential, 10, 1)?, (us(50) + ms(10)) * 10);
    // 4 waves of 2 on 2 workers: the second request's way in and the last one's way out
    // are not overlapped with work.
    assert_eq!(wall(Blocking, FanOut, 8, 2)?, us(50) + ms(40) + us(25));
    assert!(
        Model::of(Async, pool(1, 512), ms(10), FanOut, 100)
            .with_overhead(us(50))
            .to_string()
            .ends_with("10 ms + 50 µs per request outside the handler)")
    );
    Ok(())
}
