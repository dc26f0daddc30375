//! A Load: a scenario bound to the target that runs it — the one path from a scenario to
//! a run, a summary and a claim's measure, for the suite's claims and the CLI's tables.
//!
//! Each measure a load hands out carries the model's prediction as its expectation and
//! the scenario's settings as its context, so a claim written on loads takes its ideal,
//! its expectation and its context from the scenario and no test restates a setting.

use std::time::Duration;

use crate::error::{Error, Result};
use crate::model::{Model, Prediction};
use crate::scenario::Scenario;
use crate::scenario::ScenarioBuilder;
use crate::vocab::ServerStrategy;
use perfshape::__support::Evidence;
use perfshape::__support::{CanaryPlan, Plan, run_plan};
use perfshape::claim::{Expected, Measure, Notes};
use perfshape::client::ClientStrategy;
use perfshape::load::Run;
use perfshape::load::{Latency, Summary};
use perfshape::{Endpoint, Target};

mod in_process;
mod measured;

pub use in_process::InProcessLoad;
pub(crate) use in_process::in_process_model;

/// A [`Scenario`] on a demo [`Target`]: runs it, and hands out its measures.
///
/// ```no_run
/// use std::time::Duration;
/// use perfshape::{Claim, PoolSettings, client::ClientStrategy};
/// use perfshape_experiments::{load::Loads, scenario::ServerStrategy};
///
/// let target = perfshape_experiments::demo::target(PoolSettings::workers(2)?)?;
/// let scenario = target.scenario().requests(20).work(Duration::from_millis(20));
/// let blocking = target.load(scenario.clone().server(ServerStrategy::Blocking).client(ClientStrategy::FanOut))?;
/// // measured ÷ the model's ceil(20/2) × 20 ms, with n, work and pool in the context
/// let checked = Claim::bound("blocking fan-out ÷ model", blocking.wall()).within(0.95, 1.5).check()?;
/// checked.gate()?;
/// # Ok::<(), perfshape_experiments::Error>(())
/// ```
///
/// A load is a cheap handle (clones share its runs' summaries), and its measures own a
/// clone: they are `'static` and `Send`, like the claims made of them.
#[derive(Clone, Debug)]
pub struct Load {
    target: Target,
    /// What runs.
    actual: Scenario,
    /// What the measures state: the label, the context and the model's expectations.
    /// What runs, except in a negative control ([`Target::load_claiming`]).
    scenario: Scenario,
    plan: Plan,
    /// What the warm-up sends instead of `plan`: the same route with 1 ms of work, when
    /// the load runs a strategy of the demo service ([`Load::warmed_briefly`]).
    brief: Option<Plan>,
    model: Model,
    prediction: Prediction,
    summaries: Notes<Summary>,
    evidence: Evidence,
}

/// A scenario, or a builder of one (built, and its error kept, on the way in), so that
/// `target.load(target.scenario().server(…))?` needs one `?`.
#[derive(Debug)]
pub struct ScenarioInput(pub(crate) Result<Scenario>);

impl From<Scenario> for ScenarioInput {
    fn from(scenario: Scenario) -> Self {
        ScenarioInput(Ok(scenario))
    }
}

impl From<crate::scenario::ScenarioBuilder> for ScenarioInput {
    fn from(builder: crate::scenario::ScenarioBuilder) -> Self {
        ScenarioInput(builder.build())
    }
}

impl Load {
    pub(crate) fn new(
        target: &Target,
        plan: Plan,
        actual: Scenario,
        scenario: Scenario,
    ) -> Result<Load> {
        crate::scenario::check_matches(target, &actual)?;
        let model = scenario.model();
        let prediction = model.predict()?;
        Ok(Load {
            target: target.clone(),
            actual,
            scenario,
            plan,
            brief: None,
            model,
            prediction,
            summaries: Notes::new(),
            evidence: Evidence::default(),
        })
    }

    /// The scenario the measures state (in a negative control, not the one that runs).
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The scenario's model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// What the model predicts for the scenario.
    pub fn prediction(&self) -> &Prediction {
        &self.prediction
    }

    /// How sides of this load are labelled: `fan-out → blocking`.
    pub fn label(&self) -> String {
        self.scenario.label()
    }

