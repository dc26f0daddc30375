#!/usr/bin/env bash
# Every version the gate's Cargo.toml declares is a promise: perfshape builds, and passes its
# tests, with each direct dependency at the oldest version that declaration accepts. This
# builds the gate alone (a copy of the root package, outside the workspace, as a team's
# workspace gets it: without this repository's `.cargo/config.toml`) on a lockfile that takes
# every direct dependency at its floor and the rest at their newest, then:
#   - type-checks the library with every feature, and builds every test target (the timing
#     claims and their controls among them);
#   - runs the tests that time nothing (the library's own, `exact`, `watched`), in parallel.
#
#     bash scripts/floors.sh                    # all of the above
#     bash scripts/floors.sh --resolve          # only the floors' lockfile, printed
#     bash scripts/floors.sh --build            # the lockfile and the builds, no test run
#     bash scripts/floors.sh --run              # the tests, on what --build built
#     bash scripts/floors.sh --tokio-unstable   # all, and the library with `--cfg tokio_unstable`
#
# (`.ci/run` builds with --build beside its own first build, and runs --run at its end.)
#
# The lockfile comes from cargo's `-Z direct-minimal-versions`, an unstable flag that stable
# cargo takes with RUSTC_BOOTSTRAP=1; only the resolution uses it, and every build is the
# machine's own stable toolchain. A floor that does not build names the crate and its error
# here: raise that version in Cargo.toml to one that builds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
mode=${1:-}
work=target/floors
# Outside this repository, whose `.cargo/config.toml` a copy under it would inherit.
gate=${TMPDIR:-/tmp}/perfshape-floors/gate
export CARGO_TARGET_DIR="$root/$work/target"
# Profile settings for the members' crates match nothing here; cargo says so for each.
quiet() { grep -v "profile package spec .* did not match any packages" || true; }
# The dependencies built as a team's default test profile builds them, unoptimised, not at
# this repository's opt-level 1: the tests run here time nothing, and the cold build of
# every test target took 141 s instead of 175 s on two cores (228 s of CPU instead of 295).
unoptimised=(--config 'profile.dev.package."*".opt-level=0')

if [ "$mode" != "--run" ]; then
    rm -rf "$gate"
    mkdir -p "$gate"
    # The root package's files: its manifest, build script, library, tests and what its
    # tests include — the examples, a page of the docs (the other members' folders come
    # along and are not built).
    cp -r Cargo.toml build.rs src tests examples docs README.md LICENSE-MIT LICENSE-APACHE "$gate/"
    # A workspace of its own, with no members but the gate.
    sed -i -e '/^members = \[/d' -e '/^default-members = \[/d' "$gate/Cargo.toml"
    # The timing claims and their controls one at a time, as in this repository's own
    # config (which names binaries of the other members, and nextest refuses a filter that
    # matches none).
    mkdir -p "$gate/.config"
    cat > "$gate/.config/nextest.toml" <<'TOML'
[test-groups]
shape = { max-threads = 1 }

[profile.default]
default-filter = 'not binary(controls)'

[[profile.default.overrides]]
filter = 'binary(shape) | binary(controls)'
test-group = 'shape'
threads-required = 'num-test-threads'
retries = 0
TOML
    cd "$gate"
    RUSTC_BOOTSTRAP=1 cargo -Z direct-minimal-versions generate-lockfile 2>&1 | quiet
    # What the floors are: each direct dependency as the lockfile took it.
    python3 - <<'PY'
import tomllib
manifest = tomllib.load(open("Cargo.toml", "rb"))
lock = tomllib.load(open("Cargo.lock", "rb"))
tables = [manifest.get("dependencies", {}), manifest.get("dev-dependencies", {})]
tables += [t.get("dependencies", {}) for t in manifest.get("target", {}).values()]
declared = {}
for table in tables:
    for name, spec in table.items():
        version = spec if isinstance(spec, str) else spec.get("version")
        declared.setdefault(name, set()).add(version)
taken = {}
for package in lock["package"]:
    taken.setdefault(package["name"], []).append(package["version"])
for name in sorted(declared):
    versions = ", ".join(sorted(taken.get(name, []))) or "none"
    print("floors:", name, " / ".join(sorted(declared[name])), "->", versions)
PY
    [ "$mode" = "--resolve" ] && exit 0
    # The library type-checked with every feature (`https`, `grpc`), and every test target
    # built with the default ones, the timing claims and their controls among them. (The
    # tests build their own reqwest clients, which `https`'s provider-less rustls refuses
    # before perfshape has installed its provider.)
    cargo check --locked --lib --all-features 2>&1 | quiet
    cargo nextest run --locked --no-run "${unoptimised[@]}" 2>&1 | quiet
    if [ "$mode" = "--build" ]; then
        echo "floors: built"
        exit 0
    fi
fi

cd "$gate"
# The tests that time nothing, run (not the decision rule's Monte Carlo: arithmetic that no
# dependency enters).
cargo nextest run --locked "${unoptimised[@]}" --status-level fail --lib --test exact --test watched \
    -E 'not (binary(exact) & test(/^rule::/))' 2>&1 | quiet
if [ "$mode" = "--tokio-unstable" ]; then
    # A team that runs tokio-console builds with `--cfg tokio_unstable`, which compiles the
    # pool's scheduler options too (tokio 1.52's): every dependency built again, so by hand.
    RUSTFLAGS="--cfg tokio_unstable" cargo check --locked --lib --all-features 2>&1 | quiet
fi
echo "floors: the gate builds with every feature and passes its tests with its direct dependencies at their floors"
