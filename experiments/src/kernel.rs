//! The unit of CPU work every CPU-bound strategy does: base-10 logarithms, as seed 003's
//! benchmark computed. The demo server's `/cpu` handler and the in-process CPU strategies
//! both call these, so they measure the same work.

use std::time::{Duration, Instant};

/// Computes `iterations` base-10 logarithms and returns their sum, so the optimiser
/// cannot drop the work.
pub(crate) fn compute_iterations(iterations: u64) -> f64 {
    (1..=iterations)
        .map(|i| std::hint::black_box(i as f64).log10())
        .sum()
}

/// Computes base-10 logarithms until `work` has elapsed, and returns how many it
/// computed. The clock is read every 1,024 logarithms, so the overshoot is microseconds.
pub(crate) fn compute_for(work: Duration) -> u64 {
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

/// One tiny CPU-bound item: the base-10 logarithm of `i + 1`, in integer micro-units, so
/// that every strategy must return the same sum.
pub(crate) fn item(i: u64) -> u64 {
    (std::hint::black_box((i + 1) as f64).log10() * 1e6) as u64
}
