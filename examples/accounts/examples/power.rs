//! The blocking claims on the accounts service's three builds, its database on loopback and
//! through a `Downstream` at 1 ms each way: how often each holds, breaks or is inconclusive,
//! and how often a report names the local database the service talks to directly.
//!
//! `cargo run -p accounts --example power -- [RUNS] [ROWS]` checks each row (whose name
//! contains ROWS) RUNS times (default 20), each on a fresh service on one worker and one
//! cluster per row, and prints a Markdown table; `scripts/distance-power.sh` runs it in two builds, quiet and with one core busy,
//! into docs/production-distance.md. Needs PostgreSQL's server binaries, as the tests do.

#[path = "../tests/common/cluster.rs"]
#[allow(dead_code)] // the tests' helper: this example uses what it needs of it
mod cluster;

use std::io::Write;
use std::time::Duration;

use accounts::{Build, Store};
use perfshape::claim::GateMode;
use perfshape::{Claim, Downstream, PoolSettings, Result, Target, Verdict};

use cluster::Cluster;

/// Which claim a row checks.
#[derive(Clone, Copy)]
enum Kind {
    /// `GET /accounts?limit=20` does not block its worker.
    List,
    /// `/health` keeps answering while the list runs.
    Health,
}

struct Row {
    what: &'static str,
    expected: &'static str,
    build: Build,
    distance: Option<Duration>,
    kind: Kind,
}

fn rows() -> Vec<Row> {
    let ms = Some(Duration::from_millis(1));
    let row = |what, expected, build, distance, kind| Row {
        what,
        expected,
        build,
        distance,
        kind,
    };
    vec![
        row(
            "diesel on the worker, loopback",
            "broken, or naming the local database",
            Build::OnWorker,
            None,
            Kind::List,
        ),
        row(
            "diesel on the worker, 1 ms away",
            "broken",
            Build::OnWorker,
            ms,
            Kind::List,
        ),
        row(
            "/health during its list, 1 ms away",
            "broken",
            Build::OnWorker,
            ms,
            Kind::Health,
        ),
        row(
            "diesel in spawn_blocking, loopback",
            "holds",
            Build::Offloaded,
            None,
            Kind::List,
        ),
        row(
            "diesel in spawn_blocking, 1 ms away",
            "holds",
            Build::Offloaded,
            ms,
            Kind::List,
        ),
        row(
            "tokio-postgres (deadpool), loopback",
            "holds",
            Build::Async,
            None,
            Kind::List,
        ),
        row(
            "tokio-postgres (deadpool), 1 ms away",
            "holds",
            Build::Async,
            ms,
            Kind::List,
        ),
        row(
            "/health during its list, 1 ms away",
            "holds",
            Build::Async,
            ms,
            Kind::Health,
        ),
    ]
}

fn claim(target: &Target, kind: Kind) -> Claim<'static> {
    let list = target.get("/accounts?limit=20");
    match kind {
        Kind::List => list.does_not_block_its_worker(),
        Kind::Health => target.get("/health").keeps_answering_during(&list),
    }
}

/// The median of `values`, or NaN when there are none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() -> Result {
    let runs: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("RUNS is a whole number"))
        .unwrap_or(20);
    println!(
        "| build, database | claim | expected | broken | holds | inconclusive | not broken, naming the local database | median share of requests that slept | median waiting |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let only = std::env::args().nth(2).unwrap_or_default();
    let dir = std::env::temp_dir().join("perfshape-distance-power");
    for row in rows().into_iter().filter(|row| row.what.contains(&only)) {
        let cluster = Cluster::start().unwrap_or_else(|e| panic!("{e}"));
        accounts::seed(&cluster.url()).unwrap_or_else(|e| panic!("{e}"));
        let proxy = row.distance.map(|latency| {
            Downstream::to(format!("127.0.0.1:{}", cluster.port))
                .latency(latency)
                .start()
                .unwrap_or_else(|e| panic!("{e}"))
        });
        let url = match &proxy {
            Some(proxy) => cluster.url_at(&proxy.addr().to_string()),
            None => cluster.url(),
        };
        let (mut broken, mut holds, mut inconclusive, mut named) = (0, 0, 0, 0);
        let (mut slept, mut waits) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let store = Store::connect(row.build, &url).unwrap_or_else(|e| panic!("{e}"));
            let target = Target::serve(PoolSettings::workers(1)?, accounts::app(store))?;
            let checked = claim(&target, row.kind)
                .gate_mode(GateMode::Advisory)
                .artifacts_in(&dir)
                .check()?;
            let report = checked.report();
            match checked.verdict() {
                Verdict::Broken => broken += 1,
                Verdict::Holds => holds += 1,
                Verdict::Inconclusive => inconclusive += 1,
            }
            // What a claim that did not break says of a database met on loopback.
            if checked.verdict() != Verdict::Broken
                && format!("{report:#}").contains("(postgres) directly")
            {
                named += 1;
            }
            if let Some(s) = report.observed().get("slept share") {
                slept.push(*s);
            }
            if let Some(w) = report.observed().get("waiting ms") {
                waits.push(*w);
            }
        }
        let (slept, wait) = (median(slept), median(waits));
        let or_dash = |v: f64, f: &dyn Fn(f64) -> String| {
            if v.is_nan() { "—".to_string() } else { f(v) }
        };
        println!(
            "| {} | {} | {} | {broken} | {holds} | {inconclusive} | {named} | {} | {} |",
            row.what,
            match row.kind {
                Kind::List => "does not block its worker",
                Kind::Health => "keeps answering",
            },
            row.expected,
            or_dash(slept, &|v| format!("{:.0} %", v * 100.0)),
            or_dash(wait, &|v| format!("{v:.2} ms")),
        );
        std::io::stdout().flush().ok();
    }
    Ok(())
}
