#!/usr/bin/env python3
"""How often the watch decides as it must on the project's services: runs the watched
functional tests (tests/watched/: every correct route must hold, every blocking twin must be
broken, naming its route) RUNS times, quiet and with both cores kept busy, and prints each
test's outcomes and the false-alarm and miss rates as Markdown:

    python3 scripts/watch-rates.py --runs 50            # quiet, then both cores busy
    python3 scripts/watch-rates.py --runs 50 > docs/watch.md

A test that fails is a wrong verdict (a correct route not holding: a false alarm, or
undecided; a twin not broken: a miss); the output of a run with one is kept in
target/perfshape/watch-failures.log, each failing test's full report in it. "Busy" keeps one spin loop per core running beside the tests, in a process group of
their own, stopped by its id. Standard library only; the test binary is built once first.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


FAILURES = ROOT / "target" / "perfshape" / "watch-failures.log"


def run_once(busy: bool) -> dict[str, bool]:
    """One run of the watched tests: each test's name and whether it passed. A run with a
    failure is kept whole in FAILURES (each failing test prints the watch's full report)."""
    spinners = []
    if busy:
        for _ in range(os.cpu_count() or 2):
            spinners.append(
                subprocess.Popen(["bash", "-c", "while :; do :; done"], start_new_session=True)
            )
    try:
        out = subprocess.run(
            ["cargo", "nextest", "run", "-p", "perfshape", "-p", "inventory", "--test",
             "watched", "--no-fail-fast", "--color", "never"],
            cwd=ROOT, capture_output=True, text=True,
        )
    finally:
        for spinner in spinners:
            os.killpg(spinner.pid, signal.SIGKILL)
            spinner.wait()
    results = {}
    for line in (out.stdout + out.stderr).splitlines():
        m = re.match(r"\s*(PASS|FAIL) \[.*\] \(\s*\d+/\d+\) (perfshape|inventory)::watched (\S+)", line)
        if m:
            name = m.group(3) if m.group(2) == "perfshape" else f"inventory::{m.group(3)}"
            results[name] = m.group(1) == "PASS"
    if not results:
        sys.exit(f"no test ran:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    if not all(results.values()):
        FAILURES.parent.mkdir(parents=True, exist_ok=True)
        with FAILURES.open("a") as log:
            log.write(f"=== {'busy' if busy else 'quiet'} run, {time.ctime()}\n")
            log.write(out.stdout + out.stderr)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    subprocess.run(["cargo", "nextest", "run", "-p", "perfshape", "-p", "inventory", "--test",
                    "watched", "--no-run"], cwd=ROOT, check=True, capture_output=True)
    tallies = {}
    took = {}
    for busy in (False, True):
        began = time.time()
        counts: dict[str, int] = {}
        for i in range(args.runs):
            for test, passed in run_once(busy).items():
                counts.setdefault(test, 0)
                counts[test] += passed
            print(f"{'busy' if busy else 'quiet'} run {i + 1}/{args.runs}", file=sys.stderr)
        tallies[busy] = counts
        took[busy] = time.time() - began
    tests = sorted(tallies[False])
    print("# The watch on the project's services\n")
    print(
        "Each watched functional test of `tests/watched/` sends the requests a team's "
        "functional test sends (one to three a route, with its own reqwest client) and ends "
        "with `watch.nothing_blocked()?`, asserted: every route of a correct service must "
        "hold (`services::`), every blocking twin must be broken, its first line naming the "
        "route (`twins::`); beside them, the inventory example's four builds on SQLite "
        "(`examples/inventory/tests/watched.rs`: rusqlite on the worker named, the three "
        "other builds holding); and each kind of call that holds a worker, whose report "
        "must name the line of `tests/apps/held.rs` that made it (`located::`, "
        "[where.md](where.md)). Each was run "
        f"{args.runs} times quiet and {args.runs} times with both cores of this machine kept "
        "busy by spin loops; a failure is a false alarm (or an undecided route) on a correct "
        "service, a miss on a twin, a line not named (or named wrong) where in the code is "
        "read. Made by `python3 scripts/watch-rates.py --runs "
        f"{args.runs} > docs/watch.md`.\n"
    )
    print("| test | quiet: as it must | busy: as it must |")
    print("|---|---:|---:|")
    for test in tests:
        q, b = tallies[False].get(test, 0), tallies[True].get(test, 0)
        print(f"| `{test}` | {q} of {args.runs} | {b} of {args.runs} |")
    kinds = {
        "false alarms": lambda t: t.startswith("services::") or t == "inventory::every_other_build_holds",
        "misses": lambda t: t.startswith("twins::") or t == "inventory::rusqlite_on_the_worker_is_named",
        "lines not named": lambda t: t.startswith("located::"),
    }
    for what, belongs in kinds.items():
        for busy in (False, True):
            group = [t for t in tests if belongs(t)]
            wrong = sum(args.runs - tallies[busy].get(t, 0) for t in group)
            print(
                f"\n{what[0].upper() + what[1:]}, {'busy' if busy else 'quiet'}: {wrong} of "
                f"{len(group) * args.runs} watched tests ({len(group)} tests × {args.runs} runs)."
            )
    print(
        f"\nA run of the binary (its {len(tests)} tests, in parallel) took "
        f"{took[False] / args.runs:.1f} s quiet and {took[True] / args.runs:.1f} s busy, "
        "nextest's start included."
    )


if __name__ == "__main__":
    main()
