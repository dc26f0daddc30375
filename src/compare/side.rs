//! One side of a comparison: its measure under the load it is sent, and its first answer,
//! which the pair's check before any load compares with the other side's.

use crate::claim::Measure;
use crate::endpoint::Endpoint;
use crate::error::Result;
use crate::evidence::Evidence;
use crate::limits::MAX_REQUESTS;
use crate::vocab::ClientStrategy;

use super::side_load::{Percentile, SINGLE_IN_A_ROW, SideLoad};

/// The pair's check before any load (a side down, two sides that answer differently),
/// which the first side warmed runs.
pub(super) type PairCheck = Box<dyn FnOnce() -> Result<()> + Send>;

/// One side of a comparison: `endpoint` under `load`, labelled with its target's name.
/// The side given `preflight` checks the pair before its warm-up (the first side warmed).
pub(super) fn side(
    endpoint: &Endpoint,
    load: SideLoad,
    target: &str,
    preflight: Option<PairCheck>,
) -> Measure<'static> {
    let label = format!("{} on {target}", endpoint.name());
    let evidence = Evidence::default();
    let (this, seen) = (endpoint.clone(), evidence.clone());
    let observe = move |strategy: ClientStrategy, n: usize| {
        seen.observe(this.target(), || this.run(strategy, n))
    };
    let measure = match load {
        SideLoad::Single => Measure::duration(&label, move || {
            let run = observe(ClientStrategy::Sequential, SINGLE_IN_A_ROW)?;
            Ok(Percentile::P50.of(&run))
        }),
        SideLoad::FanOut(n) => Measure::duration(&label, move || {
            observe(ClientStrategy::FanOut, n).map(|run| run.wall)
        }),
        SideLoad::Throughput { users, duration } => Measure::rate(&label, move || {
            let run = observe(SideLoad::closed_loop(users, duration), MAX_REQUESTS)?;
            Ok(run.ok() as f64 / run.wall.as_secs_f64().max(f64::MIN_POSITIVE))
        })
        .floor(duration),
        SideLoad::Latency {
            users,
            duration,
            percentile,
        } => Measure::duration(&label, move || {
            let run = observe(SideLoad::closed_loop(users, duration), MAX_REQUESTS)?;
            Ok(percentile.of(&run))
        })
        .floor(duration),
    };
    let this = endpoint.clone();
    let mut preflight = preflight;
    measure
        .warm_with(move || {
            if let Some(pair) = preflight.take() {
                pair()?;
            }
            this.preflight()?;
            // Connections and threads, opened as the load will use them.
            let (strategy, n) = match load {
                SideLoad::Single => (ClientStrategy::Sequential, SINGLE_IN_A_ROW),
                SideLoad::FanOut(n) => (ClientStrategy::FanOut, n),
                SideLoad::Throughput { users, .. } | SideLoad::Latency { users, .. } => {
                    (ClientStrategy::FanOut, users)
                }
            };
            this.run(strategy, n).map(drop)
        })
        .evidence(move || evidence.describe(&format!("{load}")))
}

/// What a side answered to its first request.
pub(super) struct Answer {
    pub(super) status: u16,
    pub(super) bytes: usize,
}

/// `endpoint`'s first request, sent once: its status and body length, or why there is
/// none (the connect error, a status neither 2xx nor 3xx), naming the side and its URL.
pub(super) fn first_answer(side: &str, endpoint: &Endpoint) -> Result<Answer> {
    let plan = endpoint.plan()?;
    let label = format!("the {side}'s {} ({})", plan.label, endpoint.url());
    let run = endpoint.target().client().run_plan(
        ClientStrategy::Sequential,
        &plan.labelled(label),
        1,
        None,
    )?;
    run.require_ok()?;
    let record = &run.records[0];
    let status = match record.outcome {
        crate::run::Outcome::Ok { status } => status,
        crate::run::Outcome::Failed { .. } => 0,
    };
    Ok(Answer {
        status,
        bytes: record.body_len.unwrap_or(0),
    })
}
