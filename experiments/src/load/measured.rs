//! A scenario measured on its own demo target: the experiments' tables run each row so,
//! once or in calibrated rounds.

use std::time::Duration;

use perfshape::__support::check_range;
use perfshape::Target;
use perfshape::client::ClientStrategy;
use perfshape::load::Run;

use super::Loads;
use crate::demo::Demo;
use crate::error::Result;
use crate::scenario::Scenario;
use crate::vocab::ServerStrategy;

/// Zero-work runs whose median wall calibrates [`Scenario::measure_calibrated`].
const CALIBRATION_RUNS: usize = 3;
/// From this many requests in flight, a row calibrates on its own handler with no work.
const CALIBRATE_OWN_HANDLER_FROM: usize = 16;

// Beside the load that runs it, so that `scenario.rs` reads nothing above it.
impl Scenario {
    /// Serves this scenario on a fresh demo target, warms up the connections and threads
    /// the load will use, runs the load once, and returns its run (failures included:
    /// the experiment tables show them).
    pub fn measure(&self) -> Result<Run> {
        let target = Target::builder()
            .lifecycle(self.lifecycle)
            .demo(self.server_pool)?;
        target.load(self.clone())?.measure_once()
    }

    /// As [`measure`](Self::measure), after calibrating on the same target what one
    /// request costs outside its handler: the same client, lifecycle, pool and N with no
    /// work (on the scenario's own handler when 16 or more requests are in flight, else
    /// on a blocking handler of zero time), whose median wall of three ÷ N is the
    /// [`Model::overhead`](crate::model::Model::overhead) — for a fan-out the HTTP stack's CPU per request, client and
    /// server together; for a sequential client its round trip; for a client per request,
    /// building it too. Closed and open loops are not calibrated (zero): their load is
    /// paced by users and rate, not by how fast the stack turns requests over.
    pub fn measure_calibrated(&self) -> Result<(Run, Duration)> {
        let mut rounds = self.measure_calibrated_rounds(1)?;
        Ok(rounds.remove(0))
    }

    /// As [`measure_calibrated`](Self::measure_calibrated), `rounds` times (1 to 100) on
    /// the same target, each round's load run right after its own calibration: the run
    /// and the overhead of each round, in order. With more than one round, each round
    /// calibrates on one zero-work run — the rounds' median settles what the median of
    /// three settles for a single round — so that a round's load and its calibration meet
    /// the machine in the same state.
    pub fn measure_calibrated_rounds(&self, rounds: usize) -> Result<Vec<(Run, Duration)>> {
        check_range("calibrated rounds", rounds as u64, 1, 100, "")?;
        let target = Target::builder()
            .lifecycle(self.lifecycle)
            .demo(self.server_pool)?;
        let loaded = target.load(self.clone())?;
        let idle = match self.client {
            ClientStrategy::ClosedLoop { .. } | ClientStrategy::OpenLoop { .. } => None,
            _ => {
                // The row's own handler with no work, so that its path is counted (an
                // async handler's timer, an offload's hand-over to the blocking pool) —
                // when many requests are in flight. A waiting handler of zero time still
                // waits for the timer's next tick (up to 1 ms): shared by a fan-out's
                // requests, but paid by each of a few callers in turn, so those calibrate
                // on a blocking handler of zero time, which returns at once.
                let server = if self.client.concurrency(self.n) >= CALIBRATE_OWN_HANDLER_FROM {
                    self.server
                } else {
                    ServerStrategy::Blocking
                };
                Some(target.load(Scenario {
                    server,
                    work: Duration::ZERO,
                    ..self.clone()
                })?)
            }
        };
        // The median of three for a single round: one zero-work fan-out of 1000 on
        // 2 cores varied 28–87 µs a request between runs; the median settles it.
        let per_round = if rounds == 1 { CALIBRATION_RUNS } else { 1 };
        let requests = u32::try_from(self.n).unwrap_or(u32::MAX);
        let mut measured = Vec::with_capacity(rounds);
        for round in 0..rounds {
            let overhead = match &idle {
                None => Duration::ZERO,
                Some(idle) => {
                    let mut walls = Vec::with_capacity(per_round);
                    for i in 0..per_round {
                        walls.push(if round == 0 && i == 0 {
                            idle.measure_once()?.wall
                        } else {
                            idle.run()?.wall
                        });
                    }
                    walls.sort();
                    walls[walls.len() / 2] / requests
                }
            };
            let run = if round == 0 {
                loaded.measure_once()?
            } else {
                loaded.measure_again()?
            };
            measured.push((run, overhead));
        }
        Ok(measured)
    }
}
