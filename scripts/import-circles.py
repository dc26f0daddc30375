#!/usr/bin/env python3
"""Fails when `src/` has an import circle: two modules (files) that reach each other through
`crate::` or `super::` paths in code (comments and doc links are not read). The layers run
bottom to top and nothing reaches up; `.ci/run` runs this so a circle cannot come back
unseen.

    python3 scripts/import-circles.py
"""

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src"
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
    return 1 if circles else 0


if __name__ == "__main__":
    sys.exit(main())
