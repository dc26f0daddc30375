#!/usr/bin/env python3
"""Fails when a crate's source has an import circle — two modules (files) that reach each other
through `crate::` or `super::` paths in code (comments and doc links are not read) — or a module
that reaches up: one that reads a module of a higher layer in its crate's layers, the layout
docs/architecture.md draws. A module in no layer is named too, so a new file is placed before it
lands. The crates are the gate (`src/`, GATE) and the experiments beside it (`experiments/src/`,
EXPERIMENTS), which stand on the gate's public API: the gate fails the check if it names the
experiments at all — in its code or its manifest's dependencies. `.ci/run` runs this so none of
it can come back unseen.

A path is read wherever code names it: a `use` tree's every leaf (`use crate::{a::B, c::{D,
E}}`), and a path written inline (`crate::a::f()`); a name the crate root re-exports
(`crate::Claim`) is read as the module it comes from. `--self-test` first checks that the
check fails where it must, on small trees written for it.

    python3 scripts/import-circles.py
    python3 scripts/import-circles.py --self-test
"""

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Each crate's layers, bottom to top, as docs/architecture.md draws them: a module may read
# the layers below its own, and in its own layer only what lies in its own folder (the
# entry it belongs to: `claims::blocking` may read `claims::holding`, not `watch`). A
# module belongs to the longest prefix listed.
GATE = [
    ["limits", "build", "platform", "cpu_quota", "service_process", "local_traffic", "own_sockets", "vocab::millis"],
    ["local_downstream", "blocked_call"],
    ["thread_clock", "stack"],
    ["outcome"],
    ["error"],
    ["vocab", "cut_short", "fd_limit", "downstream"],
    ["pool"],
    ["server"],
    ["record"],
    ["summary"],
    ["run"],
    ["client"],
    ["usage"],
    ["claim"],
    ["target"],
    ["target_builder"],
    ["endpoint", "evidence", "probe"],
    ["mix"],
    ["held"],
    ["compare"],
    ["claims", "watch"],
    ["assert", "__support"],
]
EXPERIMENTS = [
    ["kernel", "error"],
    ["vocab"],
    ["demo", "inproc", "model"],
    ["scenario"],
    ["load"],
    ["experiment"],
    ["external"],
    ["catalog", "report"],
]
CRATES = [("src", GATE), ("experiments/src", EXPERIMENTS)]
# What the gate may never name: the experiments' crate, in code or in its manifest.
EXPERIMENTS_CRATE = re.compile(r"\bperfshape[_-]experiments\b")

PATH = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")
# A `use` item whose tree starts at the crate or a parent, up to its semicolon.
USE = re.compile(r"\buse\s+((?:crate|super)\s*::[^;]*);")
# What the crate root re-exports: `pub use claim::{Checked, Claim};`, `pub use load::Load;`.
REEXPORT = re.compile(r"^\s*pub(?:\([a-z]+\))?\s+use\s+([^;]*);", re.M)


def use_leaves(tree: str) -> list[tuple[str, str]]:
    """Every leaf of a use tree as a whole path and the name it is known by:
    `crate::{a::B, c::{D, E as F}}` gives (`crate::a::B`, `B`), (`crate::c::D`, `D`) and
    (`crate::c::E`, `F`)."""
    tree = re.sub(r"\s*([{},]|::)\s*", r"\1", tree.strip())
    if "{" not in tree:
        if not tree:
            return []
        path, _, alias = tree.partition(" as ")
        return [(path, alias or path.rsplit("::", 1)[-1])]
    head, rest = tree.split("{", 1)
    inner = rest[: rest.rindex("}")]
    parts, depth, start = [], 0, 0
    for i, c in enumerate(inner):
        depth += c == "{"
        depth -= c == "}"
        if c == "," and depth == 0:
            parts.append(inner[start:i])
            start = i + 1
    parts.append(inner[start:])
    leaves = []
    for part in parts:
        if part == "self":
            path = head.rstrip(":")
            leaves.append((path, path.rsplit("::", 1)[-1]))
        elif part:
            leaves.extend(use_leaves(head + part))
    return leaves


def module_of(src: Path, path: Path) -> str:
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(parts) or "crate"


def code_of(text: str) -> str:
    """The file's code: comments dropped, and its unit tests (a `mod tests` at the end)."""
    text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def paths_in(code: str) -> list[str]:
    """Every `crate::` and `super::` path the code names: the leaves of its use trees, and
    the paths written inline."""
    found = []
    for tree in USE.findall(code):
        found.extend(path for path, _ in use_leaves(tree))
    found.extend(PATH.findall(USE.sub("", code)))
    return found


