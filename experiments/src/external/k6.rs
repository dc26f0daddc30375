//! A [`Schedule`] as a k6 script: one scenario per stage (row × round) at its start time,
//! with the executor that offers the row's load (`constant-vus` or `ramping-vus` for a
//! closed loop, `per-vu-iterations` for a counted load, `constant-arrival-rate` for an open
//! loop), every request tagged `stage: row@round`, and a threshold per stage so that k6's
//! end-of-test summary keeps each stage's submetrics for `perfshape judge`.
//!
//! k6 tags an open loop's `dropped_iterations` with the scenario's name only, not with its
//! tags (measured on k6 1.1: `dropped_iterations{stage:…}` stayed 0 while the total counted
//! 120), so those are kept per scenario, [`scenario_name`], which the reader maps back to
//! the stage.
//!
//! k6 schedules scenarios by `startTime` itself, so the same script runs on one machine
//! or split across pods by k6-operator (each runner offers its share of every scenario).

use std::fmt::Write as _;

use super::engine::Engine;
use super::quoted;
use super::schedule::{K6_MIN_DURATION, Schedule, scenario_name};
use super::scheduled_row::EngineLoad;
use crate::error::Result;

/// The k6 script for `schedule`, or why k6 would refuse it ([`Schedule::check_engine`]).
/// The host is `PERFSHAPE_HOST` (default `http://127.0.0.1:8080`, a local `perfshape
/// serve`); the summary is written to `PERFSHAPE_SUMMARY` (default
/// `perfshape-k6-summary.json`).
pub fn k6_script(schedule: &Schedule) -> Result<String> {
    schedule.check_engine(Engine::K6)?;
    let mut js = String::new();
    let _ = writeln!(
        js,
        "// Written by perfshape {} for {}: {}.\n\
         // {} rows in {} interleaved rounds, {:.1} s in all; each stage's requests are tagged\n\
         // stage: row@round. Run: k6 run -e PERFSHAPE_HOST=http://host:port this.js, then\n\
         // perfshape judge FIXTURE perfshape-k6-summary.json.",
        env!("CARGO_PKG_VERSION"),
        schedule.experiment,
        schedule.title,
        schedule.rows.len(),
        schedule.rounds,
        schedule.total().as_secs_f64(),
    );
    js.push_str(
        "import http from 'k6/http';\nimport { sleep } from 'k6';\n\n\
         const HOST = __ENV.PERFSHAPE_HOST || 'http://127.0.0.1:8080';\n\
         const SUMMARY = __ENV.PERFSHAPE_SUMMARY || 'perfshape-k6-summary.json';\n\n\
         const ROWS = {\n",
    );
    for row in &schedule.rows {
        let think = match row.load {
            EngineLoad::ClosedLoop { think, .. } => think.as_secs_f64(),
            EngineLoad::Count { .. } | EngineLoad::Arrival { .. } => 0.0,
        };
        let _ = writeln!(
            js,
            "  {}: {{ path: {}, think: {think:.3} }},",
            quoted(&row.id),
            quoted(&row.path)
        );
    }
    // A redirect is the route's answer, as perfshape's own client takes it: not followed
    // (k6 counts a 3xx as answered, not failed).
    js.push_str(
        "};\n\nexport const options = {\n  discardResponseBodies: true,\n  maxRedirects: 0,\n  scenarios: {\n",
    );
    let mut thresholds = String::new();
    for (index, stage) in schedule.stages.iter().enumerate() {
        let row = &schedule.rows[stage.row];
        let name = schedule.request_name(stage);
        let start = stage.start.as_millis();
        let grace = schedule.drain(stage.row).as_millis().max(1);
        let executor = match row.load {
            EngineLoad::ClosedLoop {
                users,
                ramp,
                duration,
                ..
            } if ramp.is_zero() => format!(
                "executor: 'constant-vus', vus: {users}, duration: '{}ms', exec: 'closedLoop'",
                duration.as_millis()
            ),
            EngineLoad::ClosedLoop {
                users,
                ramp,
                duration,
                ..
            } => format!(
                "executor: 'ramping-vus', startVUs: 0, stages: [{{ duration: '{}ms', target: \
                 {users} }}, {{ duration: '{}ms', target: {users} }}], exec: 'closedLoop'",
                ramp.as_millis(),
                duration.saturating_sub(ramp).as_millis()
            ),
            // A bound, not a pace: the stage's slot, or k6's least.
            EngineLoad::Count { users, per_user } => format!(
                "executor: 'per-vu-iterations', vus: {users}, iterations: {per_user}, \
                 maxDuration: '{}ms', exec: 'counted'",
                stage.length.max(K6_MIN_DURATION).as_millis()
            ),
            // `requests` starts per the row's active time, at the row's rate to the
            // millisecond; k6 also starts one at the duration's very end (measured: 151
            // of 150), so the duration stops half an interval short of it.
            load @ EngineLoad::Arrival {
                requests,
                max_in_flight,
                ..
            } => {
                let active = load.active().as_secs_f64() * 1e3;
                format!(
                    "executor: 'constant-arrival-rate', rate: {requests}, timeUnit: \
                     '{active:.0}ms', duration: '{:.3}ms', preAllocatedVUs: {max_in_flight}, \
                     maxVUs: {max_in_flight}, exec: 'counted'",
                    active - active / requests.max(1) as f64 / 2.0
                )
            }
        };
        let _ = writeln!(
            js,
            "    {}: {{ {executor}, startTime: '{start}ms', gracefulStop: '{grace}ms', \
             env: {{ ROW: {} }}, tags: {{ stage: {} }} }},",
            scenario_name(index),
            quoted(&row.id),
            quoted(&name)
        );
        for (metric, rule) in [
            ("http_reqs", "count>=0"),
            ("http_req_failed", "rate>=0"),
            ("http_req_duration", "max>=0"),
        ] {
            let _ = writeln!(
                thresholds,
                "    {}: [{}],",
                quoted(&format!("{metric}{{stage:{name}}}")),
                quoted(rule)
            );
        }
        if matches!(row.load, EngineLoad::Arrival { .. }) {
            let _ = writeln!(
                thresholds,
                "    {}: [\"count>=0\"],",
                quoted(&format!(
                    "dropped_iterations{{scenario:{}}}",
                    scenario_name(index)
                ))
            );
        }
    }
    js.push_str("  },\n  // Always true: they make k6 keep each stage's submetrics in its summary.\n  thresholds: {\n");
    js.push_str(&thresholds);
    js.push_str("  },\n};\n");
    js.push_str(
        r#"
export function closedLoop() {
  const row = ROWS[__ENV.ROW];
  http.get(HOST + row.path);
  if (row.think > 0) {
    sleep(row.think);
  }
}

export function counted() {
  http.get(HOST + ROWS[__ENV.ROW].path);
}

export function handleSummary(data) {
  return {
    [SUMMARY]: JSON.stringify(data, null, 2),
    stdout: 'perfshape: the summary is in ' + SUMMARY + '; judge it with perfshape judge\n',
  };
}
"#,
    );
    Ok(js)
}
