#!/usr/bin/env python3
"""What a hold costs by the route's time: reads the claim reports a run wrote (the JSON
artifacts under a folder, `PERFSHAPE_ARTIFACTS`) and prints, for the claims about a hold
that held, the time each measured against the time of one request alone, grouped by that
time (under 1 ms, 1-50 ms, over 50 ms), with the fan-out each round sent.

    python3 scripts/claim-cost.py target/perfshape/suite
"""

import glob
import json
import os
import sys

GROUPS = [("under 1 ms", 0.0, 1.0), ("1-50 ms", 1.0, 50.0), ("over 50 ms", 50.0, 1e12)]


def rows(folder):
    for path in glob.glob(os.path.join(folder, "*.json")):
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError):
            continue
        if not isinstance(report, dict) or report.get("verdict") != "holds":
            continue
        name = report.get("name", "")
        observed = report.get("observed", {})
        if name.endswith("does not block its worker") and "alone ms" in observed:
            route = observed["alone ms"]
        elif "keeps answering while" in name and "slow request ms" in observed:
            route = observed["slow request ms"]
        else:
            continue
        elapsed = report.get("elapsed", 0.0) / 1000.0
        n = report.get("context", {}).get("n", "?").split(" ")[0]
        kind = "blocking" if name.endswith("worker") else "keeps answering"
        yield kind, route, elapsed, len(report.get("rounds", [])), n, name


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    found = sorted(rows(sys.argv[1]), key=lambda r: (r[0], r[1]))
    if not found:
        sys.exit(f"no held claim about a hold in {sys.argv[1]}")
    print("| claim | route's request | claims | each took (s) | rounds | fan-out |")
    print("|---|---|---:|---|---|---|")
    for kind in ("blocking", "keeps answering"):
        for label, low, high in GROUPS:
            group = [r for r in found if r[0] == kind and low <= r[1] < high]
            if not group:
                continue
            took = [r[2] for r in group]
            rounds = [r[3] for r in group]
            fan_outs = sorted({r[4] for r in group}, key=lambda x: (len(x), x))
            print(
                f"| {kind} | {label} | {len(group)} | {min(took):.2f}-{max(took):.2f} "
                f"| {min(rounds)}-{max(rounds)} | {', '.join(fan_outs)} |"
            )


if __name__ == "__main__":
    main()
