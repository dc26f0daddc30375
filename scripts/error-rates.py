#!/usr/bin/env python3
"""The gate's false-alarm rate on this machine, measured: run the shape suite K times
(optionally with one core kept busy by `yes > /dev/null`) and tally, per claim, how often
it held, broke or was inconclusive, and per test how often it failed.

    python3 scripts/error-rates.py --runs 20            # quiet machine
    python3 scripts/error-rates.py --runs 20 --busy     # one core kept busy
    python3 scripts/error-rates.py --runs 20 --tables   # the five tables' claims too

Each run's claim reports go to target/error-rates/<label>/run-<i>/ (PERFSHAPE_ARTIFACTS);
the tally is printed as a Markdown table, failures first. Standard library only.
"""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import time


def run_suite(artifacts: pathlib.Path, tables: bool) -> tuple[int, float, str]:
    """Runs the shape binary (and the tables' binary) once; returns nextest's exit code,
    the wall time, its log."""
    env = dict(os.environ, PERFSHAPE_ARTIFACTS=str(artifacts), PERFSHAPE_GATE="strict")
    which = ["--ignore-default-filter", "-E", "binary(shape) | binary(tables)"] if tables else [
        "-E",
        "binary(shape)",
    ]
    start = time.monotonic()
    done = subprocess.run(
        ["cargo", "nextest", "run", "--no-fail-fast", *which],
        env=env,
        capture_output=True,
        text=True,
    )
    return done.returncode, time.monotonic() - start, done.stdout + done.stderr


def failed_tests(log: str) -> list[str]:
    """Names of the tests nextest reported as failing."""
    names = set()
    for line in log.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "FAIL":
            names.add(parts[-1])
    return sorted(names)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    parser.add_argument("--tables", action="store_true", help="run the tables' claims too")
    args = parser.parse_args()
    label = "busy" if args.busy else "quiet"
    root = pathlib.Path("target/error-rates") / label
    subprocess.run(
        ["cargo", "nextest", "run", "--no-run", "--ignore-default-filter"],
        check=True,
        capture_output=True,
    )

    verdicts = collections.defaultdict(collections.Counter)
    failures = collections.Counter()
    walls = []
    for i in range(1, args.runs + 1):
        artifacts = root / f"run-{i}"
        if artifacts.exists():
            for old in artifacts.glob("*.json"):
                old.unlink()
        busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if args.busy else None
        try:
            code, wall, log = run_suite(artifacts, args.tables)
        finally:
            if busy:
                busy.kill()
                busy.wait()
        walls.append(wall)
        for name in failed_tests(log):
            failures[name] += 1
        for report in artifacts.glob("*.json"):
            claim = json.loads(report.read_text())
            if "verdict" in claim:
                verdicts[claim["name"]][claim["verdict"]] += 1
        print(f"run {i}/{args.runs} ({label}): exit {code}, {wall:.1f} s", file=sys.stderr)

    print(f"{args.runs} runs ({label}): suite wall {min(walls):.1f}–{max(walls):.1f} s")
    print(f"tests that failed: {sum(failures.values())} in all")
    for name, count in failures.most_common():
        print(f"  {name}: {count} of {args.runs}")
    print()
    print("| claim | holds | broken | inconclusive |")
    print("|---|---:|---:|---:|")
    rows = sorted(verdicts.items(), key=lambda kv: (kv[1]["holds"] - sum(kv[1].values()), kv[0]))
    for name, counts in rows:
        print(f"| {name} | {counts['holds']} | {counts['broken']} | {counts['inconclusive']} |")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
