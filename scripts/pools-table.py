#!/usr/bin/env python3
"""The pools table of docs/probe.md: `concurrency_limit().about(k)` on pools of 3, 5, 6, 10,
12 and 40 of four kinds (experiments/tests/pools/table.rs), its controls about(k/2) and about(2k), run
quiet and with one core kept busy by `yes > /dev/null`. Prints the Markdown table; each
run's figures stay in target/perfshape/pools-table-<quiet|busy>.jsonl.

    python3 scripts/pools-table.py [--runs 10] [--control-runs 2] [--busy-runs 5]
    python3 scripts/pools-table.py --render-only

Standard library only; the Python pools need FastAPI and uvicorn in target/engines-venv
(`.ci/run` installs them).
"""

import argparse
import collections
import json
import os
import pathlib
import statistics
import subprocess

TABLE = "target/perfshape/pools-table-{}.jsonl"


def run(condition: str, runs: int, control_runs: int) -> None:
    """The ignored table test once, quiet or busy, into its JSON lines."""
    env = dict(
        os.environ,
        PERFSHAPE_POOL_RUNS=str(runs),
        PERFSHAPE_POOL_CONTROL_RUNS=str(control_runs),
        PERFSHAPE_POOL_TABLE=TABLE.format(condition),
    )
    busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if condition == "busy" else None
    try:
        subprocess.run(
            ["cargo", "nextest", "run", "--profile", "pools", "--run-ignored", "only",
             "-E", "test(the_table_of_pools)"],
            env=env, check=True,
        )
    finally:
        if busy:
            busy.kill()
            busy.wait()


def rows(condition: str) -> list:
    """The condition's rows: its table, where a later part (`pools-table-quiet-python.jsonl`,
    a kind run again with PERFSHAPE_POOL_KINDS) replaces the rows of the kinds it has."""
    base = pathlib.Path(TABLE.format(condition))
    parts = sorted(base.parent.glob(f"{base.stem}-*.jsonl"))
    lines = []
    for path in [base] + parts:
        if not path.exists():
            continue
        new = [json.loads(line) for line in path.read_text().splitlines()]
        kinds = {r["kind"] for r in new}
        lines = [r for r in lines if r["kind"] not in kinds] + new
    return lines


def cell(lines: list, kind: str, k: int, factor: float) -> list:
    return [r for r in lines if r["kind"] == kind and r["k"] == k and abs(r["claimed"] - factor * k) < 1e-9]


def render() -> None:
    quiet, busy = rows("quiet"), rows("busy")
    kinds = list(dict.fromkeys(r["kind"] for r in quiet + busy))
    sizes = sorted({r["k"] for r in quiet + busy})
    print("| pool | k | `about(k)` holds, quiet | estimate ÷ k, quiet (every round) | "
          "`about(k)` holds, busy | estimate ÷ k, busy | controls k/2 and 2k broken (quiet; busy) | "
          "knee of the first sweep (quiet) | claim time, quiet |")
    print("|---|---:|---:|---|---:|---|---:|---|---:|")
    for kind in kinds:
        for k in sizes:
            q, b = cell(quiet, kind, k, 1.0), cell(busy, kind, k, 1.0)
            if not q and not b:
                continue

            def holds(lines):
                return f"{sum(r['verdict'] == 'holds' for r in lines)}/{len(lines)}" if lines else "—"

            def spread(lines):
                ratios = [e / k for r in lines for e in r["estimates"]]
                return f"{min(ratios):.3f}–{max(ratios):.3f}" if ratios else "—"

            def broken(source):
                lines = cell(source, kind, k, 0.5) + cell(source, kind, k, 2.0)
                return f"{sum(r['verdict'] == 'broken' for r in lines)}/{len(lines)}" if lines else "—"

            knees = []
            for r in q:
                text = " ".join(r["explanation"])
                if "stops growing past " in text:
                    knee = text.split("stops growing past ")[1].split(" caller")[0]
                    queue = text.split("they queue at ")[1].split(")")[0]
                    knees.append(f"{knee}/{queue}")
            common = collections.Counter(knees).most_common(1)[0][0] if knees else "—"
            elapsed = statistics.median(r["elapsed_ms"] for r in q) / 1e3 if q else 0
            print(f"| {kind} | {k} | {holds(q)} | {spread(q)} | {holds(b)} | {spread(b)} | "
                  f"{broken(quiet)}; {broken(busy)} | {common} (most often) | {elapsed:.1f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--control-runs", type=int, default=2)
    parser.add_argument("--busy-runs", type=int, default=5)
    parser.add_argument("--render-only", action="store_true")
    args = parser.parse_args()
    if not args.render_only:
        run("quiet", args.runs, args.control_runs)
        run("busy", args.busy_runs, args.control_runs)
    render()


if __name__ == "__main__":
    main()
