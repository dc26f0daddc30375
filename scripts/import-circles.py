#!/usr/bin/env python3
"""Fails when `src/` has an import circle — two modules (files) that reach each other through
`crate::` or `super::` paths in code (comments and doc links are not read) — or a module that
reaches up: one that reads a module of a higher layer in LAYERS, the layout docs/architecture.md
draws. A module in no layer is named too, so a new file is placed before it lands. `.ci/run`
runs this so neither can come back unseen.

    python3 scripts/import-circles.py
"""

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
# The library's layers, bottom to top, as docs/architecture.md draws them: a module may read
# its own layer's and those below. A module belongs to the longest prefix listed.
LAYERS = [
    ["limits", "build", "kernel", "cpu_quota", "service_process", "vocab::millis"],
    ["outcome"],
    ["error"],
    ["vocab", "cut_short", "fd_limit"],
    ["pool", "server", "inproc"],
    ["record", "run", "summary"],
    ["client"],
    ["usage"],
    ["model"],
    ["claim"],
    ["target", "target_builder"],
    ["endpoint", "mix", "scenario", "load", "evidence", "probe"],
    ["claims", "compare"],
    ["catalog", "experiment", "report", "external", "assert"],
]

PATH = re.compile(r"\b((?:crate|super)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def module_of(path: Path) -> str:
    rel = path.relative_to(SRC).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return "::".join(parts) or "crate"


def code_of(text: str) -> str:
    """The file's code: comments dropped, and its unit tests (a `mod tests` at the end)."""
    text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def main() -> int:
    files = {module_of(p): p for p in SRC.rglob("*.rs")}

    def resolve(path: str, current: str):
        parts = path.split("::")
        if parts[0] == "crate":
            parts = parts[1:]
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
        for found in PATH.findall(code_of(path.read_text())):
            target = resolve(found, module)
            # A module reading its own parent's re-exports or itself is not an arrow.
            if target and target != module and not module.startswith(target + "::"):
                deps.add(target)
        edges[module] = deps

    def layer_of(module: str):
        best = None
        for number, prefixes in enumerate(LAYERS, start=1):
            for prefix in prefixes:
                if module == prefix or module.startswith(prefix + "::"):
                    if best is None or len(prefix) > best[1]:
                        best = (number, len(prefix))
        return best[0] if best else None

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
    for line in upward:
        print(f"layering of src/: {line}", file=sys.stderr)

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
        print(f"import circle in src/: {', '.join(circle)} ({'; '.join(arrows)})", file=sys.stderr)
    if not circles:
        print(f"no import circles in src/ ({len(files)} modules)")
    if not upward:
        print(f"nothing in src/ reaches up ({len(LAYERS)} layers)")
    return 1 if circles or upward else 0


if __name__ == "__main__":
    sys.exit(main())
