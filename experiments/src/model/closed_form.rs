//! What a scenario's wall time should be on an ideal machine, from first principles.
//!
//! A request holds a server resource for its work time: a worker (blocking, CPU), the
//! one lock (lock), a blocking thread (offload), or nothing (async). At most
//! `k = min(client concurrency, server capacity)` requests progress at once, so N requests
//! take `ceil(N / k)` rounds of the work time. Mixed handlers hold a worker only for their
//! blocking part. Claims are measured against the discrete-event [`Model`](crate::model::Model);
//! this closed form is the independent check of it: for sequential, fan-out and
//! sync-over-async loads the two must agree exactly (a property in `tests/model.rs`).

use std::time::Duration;

use crate::vocab::ServerStrategy;
use perfshape::client::ClientStrategy;
use perfshape::runtime::PoolSettings;

/// The ideal wall time of `n` requests offered by `client` to `server` on `pool`, and
/// how it follows (e.g. `ceil(20/2) × 20 ms`).
pub fn ideal_wall(
    client: ClientStrategy,
    server: ServerStrategy,
    pool: PoolSettings,
    n: usize,
    work: Duration,
) -> (Duration, String) {
    let concurrency = client.concurrency(n).max(1);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    if let ServerStrategy::Mixed { block, wait } = server {
        // Blocking parts queue for the workers; waits overlap with everything.
        let k = concurrency.min(pool.workers);
        let rounds = n.div_ceil(k);
        return if concurrency <= pool.workers {
            (
                (block + wait) * rounds as u32,
                format!("ceil({n}/{k}) × ({} + {}) ms", ms(block), ms(wait)),
            )
        } else {
            (
                block * rounds as u32 + wait,
                format!("ceil({n}/{k}) × {} ms + {} ms", ms(block), ms(wait)),
            )
        };
    }
    let capacity = match server {
        ServerStrategy::Blocking | ServerStrategy::Cpu => pool.workers,
        ServerStrategy::Lock => 1,
        ServerStrategy::Offload => pool.max_blocking,
        _ => usize::MAX,
    };
    let k = concurrency.min(capacity);
    let rounds = n.div_ceil(k);
    let how = if rounds == 1 {
        format!("1 × {} ms", ms(work))
    } else if k == 1 {
        format!("{n} × {} ms", ms(work))
    } else {
        format!("ceil({n}/{k}) × {} ms", ms(work))
    };
    (work * rounds as u32, how)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS20: Duration = Duration::from_millis(20);

    fn pool(workers: usize, max_blocking: usize) -> PoolSettings {
        PoolSettings::new(workers, max_blocking).unwrap()
    }

    #[test]
    fn sequential_is_n_times_work_whatever_the_server() {
        for server in [
            ServerStrategy::Blocking,
            ServerStrategy::Async,
            ServerStrategy::Offload,
        ] {
            let (wall, how) =
                ideal_wall(ClientStrategy::Sequential, server, pool(4, 512), 10, MS20);
            assert_eq!(wall, MS20 * 10, "{server}");
            assert_eq!(how, "10 × 20 ms");
        }
    }

    #[test]
    fn blocking_fan_out_takes_rounds_of_the_pool() {
        let (wall, how) = ideal_wall(
            ClientStrategy::FanOut,
            ServerStrategy::Blocking,
            pool(2, 512),
            20,
            MS20,
        );
        assert_eq!(wall, MS20 * 10);
        assert_eq!(how, "ceil(20/2) × 20 ms");
    }

    #[test]
    fn async_fan_out_is_one_work_time() {
        let (wall, _) = ideal_wall(
            ClientStrategy::FanOut,
            ServerStrategy::Async,
            pool(1, 512),
            100,
            MS20,
        );
        assert_eq!(wall, MS20);
    }

    #[test]
    fn offload_is_capped_by_the_blocking_pool() {
        let (wall, _) = ideal_wall(
            ClientStrategy::FanOut,
            ServerStrategy::Offload,
            pool(2, 4),
            40,
            MS20,
        );
        assert_eq!(wall, MS20 * 10);
    }

    #[test]
    fn mixed_fan_out_queues_only_its_blocking_part() {
        let mixed = ServerStrategy::Mixed {
            block: Duration::from_millis(10),
            wait: MS20,
        };
        let (wall, _) = ideal_wall(ClientStrategy::FanOut, mixed, pool(2, 512), 30, MS20);
        assert_eq!(wall, Duration::from_millis(15 * 10 + 20));
    }

    #[test]
    fn sync_over_async_threads_cap_concurrency() {
        let client = ClientStrategy::SyncOverAsync { threads: 4 };
        let (wall, _) = ideal_wall(client, ServerStrategy::Async, pool(8, 512), 10, MS20);
        assert_eq!(wall, MS20 * 3);
    }
}
