#!/usr/bin/env python3
"""How often the watch decides as it must on the project's services: runs the watched
functional tests (every correct route must hold, every blocking twin must be broken, naming
its route; each held call's line named) RUNS times in each of three conditions — quiet; both
cores kept busy by spin loops; and beside the rest of the suite, run again and again, with
one core kept busy — and prints each test's outcomes and the false-alarm and miss rates as
Markdown:

    python3 scripts/watch-rates.py --runs 50 > docs/watch.md

The watched tests are those of tests/watched/ (the served watch and the tower layer) and the
inventory, ledger and — where PostgreSQL's server binaries are found — accounts examples'.
A test that fails is a wrong verdict (a correct route not holding: a false alarm, or
undecided; a twin not broken: a miss); the output of a run with one is kept in
target/perfshape/watch-failures.log, each failing test's full report in it. Spin loops and
the suite beside run in process groups of their own, stopped by their ids. Standard library
only; the test binaries are built once first.
"""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# Each condition: its name, the spin loops kept running, and whether the rest of the suite
# runs beside.
CONDITIONS = [
    ("quiet", 0, False),
    ("busy", os.cpu_count() or 2, False),
    ("beside the suite", 1, True),
]


def postgres() -> bool:
    """Whether PostgreSQL's server binaries are found, as the accounts example looks."""
    return bool(shutil.which("initdb")) or bool(list(Path("/usr/lib/postgresql").glob("*/bin/initdb")))


def packages() -> list[str]:
    found = ["-p", "perfshape", "-p", "inventory", "-p", "ledger"]
    return found + (["-p", "accounts"] if postgres() else [])


FAILURES = ROOT / "target" / "perfshape" / "watch-failures.log"