def reexports(src: Path) -> dict[str, str]:
    """The names the crate root re-exports, each as the path it comes from."""
    lib = src / "lib.rs"
    names = {}
    if not lib.exists():
        return names
    for tree in REEXPORT.findall(code_of(lib.read_text())):
        for path, name in use_leaves(tree):
            names[name] = path if path.startswith("crate::") else "crate::" + path
    return names


def check(src: Path, layers: list[list[str]], out=sys.stdout, err=sys.stderr, name: str = "src/") -> int:
    """0 when `src` has no import circle and nothing in it reaches up `layers`; else 1,
    each fault named on `err`."""
    files = {module_of(src, p): p for p in src.rglob("*.rs")}
    roots = reexports(src)

    def resolve(path: str, current: str):
        parts = path.split("::")
        if parts[0] == "crate":
            parts = parts[1:]
            if len(parts) >= 1 and parts[0] in roots and "::".join(parts[:1]) not in files:
                parts = roots[parts[0]].split("::")[1:] + parts[1:]
        else:
            base = current.split("::") if current != "crate" else []
            if files[current].name != "mod.rs":
                base = base[:-1]
            while parts and parts[0] == "super":
                parts = parts[1:]
                if parts and parts[0] == "super":
                    base = base[:-1]
            parts = base + parts
        for i in range(len(parts), 0, -1):
            name = "::".join(parts[:i])
            if name in files:
                return name
        return None

    edges = {}
    for module, path in files.items():
        deps = set()
        for found in paths_in(code_of(path.read_text())):
            target = resolve(found, module)
            # A module reading its own parent's re-exports or itself is not an arrow.
            if target and target != module and not module.startswith(target + "::"):
                deps.add(target)
        edges[module] = deps

    def entry_of(module: str):
        """The layer a module is in and the entry (its folder) it belongs to there."""
        best = None
        for number, prefixes in enumerate(layers, start=1):
            for prefix in prefixes:
                if module == prefix or module.startswith(prefix + "::"):
                    if best is None or len(prefix) > len(best[1]):
                        best = (number, prefix)
        return best

    def layer_of(module: str):
        entry = entry_of(module)
        return entry[0] if entry else None

    upward = []
    for module in sorted(files):
        if module == "crate":
            continue
        layer = layer_of(module)
        if layer is None:
            upward.append(f"{module} is in no layer: place it in LAYERS (scripts/import-circles.py) and docs/architecture.md")
            continue
        for target in sorted(edges[module]):
            above = layer_of(target) if target != "crate" else None
            if above is not None and above > layer:
                upward.append(f"{module} (layer {layer}) reaches up to {target} (layer {above})")
            elif above == layer and entry_of(target)[1] != entry_of(module)[1]:
                upward.append(
                    f"{module} reads {target} beside it in layer {layer}, outside its own "
                    f"folder ({entry_of(module)[1]}): move what both read below them"
                )
    for line in upward:
        print(f"layering of {name}: {line}", file=err)

    # Strongly connected components (Tarjan); any with two or more modules is a circle.
    index, low, stack, on, circles = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in files:
        if v not in index:
            visit(v)
    for circle in circles:
        arrows = [f"{a} → {b}" for a in circle for b in sorted(edges[a]) if b in circle]
        print(f"import circle in {name}: {', '.join(circle)} ({'; '.join(arrows)})", file=err)
    if not circles:
        print(f"no import circles in {name} ({len(files)} modules)", file=out)
    if not upward:
        print(f"nothing in {name} reaches up ({len(layers)} layers)", file=out)
    return 1 if circles or upward else 0