    /// Runs the load once and returns its run, refusing one with failed requests.
    /// Its summary (waves at half the work time) is kept for [`summaries`](Self::summaries).
    pub fn run(&self) -> Result<Run> {
        self.run_with_canary(None).map(|(run, _)| run)
    }

    /// The summaries of every run so far, in order: the shape facts a claim reports
    /// beside its figure (waves, failures).
    pub fn summaries(&self) -> Vec<Summary> {
        self.summaries.to_vec()
    }

    /// Warms up what the load will use (one request per connection it will hold, so
    /// threads and connections exist), then runs it once and returns the run as it is,
    /// failures included: the experiment tables report them rather than refuse them.
    pub(crate) fn measure_once(&self) -> Result<Run> {
        let concurrency = self.actual.client.concurrency(self.actual.n);
        // Two descriptors per connection (both ends are in this process), plus slack.
        perfshape::__support::ensure_fd_limit(2 * concurrency as u64 + 256)?;
        // A failed warm-up request is the table's to report, with the run's own.
        self.warm_up_run()?;
        self.measure_again()
    }

    /// Runs the load once more as it is, failures included, without warming it again:
    /// the later rounds of a table row measured in rounds, whose first round warmed it.
    pub(crate) fn measure_again(&self) -> Result<Run> {
        Ok(run_plan(
            self.target.client(),
            self.actual.client,
            &self.plan,
            self.actual.n,
            None,
        )?)
    }

    /// This load warmed up on the demo endpoint of its strategy with 1 ms of work: that
    /// opens the same connections and threads as a warm-up at full work, for a fraction of
    /// its time. At full work a warm-up cost a wave of the load's own requests — at N =
    /// 1000 blocking requests of 10 ms on 8 workers as much as the 1.3 s run, and ≈ 4 s of
    /// the suite's claims (a round each, 150–300 ms, where their new connections cost
    /// ~0.1 ms each).
    pub(crate) fn warmed_briefly(mut self) -> Result<Load> {
        let brief = Duration::from_millis(1);
        let server = match self.actual.server {
            ServerStrategy::Mixed { .. } => ServerStrategy::Mixed {
                block: brief,
                wait: brief,
            },
            other => other,
        };
        let url = self.target.url_of(&server.path_and_query(brief)?)?;
        self.brief = Some(Plan::get(&perfshape::__support::check_url(&url)?));
        Ok(self)
    }

    /// Runs the load once, with a `/health` canary sent `canary` after its start when
    /// asked: the run, and how long the canary waited.
    fn run_with_canary(&self, canary: Option<Duration>) -> Result<(Run, Option<Duration>)> {
        let health = Plan::get(&perfshape::__support::check_url(
            &self.target.url_of("/health")?,
        )?);
        let mut run = self.evidence.observe(&self.target, || {
            run_plan(
                self.target.client(),
                self.actual.client,
                &self.plan,
                self.actual.n,
                canary.map(|after| CanaryPlan {
                    plan: &health,
                    after,
                }),
            )
        })?;
        run.require_ok()?;
        self.summaries.push(run.summary(self.actual.work / 2));
        let waited = match run.canary.take() {
            None => None,
            Some(record) if record.outcome.is_ok() => Some(record.latency()),
            Some(record) => {
                return Err(Error::Gate(perfshape::Error::Failed {
                    request: "GET /health".into(),
                    what: format!("failed during {} ({:?})", self.label(), record.outcome),
                }));
            }
        };
        Ok((run, waited))
    }

    /// Opens what a run will use — a connection per request it holds at once, the
    /// threads that serve them — with one concurrent request each, at 1 ms of work where
    /// the load is the demo's ([`Load::warmed_briefly`]): a warm-up far cheaper than a
    /// whole run. (Running short loads once in full instead cost the suite 1.3 s, to spare
    /// it an occasional first-round outlier the rule outvotes.)
    fn warm(&self) -> Result<()> {
        Ok(self.warm_up_run()?.require_ok().map(drop)?)
    }

    /// The warm-up's run, as it came.
    fn warm_up_run(&self) -> Result<Run> {
        let concurrency = self.actual.client.concurrency(self.actual.n).max(1);
        let plan = self.brief.as_ref().unwrap_or(&self.plan);
        let run = run_plan(
            self.target.client(),
            ClientStrategy::FanOut,
            plan,
            concurrency,
            None,
        )?;
        Ok(run)
    }

