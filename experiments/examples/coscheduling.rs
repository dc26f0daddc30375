//! Which tokio worker serves each of a fan-out of simultaneous blocking requests, under
//! tokio's default scheduler, with the LIFO slot disabled, and with eager driver hand-off.
//! A measurement for `docs/coscheduling.md`, not a timed test.
//!
//! `cargo run --release --example coscheduling [ROUNDS [N]]` (default 20 rounds a case;
//! N keeps only the fan-outs of N requests)
//!
//! Per case and scheduler: how many rounds took more waves than the model, how many
//! distinct workers served a round, the wall ÷ the model's, and how the workers' busy time
//! was spread (tokio's runtime metrics over the round: the busiest worker's share of the
//! total, 1/W when even), and, in each round that took extra waves, how many workers
//! slept through it (no task run, no park: never woken).

use perfshape_experiments::load::Loads;
use perfshape_experiments::scenario::ServerStrategy;
use std::collections::BTreeSet;
use std::time::Duration;

use perfshape::{PoolSettings, client::ClientStrategy, runtime::Scheduler};

/// A fan-out of `n` blocking requests of `work_ms` on `workers` workers.
struct Case {
    n: usize,
    workers: usize,
    work_ms: u64,
    rounds: usize,
}

/// One round's figures.
struct Round {
    waves: usize,
    model_waves: usize,
    distinct: usize,
    wall_over_model: f64,
    busiest_share: f64,
    /// Workers that neither ran a task nor parked again during the round: asleep
    /// throughout.
    asleep: usize,
}

fn main() -> perfshape_experiments::Result {
    let rounds: usize = match std::env::args().nth(1) {
        Some(arg) => arg.parse().map_err(|_| perfshape::Error::Invalid {
            field: "ROUNDS",
            value: arg.clone(),
            allowed: "a whole number of rounds".into(),
        })?,
        None => 20,
    };
    let cases = [
        Case {
            n: 2,
            workers: 2,
            work_ms: 20,
            rounds,
        },
        Case {
            n: 4,
            workers: 4,
            work_ms: 20,
            rounds,
        },
        Case {
            n: 8,
            workers: 8,
            work_ms: 20,
            rounds,
        },
        Case {
            n: 20,
            workers: 2,
            work_ms: 20,
            rounds,
        },
        Case {
            n: 1000,
            workers: 8,
            work_ms: 10,
            rounds: rounds.div_ceil(5),
        },
    ];
    println!(
        "| fan-out | scheduler | rounds | extra waves in | waves (model) | distinct workers | wall ÷ model | busiest worker's share | asleep in rounds with extra waves |"
    );
    println!("|---|---|---:|---:|---|---|---:|---|---|");
    // A second argument keeps only the cases whose fan-out size it names ("1000").
    let only: Option<usize> = std::env::args().nth(2).and_then(|a| a.parse().ok());
    for case in cases.iter().filter(|c| only.is_none_or(|n| c.n == n)) {
        for scheduler in Scheduler::ALL {
            if !scheduler.available() {
                eprintln!("{scheduler}: unavailable in this build (needs --cfg tokio_unstable)");
                continue;
            }
            let rounds = measure(case, scheduler)?;
            print_row(case, scheduler, &rounds);
        }
    }
    Ok(())
}

fn measure(case: &Case, scheduler: Scheduler) -> perfshape_experiments::Result<Vec<Round>> {
    let settings = PoolSettings::workers(case.workers)?.with_scheduler(scheduler)?;
    let target = perfshape_experiments::demo::target(settings)?;
    let work = Duration::from_millis(case.work_ms);
    let load = target.load(
        target
            .scenario()
            .server(ServerStrategy::Blocking)
            .client(ClientStrategy::FanOut)
            .requests(case.n)
            .work(work),
    )?;
    let pool = target
        .served()
        .expect("a demo target is served here")
        .pool();
    let model_wall = load.prediction().wall.as_secs_f64();
    let model_waves = load.prediction().waves;
    // One unrecorded round opens the connections and threads.
    load.run()?;
    let mut rounds = Vec::new();
    for _ in 0..case.rounds {
        let before = pool.settled_activity(Duration::from_secs(1));
        let run = load.run()?;
        let window = pool.settled_activity(Duration::from_secs(1)).since(&before);
        let summary = run.summary(work / 2);
        let distinct: BTreeSet<&str> = run
            .records
            .iter()
            .filter_map(|r| r.served_by.as_deref())
            .collect();
        let busy: Vec<f64> = window
            .workers
            .iter()
            .map(|w| w.busy.as_secs_f64())
            .collect();
        let total: f64 = busy.iter().sum();
        rounds.push(Round {
            waves: summary.waves,
            model_waves,
            distinct: distinct.len(),
            wall_over_model: run.wall.as_secs_f64() / model_wall,
            busiest_share: busy.iter().copied().fold(0.0, f64::max) / total.max(1e-9),
            asleep: window
                .workers
                .iter()
                .filter(|w| w.busy < Duration::from_millis(1) && w.parks == 0)
                .count(),
        });
    }
    Ok(rounds)
}

fn print_row(case: &Case, scheduler: Scheduler, rounds: &[Round]) {
    let extra = rounds.iter().filter(|r| r.waves > r.model_waves).count();
    let range = |f: &dyn Fn(&Round) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        v.sort_by(f64::total_cmp);
        (v[0], v[v.len() / 2], v[v.len() - 1])
    };
    let (w_lo, w_med, w_hi) = range(&|r| r.waves as f64);
    let (d_lo, d_med, d_hi) = range(&|r| r.distinct as f64);
    let (_, ratio, ratio_hi) = range(&|r| r.wall_over_model);
    let (s_lo, s_med, s_hi) = range(&|r| r.busiest_share);
    let asleep: Vec<String> = rounds
        .iter()
        .filter(|r| r.waves > r.model_waves)
        .map(|r| r.asleep.to_string())
        .collect();
    println!(
        "| {} × {} ms on {} | {scheduler} | {} | {extra} | {w_med} ({}; {w_lo}–{w_hi}) | {d_med} ({d_lo}–{d_hi}) of {} | {ratio:.2} (max {ratio_hi:.2}) | {s_med:.2} ({s_lo:.2}–{s_hi:.2}; even {:.2}) | {} |",
        case.n,
        case.work_ms,
        case.workers,
        rounds.len(),
        rounds[0].model_waves,
        case.workers,
        1.0 / case.workers as f64,
        if asleep.is_empty() {
            "—".to_string()
        } else {
            asleep.join(" ")
        },
    );
}
