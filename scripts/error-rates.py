#!/usr/bin/env python3
"""The gate's error rates and margins on this machine, measured: run the shape suite (or
the negative controls) K times, optionally with one core kept busy by `yes > /dev/null`,
and tally per claim how often it held, broke or was inconclusive, and how far its median
sat from its band's nearest edge (the margin, in noise floors and per cent); per test how
often it failed.

    python3 scripts/error-rates.py --runs 20                  # the suite, quiet machine
    python3 scripts/error-rates.py --runs 10 --busy           # one core kept busy
    python3 scripts/error-rates.py --runs 20 --tables         # the five tables' claims too
    python3 scripts/error-rates.py --runs 20 --controls       # the negative controls
    python3 scripts/error-rates.py --runs 10 --controls --busy
    python3 scripts/error-rates.py --runs 20 --controls --filter 'test(c3)'  # a part only
    python3 scripts/error-rates.py --runs 10 --engines        # seed 004 on Locust and k6
    python3 scripts/error-rates.py --runs 20 --release --filter 'package(inventory)'  # optimised
    python3 scripts/error-rates.py --margins > docs/margins.md  # the page, from the series

Each run's claim reports go to target/error-rates/<series>/run-<i>/ (PERFSHAPE_ARTIFACTS)
and each series' tally to target/error-rates/<series>/tally.json; the tally is printed as
a Markdown table, failures first. `--margins` reads the tallies of the suite and the
controls, quiet and busy, and prints docs/margins.md. Standard library only.
"""

import argparse
import collections
import json
import os
import pathlib
import statistics
import subprocess
import sys
import time

ROOT = pathlib.Path("target/error-rates")
# What a control must clear in every series, as the project's standard: its median this
# many noise floors, and this share, outside its band.
FLOORS, RELATIVE = 3.0, 0.15


def run_once(artifacts: pathlib.Path, which: list[str]) -> tuple[int, float, str]:
    """Runs nextest once; returns its exit code, the wall time, its log."""
    env = dict(os.environ, PERFSHAPE_ARTIFACTS=str(artifacts), PERFSHAPE_GATE="strict")
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


def series(args) -> tuple[str, list[str]]:
    """The series' folder name and nextest's filter arguments."""
    label = "busy" if args.busy else "quiet"
    if args.controls:
        name, which = f"controls-{label}", "binary(controls)"
        profile = ["--profile", "selftest", "--ignore-default-filter"]
    elif args.engines:
        name, which = f"engines-{label}", "binary(engines)"
        profile = ["--profile", "engines"]
    elif args.tables:
        name, which = f"suite-tables-{label}", "(binary(shape) | binary(tables))"
        profile = ["--ignore-default-filter"]
    else:
        name, which, profile = f"suite-{label}", "binary(shape)", []
    if args.release:
        name, profile = f"{name}-release", [*profile, "--cargo-profile", "release"]
    if args.filter:
        # A part of the series, in a folder of its own: `test(c3)` → `…-test-c3`.
        slug = "".join(c if c.isalnum() else "-" for c in args.filter).strip("-")
        name, which = f"{name}-{slug}", f"{which} & ({args.filter})"
    return name, [*profile, "-E", which]


def key(claim: dict) -> str:
    """A claim's row: its name, and the name of its target where the test named it and the
    claim's own name does not say it (one claim made on four builds of a service)."""
    name = claim["name"]
    target = (claim.get("context") or {}).get("target", "")
    for what in (" (router on ", " (demo service on ", " (running service"):
        if what in target:
            given = target.split(what)[0]
            if given not in name:
                return f"{name} [{given}]"
    return name


def measure(args) -> int:
    name, which = series(args)
    root = ROOT / name
    release = ["--cargo-profile", "release"] if args.release else []
    subprocess.run(
        ["cargo", "nextest", "run", "--no-run", "--ignore-default-filter", *release],
        check=True,
        capture_output=True,
    )
    claims = collections.defaultdict(lambda: {"verdicts": collections.Counter(), "runs": []})
    failures = collections.Counter()
    walls = []
    for i in range(1, args.runs + 1):
        artifacts = root / f"run-{i}"
        if artifacts.exists():
            for old in artifacts.glob("*.json"):
                old.unlink()
        busy = subprocess.Popen(["yes"], stdout=subprocess.DEVNULL) if args.busy else None
        try:
            code, wall, log = run_once(artifacts, which)
        finally:
            if busy:
                busy.kill()
                busy.wait()
        walls.append(wall)
        for test in failed_tests(log):
            failures[test] += 1
        for report in sorted(artifacts.glob("*.json")):
            claim = json.loads(report.read_text())
            if "verdict" not in claim or "relation" not in claim:
                continue
            entry = claims[key(claim)]
            entry["verdicts"][claim["verdict"]] += 1
            margin = claim.get("margin") or {}
            entry["runs"].append(
                {
                    "verdict": claim["verdict"],
                    "median": claim.get("median"),
                    "band": claim.get("band"),
                    "floors": margin.get("floors"),
                    "distance": margin.get("distance"),
                }
            )
        print(f"run {i}/{args.runs} ({name}): exit {code}, {wall:.1f} s", file=sys.stderr)
        # Written after every run, so a long series can be read while it goes on.
        tally = {
            "series": name,
            "filter": args.filter,
            "runs": i,
            "wall": [min(walls), max(walls)],
            "failures": dict(failures),
            "claims": {
                k: {"verdicts": dict(v["verdicts"]), "runs": v["runs"]} for k, v in claims.items()
            },
        }
        (root / "tally.json").write_text(json.dumps(tally, indent=1))
    print(f"{args.runs} runs ({name}): wall {min(walls):.1f}–{max(walls):.1f} s")
    print(f"tests that failed: {sum(failures.values())} in all")
    for test, count in failures.most_common():
        print(f"  {test}: {count} of {args.runs}")
    print()
    print(table([tally], "broken", RELATIVE) if args.controls else table([tally], "holds", 0.0))
    return 0 if not failures else 1