    fn described(&self, measure: Measure<'static>) -> Measure<'static> {
        let served = self.target.served().is_some();
        let (warm, label, evidence) = (self.clone(), self.label(), self.evidence.clone());
        let summaries = self.summaries.clone();
        let measure = measure
            .warm_with(move || Ok(warm.warm()?))
            .floor(self.prediction.wall)
            .evidence(move || {
                let seen = evidence.describe(&label);
                // A run that ended on a bound was a shorter load than the claim's: say so.
                let summaries = summaries.to_vec();
                let short: Vec<_> = summaries.iter().filter_map(|s| s.cut_short).collect();
                match short.first() {
                    None => seen,
                    Some(first) => Some(format!(
                        "{}{} of {} runs {first}",
                        seen.map(|s| s + "; ").unwrap_or_default(),
                        short.len(),
                        summaries.len()
                    )),
                }
            });
        self.scenario
            .context()
            .into_iter()
            .map(|(key, value)| match key {
                // A running service's pool is not known, only what the model assumes.
                "server pool" if !served => ("modelled server pool", value),
                _ => (key, value),
            })
            .fold(measure, |m, (key, value)| m.context(key, value))
    }

    /// What the model predicts for one run's wall time: a [`wall`](Self::wall) measure's
    /// expectation, which another load's measure may be held against
    /// (`async_load.wall().expecting(blocking_load.expected_wall())`).
    pub fn expected_wall(&self) -> Expected {
        Expected::duration(self.prediction.wall, self.model.to_string())
    }

    /// The wall time of one run; expects the model's wall.
    pub fn wall(&self) -> Measure<'static> {
        let expected = self.expected_wall();
        let this = self.clone();
        self.described(Measure::duration(&self.label(), move || {
            Ok(this.run()?.wall)
        }))
        .expecting(expected)
    }

    /// Successful requests per second of one run; expects the model's throughput.
    pub fn throughput(&self) -> Measure<'static> {
        let expected = Expected::new(
            self.prediction.throughput,
            format!("throughput of {}", self.model),
        );
        let (work, this) = (self.actual.work, self.clone());
        self.described(Measure::rate(&self.label(), move || {
            Ok(this.run()?.summary(work / 2).throughput)
        }))
        .expecting(expected)
    }

    /// The mean latency (from intended start) of one run; expects the model's mean.
    pub fn mean_latency(&self) -> Measure<'static> {
        let predicted = Duration::from_secs_f64(self.prediction.mean_latency);
        self.latency("mean", predicted, |l| l.mean)
    }

    /// The 99th-percentile latency (from intended start) of one run; expects the model's:
    /// the tail a user sees, where the mean hides it.
    pub fn p99(&self) -> Measure<'static> {
        let predicted = self.prediction.latency.map(|l| l.p99).unwrap_or_default();
        self.latency("p99", predicted, |l| l.p99)
    }

    /// One figure of a run's latency distribution (`which` names it), expecting `predicted`.
    fn latency(
        &self,
        which: &str,
        predicted: Duration,
        pick: fn(&Latency) -> Duration,
    ) -> Measure<'static> {
        let expected = Expected::duration(predicted, format!("{which} latency of {}", self.model));
        let (work, this) = (self.actual.work, self.clone());
        self.described(Measure::duration(
            &format!("{which} latency of {}", self.label()),
            move || {
                let summary = this.run()?.summary(work / 2);
                Ok(summary.latency.as_ref().map(pick).unwrap_or_default())
            },
        ))
        .expecting(expected)
    }

    /// Little's law for a closed loop: throughput × (mean latency + think time), the
    /// users in the system; expects what the model counts for the same finite run (its
    /// tail, requests still in flight when users stop, lowers it below the user count).
    pub fn users_in_system(&self) -> Measure<'static> {
        let think = match self.scenario.client {
            ClientStrategy::ClosedLoop { think, .. } => think.as_secs_f64(),
            _ => 0.0,
        };
        let littles = move |throughput: f64, mean: f64| throughput * (mean + think);
        let expected = Expected::new(
            littles(self.prediction.throughput, self.prediction.mean_latency),
            format!("throughput × (latency + think) of {}", self.model),
        );
        let (work, this) = (self.actual.work, self.clone());
        self.described(Measure::value(
            &format!("users in the system, {}", self.label()),
            move || {
                let summary = this.run()?.summary(work / 2);
                let mean = summary.latency.map_or(0.0, |l| l.mean.as_secs_f64());
                Ok(littles(summary.throughput, mean))
            },
        ))
        .expecting(expected)
    }

    /// How long the demo's `/health` waits when sent `after` the load starts, while the
    /// load is in flight (a canary); expects the model's canary latency when that is above
    /// zero (a free worker answers at once, which no bound can divide by: compare with a
    /// ratio).
    pub fn health_during(&self, after: Duration) -> Measure<'static> {
        let canary = self.model.clone().with_canary(after);
        let predicted = canary
            .predict()
            .ok()
            .and_then(|p| p.canary_latency)
            .filter(|latency| !latency.is_zero());
        let this = self.clone();
        let measure = self
            .described(Measure::duration(
                &format!("/health during {}", self.label()),
                move || {
                    let (_, waited) = this.run_with_canary(Some(after))?;
                    Ok(waited.unwrap_or_default())
                },
            ))
            .context("health sent after", format!("{} ms", after.as_millis()));
        match predicted {
            Some(latency) => measure.expecting(Expected::duration(
                latency,
                format!("{} canary after {} ms", canary, after.as_millis()),
            )),
            None => measure,
        }
    }
}

