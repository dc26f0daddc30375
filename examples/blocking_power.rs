//! The power of the blocking claims at their default settings, on every kind of handler in
//! `tests/apps/`: how often `does_not_block_its_worker()` holds, breaks or is inconclusive
//! on a handler that computes in short polls or in one long one, that waits on its worker
//! (a sleep, a sync write, a std mutex), the same offloaded or awaited, offloaded work that
//! queues behind one shared connection, and every route of two in-memory services.
//!
//! `cargo run --example blocking_power -- [RUNS] [served|url] [ROWS]` checks each row (whose
//! name contains ROWS) RUNS times (default 20) and prints a Markdown table. `served` (the default) serves the handlers on
//! one worker of perfshape's; `url` runs this program again as a server of its own
//! (`blocking_power serve`) and claims by its URL, where only a timing from outside is to
//! be had. `scripts/blocking-power.sh` runs both in a team's default (unoptimised) test
//! profile, quiet and with one core kept busy, into `docs/blocking-power.md`.

#[path = "../tests/apps/handlers.rs"]
#[allow(dead_code, unreachable_pub)]
mod handlers;
#[path = "../tests/apps/kv.rs"]
#[allow(dead_code, unreachable_pub)]
mod kv;
#[path = "../tests/apps/process.rs"]
#[allow(dead_code, unreachable_pub)]
mod process;
#[path = "../tests/apps/todos.rs"]
#[allow(dead_code, unreachable_pub)]
mod todos;

use std::io::Write;
use std::process::Command;
use std::time::Instant;

use axum::Router;
use perfshape::claim::GateMode;
use perfshape::{Endpoint, Error, PoolSettings, Request, Result, Target, Verdict};
use process::Served;
use serde_json::json;

/// Which service a row runs on.
#[derive(Clone, Copy, PartialEq, Eq)]
enum App {
    Handlers,
    Todos,
    Kv,
}

impl App {
    fn router(self) -> Router {
        match self {
            App::Handlers => handlers::app(),
            App::Todos => todos::app(),
            App::Kv => kv::app(100, 64 * 1024),
        }
    }

    fn name(self) -> &'static str {
        match self {
            App::Handlers => "handlers",
            App::Todos => "todos",
            App::Kv => "kv",
        }
    }
}

/// How a row's request is made on its target.
type Make = Box<dyn Fn(&Target) -> Endpoint>;

/// What a row's claim should come to, and what its headline (or, without a round, its
/// reason) should say for it, if anything.
#[derive(Clone, Copy)]
struct Expect {
    verdict: &'static str,
    says: Option<&'static str>,
}

impl Expect {
    const fn new(verdict: &'static str, says: Option<&'static str>) -> Expect {
        Expect { verdict, says }
    }
}

/// Holds, nothing to look for.
const HOLDS: Expect = Expect::new("holds", None);
/// Broken, the headline naming a wait on the worker.
const WAITS: Expect = Expect::new("broken", Some("while holding its worker"));
/// Broken, the headline naming a long poll.
const COMPUTES: Expect = Expect::new("broken", Some("in one poll without giving its worker back"));
/// By URL: inconclusive, a request too short for a timing from outside.
const TOO_SHORT: Expect = Expect::new(
    "inconclusive: too short",
    Some("too short against the load client's own"),
);
/// By URL: inconclusive, a hold that the service's own CPU explains — or, with the
/// machine busy besides, a CPU the service could not have.
const COMPUTING: Expect = Expect::new("inconclusive: computing (busy: the CPU)", None);
/// By URL: broken, naming both a held worker and a queue behind a resource.
const HELD_OR_QUEUED: Expect =
    Expect::new("broken, a held worker or a queue", Some("holds its worker"));

/// One row: what the handler does, what the claim should say served and by URL, and the
/// request.
struct Row {
    what: &'static str,
    served: Expect,
    url: Expect,
    app: App,
    endpoint: Make,
}

