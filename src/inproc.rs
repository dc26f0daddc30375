//! Work done in-process, without HTTP. For now: the real computation behind the `Cpu`
//! server strategy.

use std::time::{Duration, Instant};

/// Computes `iterations` base-10 logarithms (seed 003's unit of work) and returns their
/// sum, so the optimiser cannot drop the work.
pub fn compute_iterations(iterations: u64) -> f64 {
    (1..=iterations)
        .map(|i| std::hint::black_box(i as f64).log10())
        .sum()
}

/// Computes base-10 logarithms until `work` has elapsed, and
/// returns how many it computed. The clock is read every 1,024 logarithms, so the
/// overshoot is microseconds.
pub fn compute_for(work: Duration) -> u64 {
    let start = Instant::now();
    let mut iterations: u64 = 0;
    let mut sink = 0.0_f64;
    loop {
        for _ in 0..1024 {
            iterations += 1;
            sink += std::hint::black_box(iterations as f64).log10();
        }
        if start.elapsed() >= work {
            break;
        }
    }
    std::hint::black_box(sink);
    iterations
}
