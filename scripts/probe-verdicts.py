#!/usr/bin/env python3
"""`perfshape probe`'s sentence on four cases, K runs each, quiet and with one core kept
busy by `yes > /dev/null`: /health of `perfshape serve --workers 2` (no work: the CPU is
the limit), /blocking?ms=20 on the same 2 workers (a pool of 2), /async?ms=20 (no
limit). Prints the tally as a Markdown table; the raw sentences go to
target/probe-verdicts/<quiet|busy>.json.

    python3 scripts/probe-verdicts.py --runs 10 [--busy]

Standard library only.
"""

import argparse
import collections
import json
import pathlib
import re
import socket
import subprocess
import sys
import time

PERFSHAPE = "target/release/perfshape"
CASES = [
    ("/health", "limited by CPU"),
    ("/blocking?ms=20", "a pool of ≈2"),
    ("/async?ms=20", "no cap found"),
]


def verdict(sentence: str) -> str:
    """The sentence's attribution, in a few words."""
    if "limited by CPU" in sentence:
        return "limited by CPU"
    if "the load client was the limit" in sentence:
        return "the load client"
    if "not attributed" in sentence:
        return "not attributed"
    if "still grows" in sentence:
        return "no cap found"
    pool = re.search(r"behaves like a pool of ≈([0-9.]+)", sentence)
    if pool:
        k = float(pool.group(1))
        return "a pool of ≈2" if 1.6 <= k <= 2.5 else f"a pool of ≈{k:.1f}"
    return "other: " + sentence


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--bin", "perfshape"], check=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [PERFSHAPE, "serve", "--workers", "2", "--bind", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
    )
    busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if args.busy else None
    results = {}
    try:
        time.sleep(0.5)
        for path, expected in CASES:
            sentences = []
            for _ in range(args.runs):
                done = subprocess.run(
                    [PERFSHAPE, "probe", f"http://127.0.0.1:{port}{path}"],
                    capture_output=True,
                    text=True,
                )
                lines = done.stdout.strip().splitlines()
                sentences.append(lines[-1] if lines else done.stderr.strip())
            results[path] = {"expected": expected, "sentences": sentences}
    finally:
        for process in [busy, server]:
            if process:
                process.kill()
                process.wait()
    out = pathlib.Path("target/probe-verdicts")
    out.mkdir(parents=True, exist_ok=True)
    name = "busy" if args.busy else "quiet"
    (out / f"{name}.json").write_text(json.dumps(results, indent=1))
    print(f"| {name}: endpoint | expected | right | what the probe said ({args.runs} runs) |")
    print("|---|---|---:|---|")
    for path, result in results.items():
        said = collections.Counter(verdict(s) for s in result["sentences"])
        right = said[result["expected"]]
        print(
            f"| `{path}` | {result['expected']} | {right}/{args.runs} | "
            + ", ".join(f"{v} ×{n}" for v, n in said.most_common())
            + " |"
        )


if __name__ == "__main__":
    sys.exit(main())
