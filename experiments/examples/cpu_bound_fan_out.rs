//! Why one run of seed 002's HTTP AIO row (an async fan-out of 1000 × 10 ms on 8 workers)
//! is noisy, and how many rounds its table row needs. A measurement for
//! `docs/experiments.md`, not a timed test.
//!
//! `cargo run --release --example cpu_bound_fan_out [PAIRS [N]]` (default 50 pairs of
//! N = 1000)
//!
//! Each pair runs the fan-out with no work (the row's calibration) and then with 10 ms,
//! on one warmed target, and prints both walls, the process's CPU time over each (user +
//! system, `getrusage`), the host's steal, and a fixed spin on two threads timed right
//! after: a CPU-bound load uses both cores throughout (CPU ≈ 2 × wall), and the spin
//! says whether the machine itself ran slower at that moment. At the end: the ratio's
//! spread, and how often the median of k ratios, resampled from the pairs, leaves the
//! tables' band [0.9, 1.3].

use perfshape_experiments::load::Loads;
use perfshape_experiments::scenario::ServerStrategy;
use std::time::{Duration, Instant};

use perfshape::{PoolSettings, client::ClientStrategy, load::StealReading, runtime::Scheduler};

/// The tables' band ("agrees").
const BAND: (f64, f64) = (0.9, 1.3);
/// Resamples per median size.
const TRIALS: usize = 100_000;

fn main() -> perfshape_experiments::Result<()> {
    let mut args = std::env::args().skip(1);
    let pairs: usize = args.next().map_or(50, |s| s.parse().expect("PAIRS"));
    let n: usize = args.next().map_or(1000, |s| s.parse().expect("N"));
    let pool = PoolSettings::workers(8)?.with_scheduler(Scheduler::one_wave())?;
    let target = perfshape_experiments::demo::target(pool)?;
    let fan_out = |ms| {
        target
            .scenario()
            .server(ServerStrategy::Async)
            .client(ClientStrategy::FanOut)
            .requests(n)
            .work(Duration::from_millis(ms))
    };
    let idle = target.load(fan_out(0))?;
    let loaded = target.load(fan_out(10))?;
    target.load(fan_out(1))?.run()?; // opens the connections and threads
    let mut ratios = Vec::with_capacity(pairs);
    let (mut cpus, mut spins) = (Vec::new(), Vec::new());
    println!("idle wall (CPU) | 10 ms wall (CPU) | ratio | steal | spin");
    for _ in 0..pairs {
        let (steal, cpu) = (StealReading::now(), process_cpu());
        let z = idle.run()?.wall;
        let cpu_idle = process_cpu() - cpu;
        let cpu = process_cpu();
        let w = loaded.run()?.wall;
        let cpu_loaded = process_cpu() - cpu;
        let stolen = match (StealReading::now(), steal) {
            (Some(now), Some(then)) => now.since(&then),
            _ => Duration::ZERO,
        };
        let spin = spin();
        let ratio = w.as_secs_f64() / z.as_secs_f64();
        println!(
            "{:5.1} ms ({:5.1}) | {:5.1} ms ({:5.1}) | {ratio:.2} | {:3} ms | {:4.1} ms",
            ms(z),
            ms(cpu_idle),
            ms(w),
            ms(cpu_loaded),
            stolen.as_millis(),
            ms(spin),
        );
        ratios.push(ratio);
        cpus.extend([cpu_idle, cpu_loaded]);
        spins.push(spin);
    }
    let outside = |r: f64| r < BAND.0 || r > BAND.1;
    println!(
        "\n{pairs} pairs: ratio {:.2}–{:.2}, outside [{}, {}] in {:.0} %; CPU a fan-out {:.0}–{:.0} ms; spin {:.1}–{:.1} ms",
        min(&ratios),
        max(&ratios),
        BAND.0,
        BAND.1,
        100.0 * ratios.iter().filter(|&&r| outside(r)).count() as f64 / pairs as f64,
        ms(*cpus.iter().min().expect("a pair")),
        ms(*cpus.iter().max().expect("a pair")),
        ms(*spins.iter().min().expect("a pair")),
        ms(*spins.iter().max().expect("a pair")),
    );
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64;
    for k in [1, 3, 5, 7, 9, 11] {
        let mut out = 0;
        let mut sample = vec![0.0; k];
        for _ in 0..TRIALS {
            for s in &mut sample {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                *s = ratios[(seed % ratios.len() as u64) as usize];
            }
            sample.sort_by(f64::total_cmp);
            out += usize::from(outside(sample[k / 2]));
        }
        println!(
            "median of {k:2}: outside the band in {:.2} % of {TRIALS} resamples",
            100.0 * out as f64 / TRIALS as f64
        );
    }
    Ok(())
}

/// Two threads of a fixed integer loop, timed: the machine's speed at this moment.
fn spin() -> Duration {
    let start = Instant::now();
    let threads: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(|| {
                let mut x = 1_u64;
                for i in 0..20_000_000_u64 {
                    x = x
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(i ^ (x >> 17));
                }
                std::hint::black_box(x)
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("the spin does not panic");
    }
    start.elapsed()
}

/// This process's CPU time so far, user + system.
#[cfg(unix)]
fn process_cpu() -> Duration {
    // SAFETY: `getrusage` fills the struct it is given and reads nothing else.
    let usage = unsafe {
        let mut usage = std::mem::zeroed::<libc::rusage>();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

/// Not read off unix: the CPU column reads zero.
#[cfg(not(unix))]
fn process_cpu() -> Duration {
    Duration::ZERO
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn min(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}
