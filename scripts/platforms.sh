#!/usr/bin/env bash
# perfshape builds wherever a team builds: no crate that refuses a platform may be in the
# dependency graph for it, with any feature set; and, where the platform's standard library
# is installed (rustup target add), the library and the command type-check for it.
#
#     bash scripts/platforms.sh            # the graph check, then the type checks it can make
#     bash scripts/platforms.sh --graph    # the graph check alone (needs no other target)
#     bash scripts/platforms.sh --types    # the type checks alone
#
# `cargo tree --target` reads the graph for a platform without its standard library. The
# check is first run where it must fail: procfs is in Linux's graph.
set -euo pipefail
cd "$(dirname "$0")/.."

unix_only="procfs procfs-core"        # refuse to build off Linux and Android
windows_refuses="$unix_only nix"      # nix is for Unix alone
features=("" "--no-default-features" "--features https" "--features grpc" "--all-features")

# The crates in `package`'s graph for `target` with `flags`, one name a line.
graph() {
    local package=$1 target=$2
    shift 2
    cargo tree -q -p "$package" --target "$target" -e normal,build --prefix none -f '{p}' "$@" |
        sed 's/ .*//' | sort -u
}

# The names in $2 (space-separated) found in the graph on stdin.
found() {
    local graph
    graph=$(cat)
    for name in $1; do
        grep -qx "$name" <<<"$graph" && printf '%s ' "$name"
    done
    return 0
}

# No crate that refuses a platform in its graph, for any feature set.
graph_check() {
    # The check itself must see what it looks for: procfs in Linux's graph.
    seen=$(graph perfshape x86_64-unknown-linux-gnu | found "$unix_only")
    if [ -z "$seen" ]; then
        echo "error: the platform check finds no procfs in Linux's graph: it would find nothing anywhere" >&2
        exit 1
    fi
    echo "platforms: the check sees ${seen}in Linux's graph, as it must"
    # The portable build, which CI runs on Linux as what macOS and Windows get, leaves it out.
    bad=$(RUSTFLAGS="--cfg tokio_unstable --cfg perfshape_portable" graph perfshape x86_64-unknown-linux-gnu --all-features | found "$unix_only")
    if [ -n "$bad" ]; then
        echo "error: the portable build (--cfg perfshape_portable) still has ${bad}in its graph" >&2
        exit 1
    fi
    echo "platforms: the portable build's graph on Linux has none of it"

    failed=0
    for target in aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-msvc; do
        case $target in
            *windows*) refused=$windows_refuses ;;
            *) refused=$unix_only ;;
        esac
        before=$failed
        for package in perfshape perfshape-experiments perfshape-cli; do
            for flags in "${features[@]}"; do
                # The experiments have no features; the command has only its own `https`.
                if [ "$package" != perfshape ] && [ "$flags" != "" ] && { [ "$package" = perfshape-experiments ] || [ "$flags" != "--features https" ]; }; then
                    continue
                fi
                # shellcheck disable=SC2086
                bad=$(graph "$package" "$target" $flags | found "$refused")
                if [ -n "$bad" ]; then
                    echo "error: $package ${flags:-(default features)} for $target has ${bad}in its graph, which will not build there" >&2
                    failed=$((failed + 1))
                fi
            done
        done
        [ "$failed" = "$before" ] && echo "platforms: $target: no crate that refuses it, for every feature set"
    done
    [ "$failed" = 0 ] || exit 1
}

# The library and the command type-check for macOS and Windows.
type_checks() {
    # The type checks, where the target's standard library can be had, once per target for
    # the union of the features a team builds (the command's: the gate with `insta`, and the
    # experiments' crate; every feature but the C that `https` brings, ring, which needs the
    # platform's own C compiler) — and the library with no features on the first target, for
    # the code compiled only without them (`cfg(not(feature = …))`), which is the same code on
    # every target. Eight checks became three: every line each of them compiled is compiled.
    installed=$(rustup target list --installed 2>/dev/null || true)
    targets=()
    for target in aarch64-apple-darwin x86_64-pc-windows-msvc; do
        if ! grep -qx "$target" <<<"$installed" && ! timeout 120 rustup target add "$target" >/dev/null 2>&1; then
            echo "platforms: $target: its standard library cannot be installed here; the graph check above stands alone"
            continue
        fi
        targets+=("$target")
    done
    [ "${#targets[@]}" = 0 ] && return 0
    # One cargo for every target: its jobs keep both cores busy across them.
    RUSTFLAGS="--cfg tokio_unstable -D warnings" CARGO_TARGET_DIR=target/platforms \
        cargo check -q -p perfshape-cli "${targets[@]/#/--target=}"
    RUSTFLAGS="--cfg tokio_unstable -D warnings" CARGO_TARGET_DIR=target/platforms \
        cargo check -q -p perfshape --lib --target "${targets[0]}" --no-default-features
    echo "platforms: ${targets[*]}: the library with every feature but https, and the command, type-check; on ${targets[0]} the library with no features too"
}

case ${1:-} in
    --graph) graph_check ;;
    --types) type_checks ;;
    *)
        graph_check
        type_checks
        ;;
esac
