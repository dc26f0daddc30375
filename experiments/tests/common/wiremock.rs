//! The client strategies against a server that is not perfshape's: wiremock's
//! `MockServer`, an async server on its own thread and runtime, answering after a fixed
//! delay — a running service reached by URL, claimed to behave like an async handler of
//! that delay. Shared by the claims (`tests/shape/`) and their controls
//! (`tests/controls/`).

use perfshape_experiments::load::Loads;
use perfshape_experiments::{Result, scenario::ServerStrategy};
use std::time::Duration;

use perfshape::{Claim, Target, client::ClientStrategy, runtime::Pool};
use perfshape_experiments::catalog::{Setup, Shapes};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const DELAY: Duration = Duration::from_millis(20);

/// `n` requests offered by `claimed` to the mock's `/slow` ÷ the model of an async server
/// with the mock's delay, within `[lo, hi]`; a fact says whether the mock saw each
/// request exactly once. The control offers them with `wrong` instead.
pub(crate) fn matches_the_model(
    setup: Setup,
    claimed: ClientStrategy,
    wrong: ClientStrategy,
    n: usize,
    band: (f64, f64),
) -> Result<Shapes> {
    // wiremock's server runs on a thread of its own; this runtime only starts it.
    let runtime = Pool::workers("mock", 1)?;
    let mock = runtime.block_on(MockServer::start());
    runtime.block_on(
        Mock::given(method("GET"))
            .and(path("/slow"))
            .respond_with(ResponseTemplate::new(200).set_delay(DELAY))
            .mount(&mock),
    );
    let target = Target::url(&mock.uri())?;
    let slow = target.checked_get("/slow")?;
    let scenario = target
        .scenario()
        .server(ServerStrategy::Async)
        .requests(n)
        .work(DELAY);
    let load = match setup {
        Setup::Claimed => slow.load(scenario.client(claimed))?,
        Setup::Control => {
            slow.load_claiming(scenario.clone().client(wrong), scenario.client(claimed))?
        }
    };
    let checked = Claim::bound(&format!("wiremock {claimed} of {n} ÷ model"), load.wall())
        .within(band.0, band.1)
        .check()?;
    // Everything the load client sent — the endpoint's first request, the warm-up, every
    // round — and nothing more, arrived.
    let arrived = runtime
        .block_on(mock.received_requests())
        .map_or(0, |r| r.len());
    let sent = target.client().issued() as usize;
    if arrived != sent {
        return Err(perfshape::Error::Invalid {
            field: "requests the mock received",
            value: arrived.to_string(),
            allowed: format!("exactly the {sent} the client sent, once each"),
        }
        .into());
    }
    let checked = checked.fact("every request arrived exactly once", true);
    let name = match claimed {
        ClientStrategy::FanOut => "fan_out_over_an_async_mock_takes_one_delay",
        ClientStrategy::Sequential => "sequential_over_an_async_mock_takes_n_delays",
        _ => "sync_over_async_is_capped_by_its_threads",
    };
    Ok(vec![(name.to_string(), checked)])
}
