#!/usr/bin/env python3
"""Builds the crate a newcomer builds from the README, from its blocks exactly as printed, and
runs it as the README tells: a service `shop` (its `src/lib.rs`), the dev-dependencies and
profile of "Add it" (its `Cargo.toml` block), the watched tests, then the first shape test with
its nextest config, and the helper that installs the watch once (`tests/api/`). A block belongs
to the crate when its first line names the file it is (`# Cargo.toml`, `// tests/api/orders.rs`);
its whole text goes there.

What it expects, each a check that fails this script:
- the service's lockfile holds libc 0.2.186 (an open-source server's, on which perfshape's
  libc floor once failed to compile) and adding perfshape needs no `cargo update`;
- the test watched through the helper (`tests/api/`) passes with no nextest config at all;
- the first run with the shape test passes and writes its snapshots, saying so, and the
  second passes with them unchanged;
- a blocking twin of the service (a sleep in `place`) fails the test watched through the
  helper, printing its report once and naming the route and the call; with
  `PERFSHAPE_GATE=advisory` it passes.

The crate is built outside this repository (whose `.cargo/config.toml` a team does not
have), with `CI` and `INSTA_UPDATE` unset, as on a newcomer's machine.

    python3 scripts/readme-crate.py               # in $TMPDIR/perfshape-readme-crate
    python3 scripts/readme-crate.py --dir DIR
    python3 scripts/readme-crate.py --build-only  # the crate, all its files, built: no run

(`.ci/run` builds it beside other steps with `--build-only`, then runs it at the end.)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# What the README says the service depends on, as a team's crate already does.
SERVICE_DEPENDENCIES = ['axum = "0.8"', 'serde_json = "1"']
# The team's lockfile: libc as an open-source server's held it when perfshape asked for
# fields it did not have.
TEAMS_LIBC = "0.2.186"
FILE = re.compile(r"^(?:#|//) ((?:Cargo\.toml|\.config/nextest\.toml|src/lib\.rs|tests/(?:\w+/)?\w+\.rs))$")


def blocks(readme: str) -> dict:
    """The README's blocks that are files of the crate, by path, in the order printed."""
    found = {}
    for info, body in re.findall(r"^```([^\n]*)\n(.*?)^```$", readme, re.S | re.M):
        first = body.split("\n", 1)[0]
        match = FILE.match(first)
        if match:
            if match.group(1) in found:
                sys.exit(f"error: the README has two blocks for {match.group(1)}")
            found[match.group(1)] = body
    return found


