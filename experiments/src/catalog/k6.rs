//! Seed 004's claims judged from real k6 runs: the exported script ([`k6_script`]) run by
//! k6 against perfshape's demo service on the fixture's pool — by one k6 process, and split
//! between two with `--execution-segment`, as k6-operator splits a test between its pods,
//! the two summaries added up by the judge.
//!
//! [`k6_script`]: crate::external::k6_script

use std::path::PathBuf;
use std::time::Duration;

use super::offered::{
    CONTROL, against_demo, fixture_pool, seed004, seed004_judged, seed004_with_control, shapes,
};
use super::{Entry, Setup, Shapes};
use crate::error::{Error, Result};
use crate::external::{Judge, K6_MIN_DURATION, K6Run, Schedule};
use perfshape::claim::artifact_dir;

/// This module's entries.
pub const ENTRIES: &[Entry] = &[
    Entry {
        name: "k6::seed004_from_k6",
        control: CONTROL,
        run: seed004_from_k6,
    },
    Entry {
        name: "k6::seed004_split_between_two_runners",
        control: "only the first runner's summary judged, half of every stage's users, where the judge must add up both",
        run: seed004_split_between_two_runners,
    },
];

/// Each closed loop's duration: k6's least (a `constant-vus` scenario of less is refused),
/// ~15 cycles of the slowest row's 62 ms.
const LOOP: Duration = K6_MIN_DURATION;

/// The throughput ordering async > mixed > offload > blocking, k6 keeping each row's 32
/// users in the system, and each row within [0.75, 1.25] of the model, from one k6 run
/// (about 17 s). The control, as Locust's: the same run read wrongly — each row's
/// statistics on another row for the throughput claims, users claimed to think 400 ms
/// where they thought 2 ms for Little's law.
pub fn seed004_from_k6(setup: Setup) -> Result<Shapes> {
    seed004_judged(setup, LOOP, run_k6)
}

/// One k6 process offering `schedule` to the demo service on `pool`.
fn run_k6(
    pool: perfshape::PoolSettings,
    schedule: &Schedule,
    label: &str,
) -> Result<crate::external::EngineStats> {
    against_demo(pool, |host| K6Run::new(host, 1, dir(label))?.run(schedule))
}

/// Little's law per row and each row against the model, from one k6 run split between two
/// k6 processes (`--execution-segment 0:1/2` and `1/2:1`), their summaries added up: each
/// runner offered half of every stage's 32 users, and only together are they the load.
/// The control judges the first runner's summary alone: 16 users where 32 are claimed, so
/// every claim reads ≈ ½ and breaks — the judge must add the runners up.
pub fn seed004_split_between_two_runners(setup: Setup) -> Result<Shapes> {
    let schedule = Schedule::new(&seed004(LOOP)?, 3)?;
    let each = split_run(&schedule, setup.pick("split", "half"))?;
    match setup {
        Setup::Claimed => split_judged(&schedule, crate::external::EngineStats::added_up(each)?),
        Setup::Control => split_judged(&schedule, first_runner(each)?),
    }
}

/// Both entries' claims and their controls from one k6 run split between two runners (the
/// engines' test): `[(seed004_from_k6, its control), (seed004_split_between_two_runners,
/// its control)]`. A single k6 process is the split of one ([`K6Run::run`] adds up
/// [`K6Run::run_each`]'s summaries, whatever the runners), so the two summaries added up
/// are the load [`seed004_from_k6`] judges: its claims and its control (the same run read
/// wrongly) on them, the split's claims on them too, and the split's control on the first
/// runner alone. One run of 17 s where there were two.
pub fn seed004_from_k6_and_split_with_control() -> Result<[(Shapes, Shapes); 2]> {
    let runs = std::sync::Mutex::new(None);
    let from_k6 = seed004_with_control(LOOP, |pool, schedule, label| {
        let each = against_demo(pool, |host| {
            K6Run::new(host, 2, dir(label))?.run_each(schedule)
        })?;
        *runs.lock().unwrap_or_else(|e| e.into_inner()) = Some((schedule.clone(), each.clone()));
        crate::external::EngineStats::added_up(each)
    })?;
    let (schedule, each) = runs
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .ok_or_else(|| Error::Engine {
            engine: "k6",
            what: "the split run gave no summaries".into(),
        })?;
    let first = first_runner(each.clone())?;
    let split = (
        split_judged(&schedule, crate::external::EngineStats::added_up(each)?)?,
        split_judged(&schedule, first)?,
    );
    Ok([from_k6, split])
}

/// Two k6 processes offering `schedule` to the demo service on the fixture's pool, each
/// runner's summary on its own.
fn split_run(schedule: &Schedule, label: &str) -> Result<Vec<crate::external::EngineStats>> {
    against_demo(fixture_pool()?, |host| {
        K6Run::new(host, 2, dir(label))?.run_each(schedule)
    })
}

/// The first runner's summary alone.
fn first_runner(each: Vec<crate::external::EngineStats>) -> Result<crate::external::EngineStats> {
    each.into_iter().next().ok_or_else(|| Error::Engine {
        engine: "k6",
        what: "the first runner wrote no summary".into(),
    })
}

/// Little's law per row and each row against the model, named `split-…`.
fn split_judged(schedule: &Schedule, stats: crate::external::EngineStats) -> Result<Shapes> {
    let judge = Judge::new().without_ordering().against_model();
    let mut split = shapes(judge.judge(schedule, &stats)?);
    for (name, _) in &mut split {
        *name = format!("split-{name}");
    }
    Ok(split)
}

/// Where a run's script, logs and summaries go: the artifact folder's `k6/<label>`.
fn dir(label: &str) -> PathBuf {
    artifact_dir().join("k6").join(label)
}