fn rows() -> Vec<Row> {
    fn get(path: &'static str) -> Make {
        Box::new(move |t: &Target| t.get(path))
    }
    fn make(f: fn(&Target) -> Endpoint) -> Make {
        Box::new(f)
    }
    let row = |what, served, url, app, endpoint| Row {
        what,
        served,
        url,
        app,
        endpoint,
    };
    // Unoptimised, a poll between 4 and 24 ms is for the build to decide: inconclusive,
    // naming the profile line; optimised, the 4 ms budget decides.
    let budget = Expect::new(
        "inconclusive naming the profile line where unoptimised; else as the budget says",
        Some("opt-level = 1"),
    );
    let queued = Expect::new("holds, queued elsewhere", Some("queued elsewhere"));
    use App::*;
    vec![
        row(
            "CPU 50 µs, in polls of ≤ 50 µs",
            HOLDS,
            TOO_SHORT,
            Handlers,
            get("/cpu?us=50"),
        ),
        row(
            "CPU 200 µs, in polls of ≤ 50 µs",
            HOLDS,
            TOO_SHORT,
            Handlers,
            get("/cpu?us=200"),
        ),
        row(
            "CPU 1 ms, in polls of ≤ 50 µs",
            HOLDS,
            TOO_SHORT,
            Handlers,
            get("/cpu?us=1000"),
        ),
        row(
            "todos: POST /todos (JSON in and out)",
            HOLDS,
            TOO_SHORT,
            Todos,
            make(|t| t.post("/todos").json(&json!({ "text": "buy tea" }))),
        ),
        row(
            "todos: GET /todos?limit=10",
            HOLDS,
            TOO_SHORT,
            Todos,
            get("/todos?limit=10"),
        ),
        row(
            "todos: GET /todos (100 todos)",
            HOLDS,
            TOO_SHORT,
            Todos,
            get("/todos"),
        ),
        row(
            "todos: PATCH /todos/{id}, ids varied",
            HOLDS,
            TOO_SHORT,
            Todos,
            make(|t| {
                t.patch("/todos/1")
                    .json(&json!({ "completed": true }))
                    .vary(|i, r: Request| r.with_path(format!("/todos/{}", 1 + i % 100)))
            }),
        ),
        row(
            "kv: POST /{key}, 64 KiB, keys varied",
            HOLDS,
            TOO_SHORT,
            Kv,
            make(|t| {
                t.post("/k")
                    .body(kv::value(7, 64 * 1024))
                    .vary(|i, r: Request| r.with_path(format!("/k-{i}")))
            }),
        ),
        row(
            "kv: GET /{key}, 64 KiB gzip",
            budget,
            Expect::new("inconclusive: computing, or too short", None),
            Kv,
            make(|t| t.get("/key-3").header("accept-encoding", "gzip")),
        ),
        row("kv: GET /keys", HOLDS, TOO_SHORT, Kv, get("/keys")),
        row(
            "kv: DELETE /admin/key/{key}, bearer token",
            HOLDS,
            TOO_SHORT,
            Kv,
            make(|t| t.delete("/admin/key/none").bearer_auth(kv::ADMIN_TOKEN)),
        ),
        row(
            "CPU 5 ms in one poll (of this build)",
            budget,
            Expect::new("inconclusive: too short, or computing", None),
            Handlers,
            get("/cpu?us=5000&chunk_us=5000"),
        ),
        row(
            "CPU 20 ms in one poll (of this build)",
            budget,
            COMPUTING,
            Handlers,
            get("/cpu?us=20000&chunk_us=20000"),
        ),
        row(
            "hashing, 5 ms optimised, in one poll",
            COMPUTES,
            COMPUTING,
            Handlers,
            get("/hash?kib=4400"),
        ),
        row(
            "hashing, 20 ms optimised, in one poll",
            COMPUTES,
            COMPUTING,
            Handlers,
            get("/hash?kib=17600"),
        ),
        row(
            "waits 2 ms of 20 ms on its worker",
            WAITS,
            HELD_OR_QUEUED,
            Handlers,
            get("/wait?us=2000&ms=20"),
        ),
        row(
            "waits 0.5 ms of 5 ms on its worker",
            WAITS,
            Expect::new("broken, or too short", None),
            Handlers,
            get("/wait?us=500&ms=5"),
        ),
        row(
            "60 µs and a 2 ms sync write on its worker",
            WAITS,
            TOO_SHORT,
            Handlers,
            get("/write?ms=2"),
        ),
        row(
            "a std mutex waited for on its worker",
            WAITS,
            TOO_SHORT,
            Handlers,
            get("/locked?ms=2"),
        ),
        row(
            "hashing 20 ms, spawn_blocking",
            HOLDS,
            Expect::new(
                "inconclusive: the CPU",
                Some("the machine's CPU was the limit"),
            ),
            Handlers,
            get("/hash?kib=17600&offload=1"),
        ),
        row(
            "waits 2 ms of 20 ms, awaited",
            HOLDS,
            HOLDS,
            Handlers,
            get("/wait?us=2000&ms=20&offload=1"),
        ),
        row(
            "waits 0.5 ms of 5 ms, awaited",
            HOLDS,
            Expect::new("holds, or too short", None),
            Handlers,
            get("/wait?us=500&ms=5&offload=1"),
        ),
        row(
            "60 µs and a 2 ms sync write, spawn_blocking",
            HOLDS,
            TOO_SHORT,
            Handlers,
            get("/write?ms=2&offload=1"),
        ),
        row(
            "the std mutex taken on spawn_blocking",
            HOLDS,
            TOO_SHORT,
            Handlers,
            get("/locked?ms=2&offload=1"),
        ),
        row(
            "20 ms queries on one connection, spawn_blocking",
            queued,
            HELD_OR_QUEUED,
            Handlers,
            get("/queued?ms=20"),
        ),
    ]
}