# Small trees the check must fail on (or pass), each a file → its text, on two layers:
# `low` below `high`. The check's own negative controls.
SELF_TESTS = [
    ("a circle through grouped use trees", 1, "import circle", {
        "lib.rs": "mod low; mod high;",
        "low.rs": "use crate::{high::{H, G as K}};\npub struct L;",
        "high.rs": "use crate::low::L;\npub struct H; pub struct G;",
    }),
    ("a circle through inline paths and super::", 1, "import circle", {
        "lib.rs": "mod low;",
        "low/mod.rs": "mod a; mod b;",
        "low/a.rs": "pub fn f() { super::b::g() }",
        "low/b.rs": "pub fn g() { crate::low::a::f() }",
    }),
    ("reaching up through the root's re-export", 1, "reaches up to high", {
        "lib.rs": "mod low; mod high;\npub use high::{H as Top, other::{O}};",
        "low.rs": "pub fn f(_: crate::Top) {}",
        "high.rs": "pub struct H;",
    }),
    ("reading beside it in its layer, outside its own folder", 1, "outside its own folder", {
        "lib.rs": "mod low; mod high; mod side;",
        "low.rs": "",
        "high.rs": "pub struct H;",
        "side.rs": "use crate::high::H;",
    }),
    ("reading within its own folder in its layer", 0, "", {
        "lib.rs": "mod low; mod high;",
        "low.rs": "",
        "high/mod.rs": "mod a; mod b;",
        "high/a.rs": "use super::b::B;",
        "high/b.rs": "pub struct B;",
    }),
    ("a module in no layer", 1, "in no layer", {
        "lib.rs": "mod low; mod stray;",
        "low.rs": "",
        "stray.rs": "",
    }),
    ("arrows named only in comments, doc links and tests", 0, "", {
        "lib.rs": "mod low; mod high;",
        "low.rs": "//! See [`H`](crate::high::H).\n/* crate::high::H */\npub struct L; // crate::high\n"
                  "#[cfg(test)]\nmod tests {\n    use crate::high::H;\n}\n",
        "high.rs": "use crate::low::L;\npub struct H;",
    }),
]


# Small gates the dependency check must fail on (or pass): each a file → its text.
GATE_SELF_TESTS = [
    ("the gate's code naming the experiments", {
        "src/lib.rs": "pub fn f() -> perfshape_experiments::Model { todo!() }",
        "Cargo.toml": "[package]\nname = \"perfshape\"\n",
    }, 1),
    ("the gate's manifest depending on them", {
        "src/lib.rs": "",
        "Cargo.toml": "[dependencies]\nperfshape-experiments = { path = \"experiments\" }\n",
    }, 1),
    ("naming them in a comment and as a workspace member", {
        "src/lib.rs": "//! The experiments are `perfshape-experiments`, beside this crate.",
        "Cargo.toml": "[workspace]\nmembers = [\".\", \"experiments\"]\n# perfshape-experiments\n",
    }, 0),
]


def self_test() -> int:
    """Runs the check on SELF_TESTS; 0 when each comes out as it must."""
    import io

    failed = 0
    for name, want, says, files in SELF_TESTS:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp)
            for rel, text in files.items():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                (src / rel).write_text(text)
            out, err = io.StringIO(), io.StringIO()
            got = check(src, [["low"], ["high", "side"]], out, err)
            ok = got == want and says in err.getvalue()
            print(f"self-test {'ok' if ok else 'FAILED'}: {name} (exit {got}, want {want})")
            if not ok:
                print(err.getvalue(), file=sys.stderr)
                failed += 1
    for name, files, want in GATE_SELF_TESTS:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            for rel, text in files.items():
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                (root / rel).write_text(text)
            err = io.StringIO()
            got = gate_names_no_experiments(root, err)
            ok = got == want
            print(f"self-test {'ok' if ok else 'FAILED'}: {name} (exit {got}, want {want})")
            if not ok:
                print(err.getvalue(), file=sys.stderr)
                failed += 1
    return 1 if failed else 0


def gate_names_no_experiments(root: Path, err=sys.stderr) -> int:
    """0 when neither the gate's code (`src/`) nor its manifest's dependency tables name the
    experiments' crate; else 1, each place named."""
    found = []
    for path in sorted((root / "src").rglob("*.rs")):
        for number, line in enumerate(code_of(path.read_text()).splitlines(), start=1):
            if EXPERIMENTS_CRATE.search(line):
                found.append(f"{path.relative_to(root)}:{number}")
    manifest = (root / "Cargo.toml").read_text()
    table = None
    for number, line in enumerate(manifest.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if line.startswith("["):
            table = line
        elif table and "dependencies" in table and EXPERIMENTS_CRATE.search(line):
            found.append(f"Cargo.toml:{number} ({table})")
    for place in found:
        print(f"the gate depends on the experiments: {place}", file=err)
    return 1 if found else 0


if __name__ == "__main__":
    if "--self-test" in sys.argv[1:] and self_test():
        sys.exit(1)
    failed = 0
    for folder, layers in CRATES:
        failed |= check(ROOT / folder, layers, name=f"{folder}/")
    failed |= gate_names_no_experiments(ROOT)
    if not failed:
        print("the gate names no experiment (src/, Cargo.toml)")
    sys.exit(failed)
