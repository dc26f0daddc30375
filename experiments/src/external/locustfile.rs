//! A [`Schedule`] as a locustfile: one `FastHttpUser` class per row with `fixed_count`
//! users, who run the row's stages by the clock and name each request `row@round`.
//!
//! The start time is the master's: at `test_start` it fixes `t0`, the run's start, and
//! sends it to every worker with Locust's custom messages (the first stage starts a
//! [`LEAD`] after it, time for every user to spawn and every worker to hear it), so users
//! on other machines start each stage together (their clocks need only agree to a few milliseconds, as NTP
//! keeps them; the stages' drains absorb the rest).

use std::fmt::Write as _;

use super::engine::Engine;
use super::quoted;
use super::schedule::{LEAD, Schedule};
use super::scheduled_row::EngineLoad;
use crate::error::{Error, Result};

/// The locustfile's Python source for `schedule`, or why Locust cannot run it
/// ([`Schedule::check_engine`]: an open loop).
pub fn locustfile(schedule: &Schedule) -> Result<String> {
    schedule.check_engine(Engine::Locust)?;
    let mut py = String::new();
    let _ = writeln!(
        py,
        "# Written by perfshape {} for {}: {}.",
        env!("CARGO_PKG_VERSION"),
        schedule.experiment,
        schedule.title
    );
    let _ = writeln!(
        py,
        "# {} rows in {} interleaved rounds, {:.1} s in all; requests are named row@round.\n\
         # Every user class has `fixed_count` users, so run it with --users {u} --spawn-rate {u}.",
        schedule.rows.len(),
        schedule.rounds,
        schedule.total().as_secs_f64(),
        u = schedule.users(),
    );
    py.push_str(PRELUDE);
    let _ = writeln!(py, "LEAD_S = {:.3}", LEAD.as_secs_f64());
    let _ = writeln!(py, "TOTAL_S = {:.3}", schedule.total().as_secs_f64());
    py.push_str("ROWS = [\n");
    for (index, row) in schedule.rows.iter().enumerate() {
        let stages: Vec<String> = schedule
            .stages
            .iter()
            .filter(|s| s.row == index)
            .map(|s| format!("({}, {:.3})", s.round, s.start.as_secs_f64()))
            .collect();
        let (kind, users, per_user, think, ramp, duration) = match row.load {
            EngineLoad::ClosedLoop {
                users,
                think,
                ramp,
                duration,
            } => ("closed-loop", users, 0, think, ramp, duration),
            EngineLoad::Count { users, per_user } => (
                "count",
                users,
                per_user,
                Default::default(),
                Default::default(),
                Default::default(),
            ),
            // Refused above, every such row named; this keeps the refusal where it acts.
            EngineLoad::Arrival { .. } => {
                return Err(Error::invalid("rows", &row.id, "no open loop on Locust"));
            }
        };
        let _ = writeln!(
            py,
            "    {{\"id\": {id}, \"path\": {path}, \"kind\": \"{kind}\", \"users\": {users}, \
             \"per_user\": {per_user}, \"think_s\": {:.3}, \"ramp_s\": {:.3}, \
             \"duration_s\": {:.3},\n     \"stages\": [{}]}},",
            think.as_secs_f64(),
            ramp.as_secs_f64(),
            duration.as_secs_f64(),
            stages.join(", "),
            id = quoted(&row.id),
            path = quoted(&row.path),
        );
    }
    py.push_str("]\n");
    py.push_str(USERS);
    for (index, row) in schedule.rows.iter().enumerate() {
        let _ = writeln!(
            py,
            "\n\nclass Row{index}(_Row):\n    \"\"\"{}\"\"\"\n    fixed_count = {}\n    row = ROWS[{index}]",
            row.label.replace('\\', "\\\\").replace('"', "'"),
            row.load.users(),
        );
    }
    Ok(py)
}

const PRELUDE: &str = r#"
import random
import time

import gevent
import locust.runners
from locust import FastHttpUser, constant, events, task
from locust.exception import StopUser
from locust.runners import MasterRunner, WorkerRunner

# Workers report every second, not every 3 s: the run ends once each has reported after the
# last stage, so the interval is how long the end waits (read at each report, in every
# process that imports this file).
locust.runners.WORKER_REPORT_INTERVAL = 1.0

"#;

const USERS: &str = r#"START = {"t0": None}


@events.init.add_listener
def _listen_for_t0(environment, **_kwargs):
    if isinstance(environment.runner, WorkerRunner):
        def set_t0(environment, msg, **_kwargs):
            START["t0"] = msg.data

        environment.runner.register_message("perfshape_t0", set_t0)


@events.test_start.add_listener
def _fix_t0(environment, **_kwargs):
    # The master (or a single local process) fixes the start; workers are told it.
    if isinstance(environment.runner, WorkerRunner):
        return
    # Every stage's start counts from here, the first at LEAD_S.
    START["t0"] = time.time()
    if isinstance(environment.runner, MasterRunner):
        environment.runner.send_message("perfshape_t0", START["t0"])
    gevent.spawn(_quit_after_the_last_stage, environment)


REPORTED = {}


@events.worker_report.add_listener
def _note_report(client_id, data, **_kwargs):
    REPORTED[client_id] = time.time()


def _quit_after_the_last_stage(environment):
    # Every stage has drained by TOTAL_S: end the run then rather than at --run-time,
    # which stays as the bound — once every worker has sent its regular report after
    # the end. (Their final report, sent on quit, arrives after the master stops
    # listening: in Locust 2.47 a worker took 2.6 s to stop and the master waits 0.5 s;
    # five stages were lost that way.)
    end = START["t0"] + TOTAL_S
    _sleep_until(end)
    runner = environment.runner
    if isinstance(runner, MasterRunner):
        deadline = end + 2 * locust.runners.WORKER_REPORT_INTERVAL
        while time.time() < deadline:
            if sum(1 for at in REPORTED.values() if at > end) >= runner.worker_count:
                break
            gevent.sleep(0.05)
    runner.quit()


def _sleep_until(when):
    left = when - time.time()
    if left > 0:
        gevent.sleep(left)


class _Row(FastHttpUser):
    abstract = True
    wait_time = constant(0)
    network_timeout = 30.0
    connection_timeout = 10.0
    row = None

    @task
    def run_the_schedule(self):
        while START["t0"] is None:
            gevent.sleep(0.01)
        t0, row = START["t0"], self.row
        # A redirect is the route's answer, as perfshape's own client takes it: not
        # followed (Locust counts a 3xx as a success).
        for rnd, start in row["stages"]:
            name = "%s@%d" % (row["id"], rnd)
            ramp = random.uniform(0.0, row["ramp_s"]) if row["ramp_s"] > 0 else 0.0
            _sleep_until(t0 + start + ramp)
            if row["kind"] == "closed-loop":
                end = t0 + start + row["duration_s"]
                while time.time() < end:
                    self.client.get(row["path"], name=name, allow_redirects=False)
                    # No request starts after the end: a think past it would only eat
                    # into this row's next stage (rounds alternate, so it can be next).
                    if time.time() + row["think_s"] >= end:
                        break
                    if row["think_s"] > 0:
                        gevent.sleep(row["think_s"])
            else:
                for _ in range(row["per_user"]):
                    self.client.get(row["path"], name=name, allow_redirects=False)
        raise StopUser()
"#;