/// Why a claim came out inconclusive, in a word: its reason's kind.
fn why_inconclusive(reason: &str) -> &'static str {
    if reason.contains("too short against") {
        "too short"
    } else if reason.contains("the service's own CPU explains it") {
        "computing"
    } else if reason.contains("the machine's CPU was the limit") {
        "the CPU"
    } else if reason.contains("do not settle") {
        "unsettled"
    } else if reason.contains("this build cannot tell") {
        "the build"
    } else {
        "other"
    }
}

/// The median of `values`, or NaN when there are none.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(f64::NAN)
}

/// `blocking_power serve APP`: serves APP on one worker until standard input closes.
fn serve(app: &str) -> Result {
    let app = [App::Handlers, App::Todos, App::Kv]
        .into_iter()
        .find(|a| a.name() == app)
        .ok_or_else(|| Error::Invalid {
            field: "app",
            value: app.to_string(),
            allowed: "handlers, todos or kv".to_string(),
        })?;
    let target = Target::serve(PoolSettings::workers(1)?, app.router())?;
    let base = target.served().map(|s| s.base_url()).unwrap_or_default();
    println!("listening on {base}");
    std::io::stdout().flush().ok();
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    Ok(())
}

fn main() -> Result {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("serve") {
        return serve(args.get(1).map_or("handlers", String::as_str));
    }
    let runs: usize = args
        .first()
        .map(|a| a.parse().expect("RUNS is a whole number"))
        .unwrap_or(20);
    let by_url = args.get(1).map(String::as_str) == Some("url");
    let only = args.get(2).cloned().unwrap_or_default();
    println!(
        "| handler | expected | broken | holds | inconclusive (why) | its headline says why | median figure | median waiting | median longest poll | median claim time |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let dir = std::env::temp_dir().join("perfshape-blocking-power");
    for row in rows().into_iter().filter(|row| row.what.contains(&only)) {
        // A fresh service per row: one row's writes do not weigh on the next.
        let (target, _served) = if by_url {
            let mut command = Command::new(std::env::current_exe().expect("this program"));
            command.args(["serve", row.app.name()]);
            let served = Served::start(command);
            (Target::url(&served.base)?, Some(served))
        } else {
            (
                Target::serve(PoolSettings::workers(1)?, row.app.router())?,
                None,
            )
        };
        let endpoint = (row.endpoint)(&target);
        let expect = if by_url { row.url } else { row.served };
        let (mut broken, mut holds, mut inconclusive, mut said) = (0, 0, 0, 0);
        let mut whys: std::collections::BTreeMap<&str, usize> = Default::default();
        let (mut figures, mut waits, mut polls, mut times) = (vec![], vec![], vec![], vec![]);
        for _ in 0..runs {
            let started = Instant::now();
            let checked = endpoint
                .does_not_block_its_worker()
                .gate_mode(GateMode::Advisory)
                .artifacts_in(&dir)
                .check()?;
            times.push(started.elapsed().as_secs_f64());
            let report = checked.report();
            if expect
                .says
                .is_some_and(|why| report.finding().is_some_and(|f| f.contains(why)))
            {
                said += 1;
            }
            match checked.verdict() {
                Verdict::Broken => broken += 1,
                Verdict::Holds => holds += 1,
                Verdict::Inconclusive => {
                    inconclusive += 1;
                    *whys.entry(why_inconclusive(report.reason())).or_default() += 1;
                }
            }
            if !report.rounds().is_empty() {
                figures.push(report.median());
            }
            if let Some(w) = report.observed().get("waiting ms") {
                waits.push(*w);
            }
            if let Some(p) = report.observed().get("longest poll cpu ms") {
                polls.push(*p);
            }
        }
        let ms = |v: f64| {
            if v.is_nan() {
                "—".to_string()
            } else {
                format!("{v:.2} ms")
            }
        };
        let figure = median(figures);
        let said = match expect.says {
            Some(_) => format!("{said}/{runs}"),
            None => "—".to_string(),
        };
        let why: Vec<String> = whys.iter().map(|(w, k)| format!("{k} {w}")).collect();
        let inconclusive = match why.is_empty() {
            true => inconclusive.to_string(),
            false => format!("{inconclusive} ({})", why.join(", ")),
        };
        println!(
            "| {} | {} | {broken} | {holds} | {inconclusive} | {said} | {} | {} | {} | {:.2} s |",
            row.what,
            expect.verdict,
            if figure.is_nan() {
                "—".to_string()
            } else {
                format!("{figure:.3}")
            },
            ms(median(waits)),
            ms(median(polls)),
            median(times)
        );
        std::io::stdout().flush().ok();
    }
    Ok(())
}