/// What makes a [`Load`]: a [`Target`] (the demo service, whose routes are the server
/// strategies) or an [`Endpoint`] (any route, claimed to behave like a strategy).
pub trait Loads {
    /// A scenario builder with this target's server pool and client lifecycle, for
    /// [`load`](Self::load).
    fn scenario(&self) -> ScenarioBuilder;

    /// `scenario` (built with [`scenario`](Self::scenario)) on this target with the
    /// scenario's pool and lifecycle. On the demo service the request goes to the route of
    /// the scenario's server strategy; an endpoint is claimed to behave like it (say, an
    /// async handler of 20 ms), and its measures expect what the model predicts for it.
    fn load(&self, scenario: impl Into<ScenarioInput>) -> Result<Load> {
        let scenario = scenario.into().0?;
        self.load_claiming(scenario.clone(), scenario)
    }

    /// Runs `actual` while the measures state `claimed` — its label, its settings and the
    /// model's expectations: a claim's negative control, the same claim on a deliberately
    /// wrong setup (an async wait made blocking, the cap removed, a pool of 4 where 1 is
    /// claimed), which must come out broken.
    fn load_claiming(
        &self,
        actual: impl Into<ScenarioInput>,
        claimed: impl Into<ScenarioInput>,
    ) -> Result<Load>;
}

impl Loads for Target {
    fn scenario(&self) -> ScenarioBuilder {
        crate::scenario::builder_for(self)
    }

    fn load_claiming(
        &self,
        actual: impl Into<ScenarioInput>,
        claimed: impl Into<ScenarioInput>,
    ) -> Result<Load> {
        if !crate::demo::is_demo(self) {
            return Err(Error::invalid(
                "target",
                self.to_string(),
                "perfshape's demo service (demo::target) to serve a scenario's strategy; \
                 for your own endpoint, endpoint.load(scenario) declares how it behaves",
            ));
        }
        let actual = actual.into().0?;
        let url = self.url_of(&actual.server.path_and_query(actual.work)?)?;
        let plan = Plan::get(&perfshape::__support::check_url(&url)?);
        Load::new(self, plan, actual, claimed.into().0?)?.warmed_briefly()
    }
}

impl Loads for Endpoint {
    fn scenario(&self) -> ScenarioBuilder {
        crate::scenario::builder_for(self.target())
    }

    fn load_claiming(
        &self,
        actual: impl Into<ScenarioInput>,
        claimed: impl Into<ScenarioInput>,
    ) -> Result<Load> {
        Load::new(
            self.target(),
            perfshape::__support::plan(self)?,
            actual.into().0?,
            claimed.into().0?,
        )
    }
}
