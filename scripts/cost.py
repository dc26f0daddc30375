#!/usr/bin/env python3
"""What perfshape costs the team that adds it: a small axum service crate's cold
`cargo build --tests` (a team's default debug profile, no cache) and the crates it
compiles, alone and with each dev-dependency set — perfshape's default features, each
feature, and criterion + insta + wiremock instead — then perfshape's own build by crate
(`cargo build --timings`). Prints docs/cost.md:

    python3 scripts/cost.py > docs/cost.md

Every build is cold and one at a time, in its own target folder outside this repository
(its .cargo/config.toml would otherwise apply), so the figures are a fresh CI job's.
Nothing else should run meanwhile: the builds use both cores. About 5 minutes.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

SERVICE = """\
use axum::{routing::get, routing::post, Json, Router};
use serde::{Deserialize, Serialize};

/// What `POST /orders` takes and answers, as axum's own examples type a JSON body.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Order {
    pub customer: String,
    pub cents: u64,
}

/// A health check and a JSON create: the routes a first test of a service hits.
pub fn app() -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/orders", post(|Json(order): Json<Order>| async move { Json(order) }))
}
"""

# Each variant's dev-dependencies and its one test, written as a team would.
VARIANTS = {
    "the service alone": ("", None),
    "+ perfshape (default: insta)": (
        'perfshape = {{ path = "{root}" }}',
        """\
use perfshape::{PoolSettings, Result, Target, assert_shape};

#[tokio::test]
async fn health_never_blocks_its_worker() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, service::app())?;
    assert_shape!(target.get("/health").does_not_block_its_worker().await?);
    Ok(())
}
""",
    ),
    "+ perfshape, with the README's profile line": (
        'perfshape = {{ path = "{root}" }}',
        """\
use perfshape::{PoolSettings, Result, Target, assert_shape};

#[tokio::test]
async fn health_never_blocks_its_worker() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, service::app())?;
    assert_shape!(target.get("/health").does_not_block_its_worker().await?);
    Ok(())
}
""",
    ),
    "+ perfshape, no default features": (
        'perfshape = {{ path = "{root}", default-features = false }}',
        """\
use perfshape::{PoolSettings, Result, Target};

#[tokio::test]
async fn health_never_blocks_its_worker() -> Result {
    let target = Target::serve(PoolSettings::workers(1)?, service::app())?;
    target.get("/health").does_not_block_its_worker().await?;
    Ok(())
}
""",
    ),
    "+ perfshape with https": (
        'perfshape = {{ path = "{root}", features = ["https"] }}',
        None,
    ),
    "+ perfshape with grpc": (
        'perfshape = {{ path = "{root}", features = ["grpc"] }}',
        None,
    ),
    "+ perfshape-experiments instead (the laboratory, not the gate)": (
        'perfshape-experiments = {{ path = "{root}/experiments" }}',
        None,
    ),
    "+ criterion instead": (
        'criterion = "0.7"',
        None,
    ),
    "+ criterion + insta + wiremock instead": (
        'criterion = "0.7"\ninsta = {{ version = "1", features = ["yaml"] }}\nwiremock = "0.6"',
        """\
#[tokio::test]
async fn a_mock_answers() {
    let server = wiremock::MockServer::start().await;
    insta::assert_snapshot!(server.uri().starts_with("http://"), @"true");
}
""",
    ),
}

# The variants whose Cargo.toml carries the README's profile line: every dependency
# optimised, the team's own crate not (what makes a claim decisive in a test build).
PROFILE_LINE = '\n[profile.dev.package."*"]\nopt-level = 1\n'
WITH_PROFILE_LINE = {"+ perfshape, with the README's profile line"}

# What each of perfshape's heavier dependencies buys, for the table of its own build.
BUYS = {
    "url": "(reqwest's URLs)",
    "idna": "(url's international domain names)",
    "icu_properties": "(idna's Unicode tables)",
    "icu_locale_core": "(idna's Unicode tables)",
    "icu_normalizer": "(idna's Unicode tables)",
    "icu_collections": "(idna's Unicode tables)",
    "icu_provider": "(idna's Unicode tables)",
    "zerovec-derive": "(the Unicode tables' derive)",
    "zerofrom-derive": "(the Unicode tables' derive)",
    "yoke-derive": "(the Unicode tables' derive)",
    "zerovec": "(the Unicode tables)",
    "thiserror-impl": "(thiserror's derive)",
    "syn": "(serde's derive, for the JSON reports; thiserror's)",
    "serde_derive": "the JSON reports and artifacts",
    "proc-macro2": "(serde's derive)",
    "quote": "(serde's derive)",
    "reqwest": "the load client's requests (`Request`, reqwest's builder words)",
    "hyper": "HTTP on both sides: the served router and the client (axum and reqwest share it)",
    "hyper-util": "the client's connection pool and the server's connection loop",
    "axum": "serving the team's `Router` (already the service's own dependency)",
    "tokio": "the pools: the served router's workers and the load client's (the service's own)",
    "perfshape": "the claims, the decision rule, the served pool's clocks and ledger",
    "procfs": "the machine's CPU, each thread's run-queue time, a service's process by port",
    "procfs-core": "(procfs's parsers)",
    "hdrhistogram": "latency percentiles per round",
    "insta": "`assert_shape!`: the shape snapshot (the `insta` feature)",
    "serde": "the JSON reports and artifacts",
    "serde_json": "the JSON reports and artifacts",
    "rustix": "(procfs's system calls)",
    "tower": "the served router as a tower service",
    "libc": "each worker thread's CPU clock",
    "similar": "(insta's diffs)",
    "console": "(insta's terminal output)",
    "thiserror": "the error type",
    "rlimit": "raising the open-file limit for a fan-out's connections",
    "httparse": "the connections driver's response parser",
    "framehop": "where in the code: a held worker's stack unwound (Linux)",
    "gimli": "(framehop's and addr2line's DWARF reader)",
    "object": "(backtrace's reader of the binary's sections)",
    "addr2line": "(backtrace's lines from the debug information)",
    "backtrace": "where in the code: a frame's name, file and line (Linux)",
    "miniz_oxide": "(backtrace's reader of compressed debug information)",
    "rustc-demangle": "(backtrace's names)",
    "perf-event-open-sys": "where in the code: the kernel's samples of a computing worker (Linux)",
}


def run(cmd, cwd, env=None, check=True):
    return subprocess.run(cmd, cwd=cwd, env=env, check=check, capture_output=True, text=True)


def crate_dir(base: Path, deps: str, test: str | None, profile: str = "") -> Path:
    d = base / "service"
    if d.exists():
        shutil.rmtree(d)
    (d / "src").mkdir(parents=True)
    (d / "tests").mkdir()
    (d / "Cargo.toml").write_text(
        f"""[package]
