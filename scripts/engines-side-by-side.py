#!/usr/bin/env python3
"""Locust's and k6's throughput for seed 004's rows, side by side, from a series of the
engines' profile (`python3 scripts/error-rates.py --runs 10 --engines`): per row, the
median and range over every run's rounds of each engine's ordering claim, and the model's
figure for the fixture's pool. Prints a Markdown table (docs/scale-out.md has it).

    python3 scripts/engines-side-by-side.py [target/error-rates/engines-quiet]

Both engines offer the same rows to the same demo service on the same pool; Locust's
loops last 600 ms and k6's 1000 ms (k6's least), and a row's throughput is its requests ÷
its loop, so the figures compare. Standard library only.
"""

import json
import pathlib
import statistics
import sys


def main() -> int:
    series = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/error-rates/engines-quiet")
    runs = sorted(series.glob("run-*"))
    if not runs:
        sys.exit(f"error: no runs in {series}: run `python3 scripts/error-rates.py --engines` first")
    figures: dict[str, dict[str, list[float]]] = {}
    expected: dict[tuple[str, str], float] = {}
    for run in runs:
        for engine in ("locust", "k6"):
            for path in run.glob(f"seed-004-throughput-in-the-published-order-from-{engine}-*.json"):
                report = json.loads(path.read_text())
                rows = [side[0] for side in report["sides"]]
                for round_ in report["rounds"]:
                    for row, figure in zip(rows, round_["figures"]):
                        figures.setdefault(row, {}).setdefault(engine, []).append(figure)
        for path in run.glob("seed-004-*-from-*-the-model-on-*.json"):
            report = json.loads(path.read_text())
            words = report["name"].split()  # seed-004 ROW from ENGINE ÷ the model …
            if report.get("expected") and words[3] in ("locust", "k6"):
                expected[(words[1], words[3])] = report["expected"][0]["value"]
    print(f"{len(runs)} runs of `{series.name}`, 3 rounds each: requests per second")
    print()
    print("| row | Locust (600 ms loops) | k6 (1000 ms loops) | k6 ÷ Locust | the model (600 / 1000 ms) |")
    print("|---|---:|---:|---:|---:|")
    for row, by_engine in figures.items():
        cells = []
        for engine in ("locust", "k6"):
            values = by_engine.get(engine, [])
            cells.append(
                f"{statistics.median(values):.0f} ({min(values):.0f}–{max(values):.0f})"
                if values else "—"
            )
        ratio = (
            statistics.median(by_engine["k6"]) / statistics.median(by_engine["locust"])
            if by_engine.get("k6") and by_engine.get("locust") else float("nan")
        )
        model = " / ".join(
            f"{expected[(row, engine)]:.0f}" if (row, engine) in expected else "—"
            for engine in ("locust", "k6")
        )
        print(f"| {row} | {cells[0]} | {cells[1]} | {ratio:.2f} | {model} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
