#!/usr/bin/env bash
# Every version the gate's Cargo.toml declares is a promise: perfshape builds, and passes its
# tests, with each direct dependency at the oldest version that declaration accepts. This
# builds the gate alone (a copy of the root package, outside the workspace, as a team's
# workspace gets it: without this repository's `.cargo/config.toml`) on a lockfile that takes
# every direct dependency at its floor and the rest at their newest, then:
#   - builds every test target with every feature (the timing claims and their controls
#     among them);
#   - runs the tests that time nothing (the library's own, `exact`, `watched`), in parallel.
#
#     bash scripts/floors.sh                    # all of the above (CI runs this)
#     bash scripts/floors.sh --resolve          # only the floors' lockfile, printed
#     bash scripts/floors.sh --tokio-unstable   # and the library with `--cfg tokio_unstable`
#
# The lockfile comes from cargo's `-Z direct-minimal-versions`, an unstable flag that stable
# cargo takes with RUSTC_BOOTSTRAP=1; only the resolution uses it, and every build is the
# machine's own stable toolchain. A floor that does not build names the crate and its error
# here: raise that version in Cargo.toml to one that builds.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=target/floors
# Outside this repository, whose `.cargo/config.toml` a copy under it would inherit.
gate=${TMPDIR:-/tmp}/perfshape-floors/gate
rm -rf "$gate"
mkdir -p "$gate"
# The root package's files: its manifest, build script, library, tests and the examples
# its tests include (the other members' folders come along and are not built).
cp -r Cargo.toml build.rs src tests examples README.md LICENSE-MIT LICENSE-APACHE "$gate/"
# A workspace of its own, with no members but the gate.
sed -i -e '/^members = \[/d' -e '/^default-members = \[/d' "$gate/Cargo.toml"
# The timing claims and their controls one at a time, as in this repository's own config
# (which names binaries of the other members, and nextest refuses a filter that matches none).
mkdir -p "$gate/.config"
cat > "$gate/.config/nextest.toml" <<'EOF'
[test-groups]
shape = { max-threads = 1 }

[profile.default]
default-filter = 'not binary(controls)'

[[profile.default.overrides]]
filter = 'binary(shape) | binary(controls)'
test-group = 'shape'
threads-required = 'num-test-threads'
retries = 0
EOF

cd "$gate"
export CARGO_TARGET_DIR="$root/$work/target"
# Profile settings for the members' crates match nothing here; cargo says so for each.
quiet() { grep -v "profile package spec .* did not match any packages" || true; }
RUSTC_BOOTSTRAP=1 cargo -Z direct-minimal-versions generate-lockfile 2>&1 | quiet
# What the floors are: each direct dependency as the lockfile took it.
python3 - <<'EOF2'
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
EOF2
[ "${1:-}" = "--resolve" ] && exit 0

# Every test target built with every feature (`https`, `grpc`): the timing claims and their
# controls compile; the tests that time nothing run (not the decision rule's Monte Carlo,
# arithmetic that no dependency enters).
cargo nextest run --locked --all-features --no-run 2>&1 | quiet
cargo nextest run --locked --all-features --status-level fail --lib --test exact --test watched \
    -E 'not (binary(exact) & test(/^rule::/))' 2>&1 | quiet
if [ "${1:-}" = "--tokio-unstable" ]; then
    # A team that runs tokio-console builds with `--cfg tokio_unstable`, which compiles the
    # pool's scheduler options too (tokio 1.52's): every dependency built again, so by hand.
    RUSTFLAGS="--cfg tokio_unstable" cargo check --locked --lib --all-features 2>&1 | quiet
fi
echo "floors: the gate builds with every feature and passes its tests with its direct dependencies at their floors"