def summarise(runs: list[dict]) -> dict:
    """A claim's margins over its runs: the median and the least, in floors and per cent."""
    floors = [abs(r["floors"]) for r in runs if r.get("floors") is not None]
    relative = [2.718281828459045 ** abs(r["distance"]) - 1 for r in runs if r.get("distance") is not None]
    medians = [r["median"] for r in runs if r.get("median") is not None]
    return {
        "floors_median": statistics.median(floors) if floors else None,
        "floors_least": min(floors) if floors else None,
        "relative_median": statistics.median(relative) if relative else None,
        "relative_least": min(relative) if relative else None,
        "median_range": (min(medians), max(medians)) if medians else None,
    }


def band_text(band: dict) -> str:
    lo, hi = band.get("lo"), band.get("hi")
    if lo is not None and hi is not None:
        return f"[{lo:g}, {hi:g}]"
    if lo is not None:
        return f"≥ {lo:g}"
    if hi is not None:
        return f"≤ {hi:g}"
    return "any"


def table(tallies: list[dict], want: str, relative: float = RELATIVE) -> str:
    """One row per claim over the series given (quiet, busy): its verdicts, the range of
    its medians, and its margin (the median over runs and the least, in noise floors and
    per cent); the claims nearest their edge first. A claim `clears` when it came out
    `want` in every run with its median margin at least FLOORS floors and `relative` from
    the edge."""
    names = sorted({n for t in tallies for n in t["claims"]})
    rows = []
    for name in names:
        cells, clears, nearest = [], True, float("inf")
        band = "—"
        for t in tallies:
            entry = t["claims"].get(name)
            if not entry:
                cells.append("— | — | —")
                clears = False
                continue
            runs = entry["runs"]
            band = band_text(runs[0]["band"]) if runs and runs[0].get("band") else band
            s = summarise(runs)
            v = entry["verdicts"]
            wanted = v.get(want, 0)
            verdicts = f"{wanted}/{len(runs)}" + (
                "" if wanted == len(runs) else
                " (" + ", ".join(f"{k} {c}" for k, c in sorted(v.items()) if k != want) + ")"
            )
            lo, hi = s["median_range"] or (float("nan"), float("nan"))
            fm, fl = s["floors_median"], s["floors_least"]
            rm, rl = s["relative_median"], s["relative_least"]
            margin = "—" if fm is None else f"{fm:.1f} ({fl:.1f}); {100 * rm:.0f}% ({100 * rl:.0f}%)"
            cells.append(f"{verdicts} | {lo:.3g}–{hi:.3g} | {margin}")
            if fm is not None:
                nearest = min(nearest, fm)
            if wanted != len(runs) or fm is None or fm < FLOORS or rm < relative:
                clears = False
        mark = "✅" if clears else "❌"
        rows.append((nearest, name, f"| {mark} | {name} | {band} | " + " | ".join(cells) + " |"))
    rows.sort(key=lambda r: (r[0], r[1]))
    labels = [
        ("busy" if "-busy" in t["series"] else "quiet")
        + (", release" if "-release" in t["series"] else "")
        + f" ({t['runs']} runs)"
        for t in tallies
    ]
    head = "| clears | claim | band | " + " | ".join(
        f"{l}: {want} | {l}: medians | {l}: margin, floors (least); % (least)" for l in labels
    ) + " |"
    rule = "|---|---|---|" + "---:|---|---|" * len(tallies)
    return "\n".join([head, rule] + [r[2] for r in rows])


def series_line(t: dict) -> str:
    """A series in one line: its runs, wall and failed tests."""
    failed = "".join(f"; {k} {v}×" for k, v in t["failures"].items())
    return (
        f"- {t['series']}: {t['runs']} runs, wall {t['wall'][0]:.0f}–{t['wall'][1]:.0f} s, "
        f"tests failed: {sum(t['failures'].values())}{failed}"
    )


