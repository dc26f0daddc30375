#!/usr/bin/env python3
"""Every file the library's builds read is in its package.

    python3 scripts/packaged.py TARGET_DIR...   # after a build: check the package against it
    python3 scripts/packaged.py --self-test     # the check fails where it must

A dependent builds perfshape from the published package alone, made from the `include`
list in Cargo.toml: a source file, a fixture read by `include_str!` or the README the crate
docs are made of, left out of that list, builds here and fails there. `cargo package`'s own
verification builds the package once more with its default features alone, which rebuilt 50
crates a second time (38 s of a cold CI run); rustc already says which files each build of
the library read, in its dep-info (`deps/perfshape-*.d`, and the build script's
`build/perfshape-*/build_script_build-*.d`). This reads them — every build in the target
directories named: the suite's, the portable fallbacks', the macOS and Windows type checks'
— and fails naming each file they read that `cargo package --list` leaves out.
"""

import glob
import os
import re
import subprocess
import sys


def read_files(dep_info):
    """The files one dep-info file says its build read, as written (relative to the
    workspace root for the workspace's own files)."""
    with open(dep_info) as f:
        first = f.readline()
    _, _, deps = first.partition(": ")
    # rustc escapes a space in a path as "\ ".
    return [p.replace("\0", " ") for p in deps.replace("\\ ", "\0").split()]


def library_builds(target_dirs):
    """The dep-info files of the library's builds and of its build script's, each once
    (a target directory may hold another: target/platforms in target)."""
    found, seen = [], set()
    for target in target_dirs:
        libraries = glob.glob(os.path.join(target, "**", "deps", "perfshape-*.d"), recursive=True)
        pattern = os.path.join(target, "**", "build", "perfshape-*", "build_script_build-*.d")
        for dep_info in libraries + glob.glob(pattern, recursive=True):
            if os.path.realpath(dep_info) in seen:
                continue
            # `perfshape-*` matches the packages beside the gate too (perfshape-experiments,
            # perfshape-cli): the gate's own are `perfshape-<hash>`.
            if not re.fullmatch(r"perfshape-[0-9a-f]+", os.path.basename(os.path.dirname(dep_info))) \
                    and dep_info not in libraries:
                continue
            seen.add(os.path.realpath(dep_info))
            files = read_files(dep_info)
            # The library's crate root first; the command's binary, also `perfshape`, starts
            # at cli/.
            if dep_info in libraries and not (files and files[0] == "src/lib.rs"):
                continue
            found.append((dep_info, files))
    return found


def missing(listed, builds):
    """The workspace's own files some build read that the package does not list, each with
    the first build that read it."""
    out = {}
    for dep_info, files in builds:
        for path in files:
            if os.path.isabs(path) or path in listed or path in out:
                continue
            out[path] = dep_info
    return out


def check(listed, builds):
    """An error message, or None when the package has every file."""
    if not any(files and files[0] == "src/lib.rs" for _, files in builds):
        return "no build of the library was found (no deps/perfshape-*.d starting at src/lib.rs): build it first"
    if not any(os.path.basename(d).startswith("build_script_build") for d, _ in builds):
        return "no build of the library's build script was found (build/perfshape-*/build_script_build-*.d)"
    lost = missing(listed, builds)
    if lost:
        lines = [f"  {path} (read by the build in {dep_info})" for path, dep_info in sorted(lost.items())]
        return (
            "the package leaves out files the library's build reads; add them to `include` in Cargo.toml:\n"
            + "\n".join(lines)
        )
    return None


def self_test():
    lib = ("deps/perfshape-1.d", ["src/lib.rs", "src/a.rs", "README.md", "/home/x/.cargo/registry/tokio/src/lib.rs"])
    script = ("build/perfshape-2/build_script_build-2.d", ["build.rs"])
    listed = {"src/lib.rs", "src/a.rs", "README.md", "build.rs", "Cargo.toml"}
    cases = [
        ("every file listed", listed, [lib, script], False),
        ("a module left out", listed - {"src/a.rs"}, [lib, script], True),
        ("the README the docs include left out", listed - {"README.md"}, [lib, script], True),
        ("the build script left out", listed - {"build.rs"}, [lib, script], True),
        ("no build of the library to read", listed, [script], True),
        ("no build of its build script to read", listed, [lib], True),
    ]
    failed = 0
    for name, files, builds, fails in cases:
        got = check(files, builds) is not None
        print(f"self-test {'ok' if got == fails else 'FAILED'}: {name} (fails: {got}, want {fails})")
        failed += got != fails
    # A path with a space, as rustc escapes it.
    import tempfile

    # The packages beside the gate build scripts of their own (perfshape-experiments): not
    # the gate's, and not read.
    with tempfile.TemporaryDirectory() as target:
        for rel, first in [
            ("debug/deps/perfshape-1a.d", "src/lib.rs"),
            ("debug/build/perfshape-2b/build_script_build-2b.d", "build.rs"),
            ("debug/build/perfshape-experiments-3c/build_script_build-3c.d", "experiments/build.rs"),
        ]:
            os.makedirs(os.path.dirname(os.path.join(target, rel)), exist_ok=True)
            with open(os.path.join(target, rel), "w") as f:
                f.write(f"/t/out: {first}\n")
        found = sorted(files[0] for _, files in library_builds([target]))
    ok = found == ["build.rs", "src/lib.rs"]
    print(f"self-test {'ok' if ok else 'FAILED'}: the experiments' build script is not the gate's ({found})")
    failed += not ok

    with tempfile.NamedTemporaryFile("w", suffix=".d", delete=False) as f:
        f.write("/t/libperfshape.rlib: src/lib.rs src/a\\ b.rs\n\nsrc/lib.rs:\n")
    got = read_files(f.name)
    os.unlink(f.name)
    ok = got == ["src/lib.rs", "src/a b.rs"]
    print(f"self-test {'ok' if ok else 'FAILED'}: a path with a space ({got})")
    failed += not ok
    return 1 if failed else 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    listing = subprocess.run(
        ["cargo", "package", "--list", "-p", "perfshape", "--allow-dirty"],
        cwd=root, check=True, capture_output=True, text=True,
    ).stdout
    listed = set(listing.split())
    builds = library_builds(argv)
    error = check(listed, builds)
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    read = {p for _, files in builds for p in files if not os.path.isabs(p)}
    print(f"the package lists every one of the {len(read)} files {len(builds)} builds of the library read ({len(listed)} files packaged)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