def run(args, crate: Path, env: dict, expect_ok=True) -> str:
    """`args` in `crate`, its output (stdout and stderr) returned; a failure where success
    was expected (or the reverse) ends the script with that output."""
    print("$", " ".join(args), flush=True)
    done = subprocess.run(args, cwd=crate, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if (done.returncode == 0) != expect_ok:
        print(done.stdout)
        sys.exit(f"error: `{' '.join(args)}` {'failed' if expect_ok else 'passed'}, and the README says it {'passes' if expect_ok else 'fails'}")
    return done.stdout


def check(condition: bool, what: str, output: str = ""):
    if not condition:
        if output:
            print(output)
        sys.exit(f"error: {what}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "perfshape-readme-crate")
    parser.add_argument("--build-only", action="store_true")
    args = parser.parse_args()
    where = args.dir.resolve()
    readme = (ROOT / "README.md").read_text()
    files = blocks(readme)
    watched = ["tests/api/main.rs", "tests/api/helpers.rs", "tests/api/orders.rs"]
    for needed in ["Cargo.toml", "src/lib.rs", "tests/shape.rs", ".config/nextest.toml", *watched]:
        check(needed in files, f"the README has no block for {needed} (its first line `# {needed}` or `// {needed}`)")
    for dependency in SERVICE_DEPENDENCIES:
        check(f"`{dependency}`" in readme, f"the README no longer says the service depends on `{dependency}`")

    # The layout "Add it" assumes: this repository beside the team's crate, as `perfshape`.
    where.mkdir(parents=True, exist_ok=True)
    link = where / "perfshape"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(ROOT, target_is_directory=True)
    crate = where / "shop"
    target = crate / "target"  # kept between runs of this script: a team's builds are warm
    if crate.exists():
        for entry in crate.iterdir():
            if entry != target:
                shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    (crate / "src").mkdir(parents=True)
    # A newcomer's environment: none of this repository's or its CI's settings, but how much
    # of a build CI keeps (its line tables and incremental state, which no check here reads).
    unset = ("CI", "INSTA_UPDATE", "CARGO_TARGET_DIR", "RUSTFLAGS")
    env = {k: v for k, v in os.environ.items() if k not in unset and not k.startswith("PERFSHAPE_")}

    # The team's crate before perfshape: its service, its lockfile.
    manifest = '[package]\nname = "shop"\nversion = "0.1.0"\nedition = "2024"\n\n[dependencies]\n' + "\n".join(SERVICE_DEPENDENCIES) + "\n"
    (crate / "Cargo.toml").write_text(manifest)
    (crate / "src/lib.rs").write_text(files["src/lib.rs"])
    run(["cargo", "generate-lockfile", "--quiet"], crate, env)
    # (mio after 1.2.4 asks for a newer libc: the team's lockfile is older than that.)
    run(["cargo", "update", "--quiet", "-p", "mio", "--precise", "1.2.4"], crate, env)
    run(["cargo", "update", "--quiet", "-p", "libc", "--precise", TEAMS_LIBC], crate, env)

    # "Add it", as printed; then the watched tests, with no nextest config.
    (crate / "Cargo.toml").write_text(manifest + "\n" + files["Cargo.toml"])
    (crate / "tests").mkdir()
    (crate / "tests/api").mkdir()
    if args.build_only:
        for test in [*watched, "tests/shape.rs"]:
            (crate / test).write_text(files[test])
        run(["cargo", "nextest", "run", "--no-run"], crate, env)
        print("readme crate: built")
        return
    for test in watched:
        (crate / test).write_text(files[test])
    out = run(["cargo", "nextest", "run"], crate, env)
    check("1 test run: 1 passed" in out, "the watched test did not run and pass", out)
    libc = re.search(r'name = "libc"\nversion = "([^"]+)"', (crate / "Cargo.lock").read_text()).group(1)
    check(tuple(map(int, libc.split("."))) > tuple(map(int, TEAMS_LIBC.split("."))), f"libc stayed at {libc}")
    print(f"readme crate: the watched tests pass; cargo took libc {TEAMS_LIBC} to {libc} by itself")

    # The first shape test and its nextest config; its first run writes the snapshots.
    (crate / "tests/shape.rs").write_text(files["tests/shape.rs"])
    (crate / ".config").mkdir()
    (crate / ".config/nextest.toml").write_text(files[".config/nextest.toml"])
    out = run(["cargo", "nextest", "run", "--success-output", "immediate"], crate, env)
    check("2 tests run: 2 passed" in out, "the first run with the shape test did not pass", out)
    snapshots = sorted((crate / "tests/snapshots").glob("*.snap"))
    check(len(snapshots) == 2, f"the first run wrote {len(snapshots)} snapshots, not the shape test's two", out)
    check(out.count("perfshape: a new snapshot, written to") == 2, "the first run did not say it wrote each snapshot", out)
    written = {s.name: s.read_bytes() for s in snapshots}
    out = run(["cargo", "nextest", "run"], crate, env)
    check("2 tests run: 2 passed" in out, "the second run did not pass", out)
    again = {s.name: s.read_bytes() for s in sorted((crate / "tests/snapshots").glob("*"))}
    check(again == written, "the second run changed the snapshots", out)
    print(f"readme crate: the first run wrote {', '.join(written)} and passed; the second passed with them")

    # The gate can fail: the service's blocking twin, a sleep on the worker in `place`.
    lib = files["src/lib.rs"]
    twin = lib.replace("async fn place(Json(order): Json<Value>) -> (StatusCode, Json<Value>) {\n",
                       "async fn place(Json(order): Json<Value>) -> (StatusCode, Json<Value>) {\n"
                       "    std::thread::sleep(std::time::Duration::from_millis(5));\n")
    check(twin != lib, "the README's service has no `place` to make a blocking twin of")
    (crate / "src/lib.rs").write_text(twin)
    out = run(["cargo", "nextest", "run", "--test", "api"], crate, env, expect_ok=False)
    check('broken: "no route the test called blocks its worker"' in out, "the blocking twin's watch is not broken", out)
    check("POST /orders" in out and "clock_nanosleep" in out, "the broken report does not name the route and the call", out)
    check("shop::place" in out, "the broken report does not name the function that slept", out)
    check(out.count("  do: ") == 1, f"the report printed {out.count('  do: ')} times, not once", out)
    env_advisory = dict(env, PERFSHAPE_GATE="advisory")
    out = run(["cargo", "nextest", "run", "--test", "api"], crate, env_advisory)
    check("1 test run: 1 passed" in out, "advisory failed the test", out)
    (crate / "src/lib.rs").write_text(lib)
    print("readme crate: its blocking twin fails the test watched through the helper, named, its report printed once; advisory fails nothing")


if __name__ == "__main__":
    main()
