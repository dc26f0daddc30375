//! What the test binaries share: a server and a load client on separate pools, and the
//! snapshot-then-gate step every claim test ends with.
#![allow(dead_code, unreachable_pub)]

use std::time::Duration;

use perfshape::{
    ClientStrategy, Lifecycle, LoadClient, Pool, PoolSettings, Result, Server, ServerStrategy,
};

/// Milliseconds.
pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// A perfshape server and a load client, each on its own pool, so a starved server
/// cannot stall the client that measures it.
pub struct Rig {
    pub server: Server,
    pub client: LoadClient,
}

impl Rig {
    /// A server with `workers` workers and tokio's default blocking cap; a 2-worker client.
    pub fn new(workers: usize) -> Result<Rig> {
        Rig::with_pool(PoolSettings::new(workers, perfshape::DEFAULT_MAX_BLOCKING)?)
    }

    pub fn with_pool(settings: PoolSettings) -> Result<Rig> {
        Rig::with_lifecycle(settings, Lifecycle::Shared)
    }

    /// A server on `settings` and a 2-worker client of the given lifecycle.
    pub fn with_lifecycle(settings: PoolSettings, lifecycle: Lifecycle) -> Result<Rig> {
        Ok(Rig {
            server: Server::start(Pool::new("server", settings)?)?,
            client: LoadClient::new(Pool::workers("client", 2)?, lifecycle)?,
        })
    }

    pub fn url(&self, strategy: ServerStrategy, work: Duration) -> Result<String> {
        self.server.url(&strategy, work)
    }

    /// The wall time of `n` requests to `url`, refusing a run in which any failed.
    pub fn wall(&self, strategy: ClientStrategy, url: &str, n: usize) -> Result<Duration> {
        Ok(self.client.run(strategy, url, n)?.require_ok()?.wall)
    }

    /// How long `/health` takes when sent `after` into a fan-out of `n` requests to `url`.
    pub fn health_during(&self, url: &str, n: usize, after: Duration) -> Result<Duration> {
        let health = self.server.health_url();
        let (run, probe) =
            self.client
                .run_with_probe(ClientStrategy::FanOut, url, n, Some((&health, after)))?;
        run.require_ok()?;
        let probe = probe.expect("a probe was asked for");
        if !probe.outcome.is_ok() {
            return Err(perfshape::Error::Invalid {
                field: "health probe",
                value: format!("{:?}", probe.outcome),
                allowed: "a 2xx response".into(),
            });
        }
        Ok(probe.latency())
    }
}

/// Snapshots the shape summary, then applies the gate.
///
/// Strict mode (the default): the snapshot is always compared, so a regression shows as a
/// snapshot diff (`cargo insta review`) as well as the claim's report. Advisory mode: a
/// claim that does not hold is reported, not snapshotted, and does not fail the test.
#[macro_export]
macro_rules! assert_shape {
    ($checked:expr, $summary:expr) => {{
        let checked = &$checked;
        if checked.verdict().holds() || checked.report().gate == perfshape::GateMode::Strict {
            insta::assert_yaml_snapshot!($summary);
        }
        checked.gate()?;
    }};
    ($name:expr, $checked:expr, $summary:expr) => {{
        let checked = &$checked;
        if checked.verdict().holds() || checked.report().gate == perfshape::GateMode::Strict {
            insta::assert_yaml_snapshot!($name, $summary);
        }
        checked.gate()?;
    }};
}

/// Adds every `(key, value)` setting to `claim`'s context.
pub fn with_context<'a>(
    claim: perfshape::Claim<'a>,
    settings: &[(&str, String)],
) -> perfshape::Claim<'a> {
    settings
        .iter()
        .fold(claim, |claim, (key, value)| claim.context(key, value))
}

/// The model's predicted wall of `a` ÷ that of `b`: the ideal of a ratio claim.
pub fn model_ratio(a: &perfshape::Model, b: &perfshape::Model) -> Result<f64> {
    Ok(a.predict()?.wall.as_secs_f64() / b.predict()?.wall.as_secs_f64())
}