name = "service"
version = "0.1.0"
edition = "2024"

[workspace]

[dependencies]
axum = "0.8"
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
tokio = {{ version = "1", features = ["macros", "rt-multi-thread"] }}

[dev-dependencies]
{deps.format(root=ROOT)}
{profile}"""
    )
    (d / "src/lib.rs").write_text(SERVICE)
    if test:
        (d / "tests/shape.rs").write_text(test)
    return d


def cold_build(d: Path, target: Path, timings: bool = False):
    if target.exists():
        shutil.rmtree(target)
    env = dict(os.environ, CARGO_TARGET_DIR=str(target))
    # The team's own settings: nothing inherited from this repository's CI.
    for var in ["RUSTFLAGS", "CARGO_INCREMENTAL", "CARGO_PROFILE_DEV_DEBUG", "CARGO_BUILD_RUSTFLAGS"]:
        env.pop(var, None)
    # Resolve and download first, so that the build's time is compiling only.
    run(["cargo", "fetch"], d, env)
    cmd = ["cargo", "build", "--tests"] + (["--timings"] if timings else [])
    started = time.monotonic()
    out = run(cmd, d, env)
    took = time.monotonic() - started
    compiled = set(re.findall(r"^\s+Compiling (\S+) v", out.stderr, re.M))
    return took, compiled


def test_run(d: Path, target: Path) -> float:
    """Seconds `cargo test --tests` takes once built: the one claim, measured."""
    env = dict(os.environ, CARGO_TARGET_DIR=str(target), INSTA_UPDATE="always")
    for var in ["RUSTFLAGS", "CARGO_INCREMENTAL", "CARGO_PROFILE_DEV_DEBUG", "CARGO_BUILD_RUSTFLAGS"]:
        env.pop(var, None)
    run(["cargo", "test", "--tests", "--no-run"], d, env)
    started = time.monotonic()
    run(["cargo", "test", "--tests"], d, env)
    return time.monotonic() - started


def unit_times(target: Path):
    """Each compiled unit's seconds from cargo's --timings page, summed per crate."""
    page = (target / "cargo-timings" / "cargo-timing.html").read_text()
    m = re.search(r"const UNIT_DATA = (\[.*?\]);\n", page, re.S)
    if not m:
        return {}
    per = {}
    for unit in json.loads(m.group(1)):
        per[unit["name"]] = per.get(unit["name"], 0.0) + unit["duration"]
    return per


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="perfshape-cost-"))
    rows = []
    tested = {}
    timings = {}
    the_service_s = set()
    rustc = run(["rustc", "--version"], ROOT).stdout.strip()
    try:
        for name, (deps, test) in VARIANTS.items():
            profile = PROFILE_LINE if name in WITH_PROFILE_LINE else ""
            d = crate_dir(base, deps, test, profile)
            target = base / "target"
            with_timings = name.startswith("+ perfshape (default")
            took, compiled = cold_build(d, target, timings=with_timings)
            if with_timings:
                timings = unit_times(target)
            rows.append((name, took, len(compiled)))
            if test and "perfshape" in name:
                tested[name] = test_run(d, target)
            if name == "the service alone":
                the_service_s = compiled
            print(f"{name}: {took:.1f} s, {len(compiled)} crates", file=sys.stderr)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)

    alone_s, alone_n = rows[0][1], rows[0][2]
    print("# What perfshape costs the team that adds it\n")
    print(
        "A small axum service crate (a health route and a typed JSON `POST`: axum, tokio, serde "
        "with its derive, serde_json) "
        "built cold with `cargo build --tests` in a team's default debug profile, alone and with "
        "each set of dev-dependencies: no cache, one build at a time, on this machine "
        f"({os.cpu_count()} cores, {rustc}). Made by `python3 scripts/cost.py > docs/cost.md`; "
        "one build each: the same build run twice here differed by up to 6 s, so smaller "
        "differences are noise.\n"
    )
    print("| dev-dependencies | cold `cargo build --tests` | added | crates compiled | added |")
    print("|---|---:|---:|---:|---:|")
    for name, took, n in rows:
        added_s = "—" if name == rows[0][0] else f"+{took - alone_s:.1f} s"
        added_n = "—" if name == rows[0][0] else f"+{n - alone_n}"
        print(f"| {name} | {took:.1f} s | {added_s} | {n} | {added_n} |")
    by_name = {name: (took, n) for name, took, n in rows}
    perf = by_name["+ perfshape (default: insta)"]
    crit = by_name["+ criterion instead"]
    trio = by_name["+ criterion + insta + wiremock instead"]
    print()
    print(
        f"perfshape with its default features adds {perf[0] - alone_s:.1f} s and {perf[1] - alone_n} "
        f"crates to the service's cold test build; criterion alone adds {crit[0] - alone_s:.1f} s "
        f"and {crit[1] - alone_n}, and criterion, insta and wiremock together "
        f"{trio[0] - alone_s:.1f} s and {trio[1] - alone_n}."
    )
    line = by_name.get("+ perfshape, with the README's profile line")
    if line:
        print(
            f"\nThe README's profile line (`[profile.dev.package.\"*\"] opt-level = 1`: every "
            f"dependency optimised, the service's own crate not) makes the same build take "
            f"{line[0]:.1f} s, {line[0] - perf[0]:+.1f} s against perfshape's without it — and it is "
            f"every dependency's cost, axum's and tokio's too, paid once per cold cache. The one "
            f"claim's test run took "
            + " and ".join(f"{t:.2f} s ({n.split(', ')[-1] if ', ' in n else 'without the line'})" for n, t in tested.items() if "no default" not in n)
            + "."
        )
    if timings:
        print("\n## perfshape's own build, by crate\n")
        print(
            "From `cargo build --tests --timings` of the default variant: the crates the service "
            "alone does not compile, longest first (a crate's build script and its library "
            "summed), and what perfshape uses each for. Units compile two at a time, so these "
            "add up to more than what they add to the build's wall time.\n"
        )
        print("| crate | compile time | what it buys |")
        print("|---|---:|---|")
        added = {k: v for k, v in timings.items() if k not in the_service_s and k != "service"}
        for name, secs in sorted(added.items(), key=lambda kv: -kv[1])[:15]:
            print(f"| {name} | {secs:.1f} s | {BUYS.get(name, '')} |")
        procfs = sum(added.get(k, 0.0) for k in ["procfs", "procfs-core", "rustix", "linux-raw-sys"])
        urls = sum(added.get(k, 0.0) for k in added if k.startswith(("icu_", "idna", "url", "zero", "yoke", "writeable", "litemap", "tinystr", "potential_utf")))
        where = sum(
            added.get(k, 0.0)
            for k in [
                "framehop", "gimli", "object", "addr2line", "backtrace", "miniz_oxide",
                "adler2", "rustc-demangle", "perf-event-open-sys", "fallible-iterator",
                "arrayvec", "memchr",
            ]
        )
        print(
            f"\nOf the compile time added: perfshape's own crate {added.get('perfshape', 0.0):.1f} s; "
            f"procfs and the system-call crate under it {procfs:.1f} s; the URL parser reqwest "
            f"brings (url, idna and their Unicode tables) {urls:.1f} s; where in the code "
            f"(framehop, backtrace, perf-event-open-sys and the readers under them) {where:.1f} s."
        )
    print("\n## Features\n")
    print(
        "`default = [\"insta\"]`: what the README's first test uses (`assert_shape!`). "
        "`https` adds rustls with ring for `https://` targets, which a service gated on "
        "loopback does not need. The five experiments, with their fixtures' reader (toml), "
        "rayon, the reports' plots and tables, are the crate `perfshape-experiments` beside "
        "the gate, which a team never builds (its row above is what the gate no longer "
        "compiles for it). `grpc` adds HTTP/2 to the "
        "load client and the served router (h2, and hyper's and reqwest's HTTP/2) for gRPC "
        "calls; no tonic or prost, which a gRPC service compiles already (the row above is "
        "its cost to a service that has neither)."
    )


if __name__ == "__main__":
    main()