def margins_page() -> int:
    """docs/margins.md from the six tallies."""
    def load(name):
        path = ROOT / name / "tally.json"
        if not path.exists():
            sys.exit(f"error: {path} is missing: run the series first (see --help)")
        return json.loads(path.read_text())

    controls = [load("controls-quiet"), load("controls-busy")]
    suite = [load("suite-quiet"), load("suite-busy")]
    out = []
    out.append("# Margins: how far each claim and each negative control sits from its band's edge\n")
    out.append(
        "Generated by `python3 scripts/error-rates.py --margins > docs/margins.md` from six series\n"
        "on a 2-core machine, each made by the same script:\n\n"
        "```sh\n"
        f"python3 scripts/error-rates.py --runs {controls[0]['runs']} --controls\n"
        f"python3 scripts/error-rates.py --runs {controls[1]['runs']} --controls --busy   # one core kept busy by yes\n"
        f"python3 scripts/error-rates.py --runs {suite[0]['runs']}\n"
        f"python3 scripts/error-rates.py --runs {suite[1]['runs']} --busy\n"
        "```\n"
    )
    out.append(
        "A claim's **margin** is the distance of its median from the band's nearest edge: in\n"
        "noise floors (the median change between consecutive rounds of its noisiest side, as a\n"
        "log step) and in per cent (the factor between median and edge, less one). `perfshape\n"
        "report` gives it per claim and draws every claim on one log axis. Each cell gives the\n"
        "median over the runs and, in brackets, the least.\n"
    )
    out.append("## The negative controls\n")
    out.append(
        f"A control must come out broken in every run with its median at least {FLOORS:g} noise\n"
        f"floors and {100 * RELATIVE:.0f} % outside its band (✅ when the median over runs clears\n"
        "both, quiet and busy). Nearest the edge first.\n"
    )
    out.extend(series_line(t) for t in controls)
    out.append("")
    out.append(table(controls, "broken", RELATIVE))
    out.append("\n## The gated claims\n")
    out.append(
        "The same for the suite's claims, inside their bands: ✅ when every run held with the\n"
        f"median margin at least {FLOORS:g} noise floors. (No share is asked of a claim: a claim\n"
        "against its model sits a few per cent above a band's lower edge of 0.95 by design, many\n"
        "noise floors inside; the per cent column shows how near.) Nearest the edge first.\n"
        "The suite also holds cheap negatives that its tests assert broken (tests/shape/twins.rs)\n"
        "or inconclusive (a fast or computing route by URL, a plateau of the CPU): they read ❌\n"
        "here by design, at the end of the table; where a negative shares its claim's name\n"
        "with a claim that holds (POST /todos on the correct and the flawed app), the row counts\n"
        "both, as 10/20 held and 10 broken.\n"
    )
    out.extend(series_line(t) for t in suite)
    out.append("")
    out.append(table(suite, "holds", 0.0))
    engines = [load("engines-quiet"), load("engines-busy")]
    out.append("\n## Seed 004 on Locust and k6\n")
    out.append(
        "The engines' claims (`cargo nextest run --profile engines`), judged from Locust's and\n"
        "k6's own statistics, as the suite's above; their controls are among the controls.\n\n"
        "```sh\n"
        f"python3 scripts/error-rates.py --runs {engines[0]['runs']} --engines\n"
        f"python3 scripts/error-rates.py --runs {engines[1]['runs']} --engines --busy\n"
        "```\n"
    )
    out.extend(series_line(t) for t in engines)
    out.append("")
    out.append(table(engines, "holds", 0.0))
    parts = sorted(p.parent.name for p in ROOT.glob("*/tally.json") if p.parent.name.count("-") > 1)
    for kind in ("controls", "suite", "engines"):
        loaded = [load(name) for name in parts if name.startswith(kind + "-")]
        # One section per filter: a part's claims against their own series only.
        for chosen_filter in sorted({t.get("filter") or "" for t in loaded}):
            chosen = [t for t in loaded if (t.get("filter") or "") == chosen_filter]
            chosen.sort(key=lambda t: ("-release" in t["series"], "-busy" in t["series"]))
            out.append(f"\n## Later series of a part of the {kind}: `{chosen_filter}`\n")
            out.append(
                "Run after a change to these claims, with `--filter`; where a claim's name here\n"
                "differs from the tables above, this is its current form.\n"
            )
            out.extend(series_line(t) for t in chosen)
            out.append("")
            out.append(table(chosen, "broken" if kind == "controls" else "holds", RELATIVE if kind == "controls" else 0.0))
    print("\n".join(out))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--busy", action="store_true", help="keep one core busy")
    parser.add_argument("--tables", action="store_true", help="run the tables' claims too")
    parser.add_argument("--controls", action="store_true", help="run the negative controls")
    parser.add_argument("--engines", action="store_true", help="run seed 004 on Locust and k6 (profile engines)")
    parser.add_argument("--release", action="store_true", help="build the tests with the release profile")
    parser.add_argument("--filter", help="only the tests of this nextest filter, e.g. 'test(c3)'")
    parser.add_argument("--margins", action="store_true", help="print docs/margins.md from the tallies")
    args = parser.parse_args()
    if args.margins:
        return margins_page()
    return measure(args)


if __name__ == "__main__":
    sys.exit(main())