def run_once(spin: int) -> dict[str, bool]:
    """One run of the watched tests beside `spin` spin loops: each test's name and whether it
    passed. A run with a failure is kept whole in FAILURES (each failing test prints the
    watch's full report)."""
    spinners = [
        subprocess.Popen(["bash", "-c", "while :; do :; done"], start_new_session=True)
        for _ in range(spin)
    ]
    try:
        out = subprocess.run(
            ["cargo", "nextest", "run", *packages(), "--test", "watched", "--no-fail-fast",
             "--color", "never"],
            cwd=ROOT, capture_output=True, text=True,
        )
    finally:
        for spinner in spinners:
            os.killpg(spinner.pid, signal.SIGKILL)
            spinner.wait()
    results = {}
    for line in (out.stdout + out.stderr).splitlines():
        m = re.match(r"\s*(PASS|FAIL) \[.*\] \(\s*\d+/\d+\) (perfshape|inventory|ledger|accounts)::watched (\S+)", line)
        if m:
            name = m.group(3) if m.group(2) == "perfshape" else f"{m.group(2)}::{m.group(3)}"
            results[name] = m.group(1) == "PASS"
    if not results:
        sys.exit(f"no test ran:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    if not all(results.values()):
        FAILURES.parent.mkdir(parents=True, exist_ok=True)
        with FAILURES.open("a") as log:
            log.write(f"=== run with {spin} spin loops, {time.ctime()}\n")
            log.write(out.stdout + out.stderr)
    return results


def suite_beside() -> subprocess.Popen:
    """The rest of the suite, run again and again until stopped (its outcome not read)."""
    return subprocess.Popen(
        ["bash", "-c",
         "while :; do cargo nextest run -p perfshape -E 'not binary(watched)' --no-fail-fast "
         ">/dev/null 2>&1; done"],
        cwd=ROOT, start_new_session=True,
    )


NOTES = """
## What the watch sees, and how it decides

- **Two ways in.** `Target::watch` watches a router perfshape serves: every poll of each
  response, and the workers' run outside them (a task a handler spawned, a connection's
  driver, a background job), `block_in_place`'s hand-off told apart. `Watch::layer` gives a
  tower layer for a router a test calls in its own process (`oneshot`, axum-test's
  `TestServer`): every poll of each layered response on the thread that runs it, that thread
  sampled for the call and its stack — not the tasks a handler spawns, and a hand-off reads
  as a hold. Its report says so.
- **Requests a route needs.** One, where the route blocks: the kernel's call, a sleep of a
  millisecond or more outside a lock, or a poll past the budget. Two where the machine is
  busy and no sample caught the call: the sampler, ticking every 0.5 ms, was then kept from
  its CPU across the sleep, as a lock's holder can be for as long, so the count decides —
  a route sent once that slept so past 1.5 ms says "one more request tells", and one
  shorter holds. Three where one cannot tell a short call from a brief lock (a route that
  hands its work to the blocking pool may sleep a fraction of a millisecond on the pool's
  own lock in one request; a std mutex waited for, a sync of a small file): the rule asks
  two of them, and half, to have slept, and says "one more request tells" of a route sent
  once that slept between 0.1 and 1 ms.
- **A database on loopback.** A sync driver's query to a process on this machine can be
  answered before its worker sleeps: no wait, nothing sampled. The watch reads, around each
  poll, the data segments sent and received on the process's connections to local
  processes (`TCP_INFO`): a route inside whose polls a round trip fell, in half its
  requests or more, is inconclusive, naming the process and the `Downstream` line that
  makes it decisive. Whose round trip it was is not read: a correct build's poll can span
  another thread's (the offloaded build's blocking thread, woken in the poll, takes the
  worker's CPU and makes the query), and telling them apart by the CPU this process's other
  threads used meanwhile was tried — 6–108 µs inside the diesel build's own round trips,
  ≈56 µs inside the offloaded build's borrowed ones — and dropped. So on loopback the
  correct builds hold or are inconclusive, never broken, and diesel on the worker is broken
  or inconclusive, never held; through a `Downstream` they decide.
- **A busy machine and a sleep no sample caught.** An unsampled sleep means the sampler,
  ticking every 0.5 ms, was kept from its CPU across it, as a lock's holder can be for as
  long: on a busy machine (this process's threads waiting for a CPU 5 % of the watch or
  more) such a sleep decides by the count of requests, as a lock's does. Before, a lone
  one past 1.5 ms was a wait: the inventory's sqlx build's `GET /items/{sku}`, sent once,
  slept 1.6 ms so once in 750 runs beside the suite. The functional tests send each route
  the rule must decide from a sleep twice or more.
- **Page faults.** A worker can sleep in a page fault that waits for the address space's
  lock (`lock_mm_and_find_vma`, read from the kernel's stack of the worker), which another
  thread holds to map or unmap memory while a busy machine keeps it from its CPU: 0.17 ms
  outside every response, in the ledger's and the accounts' offloaded builds, once in 50
  runs each with both cores busy. A page fault is judged as a lock is.
- **A library's channel lock, its holder preempted.** Where the machine is busy, the
  inventory's sqlx build can sleep on flume's channel lock in every request of a route:
  the worker's stack in `std::sync::Mutex::lock` under `flume::Shared::recv`. flume's
  `send` calls the receiver's waker while it holds that lock, and the kernel can preempt
  sqlx's SQLite thread right there; the worker it woke then waits for it. The thread that
  woke a task is noted, and of a sleep on a lock what its time on a run queue since
  explains is the machine's; only the rest counts (`thread_clock::woken`). Before, the
  count rule read it as the twins' std mutex: 1 false alarm in 750 runs, busy and beside
  the suite alike. A holder that sleeps or computes under the lock explains none of it:
  the std-mutex twins' 10 ms holds keep 8.4 ms or more. Four rules that looked at every
  other thread of the process instead were measured and dropped ([findings.md](findings.md)):
  on a busy machine some thread always waits for a CPU — an idle rayon worker spins in
  `sched_yield`, runnable all along.
- **The sampler's first tick.** The sampling thread is put in the real-time class before
  it first runs, and the watch begins once it runs: on a busy machine a new thread waited
  for its first CPU longer than a functional test's two requests took (the spawned task's
  4 ms sleeps met in no tick, its line not named; five such runs in 750 busy or beside
  the suite). A page fault or a lock outside every response decides by its count of
  stretches, as inside a poll: the address space's lock, its holder preempted, held the
  accounts' offloaded build 1.4 ms once in 50 quiet runs.
- **Lines not named.** One run in 450 quiet: the synced-write twin's first run after the
  test binaries were built, where one poll of `GET /fsync` used 26 ms of CPU (38 of the 48
  samples of its polls saw the worker running, none of their stacks in the service's own
  code) and the report led with that stretch, broken, rather than the `fdatasync()` it
  also named with its line. CPU the kernel spends inside a call is counted as the poll's
  computing; telling it apart is not done.
"""


def correct(test: str) -> bool:
    """A watched test of correct routes only: a failure is a false alarm."""
    return test.startswith(("services::", "layered::oneshot_handlers", "layered::oneshot_on_",
                            "layered::axum_test_the_")) or test in (
        "inventory::every_other_build_holds", "ledger::the_store_client_on_the_blocking_pool_holds",
        "accounts::at_production_distance_the_fixes_hold")


def twin(test: str) -> bool:
    """A watched test of a blocking twin: a failure is a miss."""
    if test.endswith("_names_its_line"):
        return False
    return test.startswith(("twins::", "layered::oneshot_a_", "layered::axum_test_a_")) or test in (
        "inventory::rusqlite_on_the_worker_is_named", "ledger::the_store_client_on_the_worker_is_named",
        "accounts::at_production_distance_diesel_on_the_worker_is_named")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    subprocess.run(["cargo", "nextest", "run", *packages(), "--test", "watched", "--no-run"],
                   cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["cargo", "nextest", "run", "-p", "perfshape", "--no-run"],
                   cwd=ROOT, check=True, capture_output=True)
    tallies: dict[str, dict[str, int]] = {}
    took = {}
    for name, spin, suite in CONDITIONS:
        beside = suite_beside() if suite else None
        began = time.time()
        counts: dict[str, int] = {}
        try:
            for i in range(args.runs):
                for test, passed in run_once(spin).items():
                    counts[test] = counts.get(test, 0) + passed
                print(f"{name} run {i + 1}/{args.runs}", file=sys.stderr)
        finally:
            if beside:
                os.killpg(beside.pid, signal.SIGKILL)
                beside.wait()
        tallies[name] = counts
        took[name] = time.time() - began
    names = [name for name, _, _ in CONDITIONS]
    tests = sorted(tallies["quiet"])
    print("# The watch on the project's services\n")
    print(
        "Each watched functional test sends the requests a team's functional test sends (one "
        "to three a route, with its own client, asserting on the answers) and ends with "
        "`watch.nothing_blocked()?`, asserted. `services::` (tests/watched/) are the "
        "project's correct services, every route of which must hold; `twins::` their "
        "blocking twins, each broken with its first line naming the route; `located::` each "
        "kind of call that holds a worker, whose report must name the line of "
        "`tests/apps/held.rs` that made it ([where.md](where.md)); `layered::` the same "
        "handlers under the tower layer, called with `oneshot` and through axum-test's "
        "`TestServer`; `inventory::` the inventory example's four builds on SQLite (rusqlite "
        "on the worker named, the three other builds holding); `ledger::` the gRPC ledger's "
        "two builds; `accounts::` the accounts example's three builds on a PostgreSQL "
        "cluster, at production's distance through a `Downstream` (the fixes holding, diesel "
        "on the worker named) and on loopback (diesel never holding — broken, or "
        "inconclusive naming postgres and the `Downstream` line — and the fixes never "
        "broken). "
        f"Each was run {args.runs} times in each condition: quiet; with both cores of this "
        "machine kept busy by spin loops; and beside the rest of the suite, run again and "
        "again, with one core kept busy. A failure is a false alarm (or an undecided route) "
        "on a correct service, a miss on a twin, a line not named (or named wrong) where in "
        "the code is read. Made by `python3 scripts/watch-rates.py --runs "
        f"{args.runs} > docs/watch.md`.\n"
    )
    print("| test | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for test in tests:
        cells = [f"{tallies[n].get(test, 0)} of {args.runs}" for n in names]
        print(f"| `{test}` | " + " | ".join(cells) + " |")
    kinds = {
        "false alarms": correct,
        "misses": twin,
        "lines not named": lambda t: t.startswith("located::") or t == "layered::oneshot_a_synced_write_names_its_line",
        "loopback held or broken wrongly": lambda t: t == "accounts::on_loopback_diesel_never_holds_and_the_fixes_are_never_broken",
    }
    print()
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for what, belongs in kinds.items():
        group = [t for t in tests if belongs(t)]
        cells = [
            f"{sum(args.runs - tallies[n].get(t, 0) for t in group)} of {len(group) * args.runs}"
            for n in names
        ]
        print(f"| {what} ({len(group)} tests) | " + " | ".join(cells) + " |")
    print(
        f"\nA run of the watched tests ({len(tests)}, in parallel) took "
        + ", ".join(f"{took[n] / args.runs:.1f} s {n}" for n in names)
        + ", nextest's start included."
    )
    print(NOTES)


if __name__ == "__main__":
    main()
