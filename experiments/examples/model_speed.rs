//! How fast the model simulates large scenarios (a benchmark, not a timed test).
//!
//! `cargo run --release --example model_speed`

use perfshape_experiments::{model::Model, scenario::ServerStrategy};
use std::time::{Duration, Instant};

use perfshape::{PoolSettings, client::ClientStrategy};
use perfshape_experiments::model::Offered;

fn main() -> perfshape_experiments::Result {
    let ms = Duration::from_millis;
    let pool = PoolSettings::new(8, 64)?;
    let cases = [
        (
            "fan-out of 100,000 → blocking",
            Model::of(
                ServerStrategy::Blocking,
                pool,
                ms(20),
                ClientStrategy::FanOut,
                100_000,
            ),
        ),
        (
            "fan-out of 100,000 → async",
            Model::of(
                ServerStrategy::Async,
                pool,
                ms(20),
                ClientStrategy::FanOut,
                100_000,
            ),
        ),
        (
            "fan-out of 100,000 → offload",
            Model::of(
                ServerStrategy::Offload,
                pool,
                ms(20),
                ClientStrategy::FanOut,
                100_000,
            ),
        ),
        (
            "closed loop, 300 users, ≈100,000 requests → mixed",
            Model {
                server: ServerStrategy::Mixed {
                    block: ms(1),
                    wait: ms(2),
                },
                pool,
                work: ms(3),
                connection_cap: None,
                canary: None,
                overhead: Duration::ZERO,
                offered: Offered::ClosedLoop {
                    users: 300,
                    think: ms(1),
                    ramp: ms(100),
                    duration: ms(12_500),
                },
            },
        ),
        (
            "open loop of 100,000 at 5,000/s → blocking",
            Model {
                server: ServerStrategy::Blocking,
                pool,
                work: ms(2),
                connection_cap: None,
                canary: None,
                overhead: Duration::ZERO,
                offered: Offered::OpenLoop {
                    rate: 5_000.0,
                    n: 100_000,
                    max_in_flight: 64,
                },
            },
        ),
    ];
    for (name, model) in cases {
        let best = (0..5)
            .map(|_| {
                let start = Instant::now();
                let prediction = model.predict().map(|p| (p.sent, p.completed));
                (start.elapsed(), prediction)
            })
            .min_by_key(|(elapsed, _)| *elapsed)
            .expect("five runs");
        let (sent, completed) = best.1?;
        println!(
            "{name:<52} {sent:>7} sent, {completed:>7} completed in {:>6.1} ms (best of 5)",
            best.0.as_secs_f64() * 1e3
        );
    }
    Ok(())
}
