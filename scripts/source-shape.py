#!/usr/bin/env python3
"""Fails when the gate's source (`src/`, its unit tests aside) loses the shape its readers rely
on: a function over 80 lines (a long claim reads as the named steps of a context type, as
insta's `assert_snapshot` reads as `prepare`, `new_snapshot`, `finalize`), a file over 500
lines (a file holds one concept), or a parameter that is a tuple (`(held, spans): (&mut Held,
&mut Vec<PollSpan>)`: the values that travel together are a named struct whose doc says why).
A tuple inside a type — `Option<(A, B)>`, a slice of pairs, a channel's messages — is data,
not a parameter list, and passes. `.ci/run` runs it beside the layering check.

    python3 scripts/source-shape.py
    python3 scripts/source-shape.py --self-test
"""

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOST_FN_LINES = 80
MOST_FILE_LINES = 500

FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
                r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+(\w+)")
# A parameter whose pattern is a tuple (`(a, b): …`), or whose type is one (`x: (A, B)`,
# `x: &(A, B)`); `&(dyn Trait + 'static)` is a trait object, not a tuple.
TUPLE_PARAM = re.compile(r"(?:^|[(,])\s*(?:mut\s+)?\(|:\s*&?\s*(?:mut\s+)?\((?!\s*dyn\b)(?!\s*\))")


def code_lines(text: str) -> list[str]:
    """The file's lines with strings, characters and comments blanked, its unit tests (a
    `#[cfg(test)] mod tests` block) cut off."""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod tests\s*\{", text, re.M)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    lines = []
    for line in text.split("\n"):
        line = re.sub(r'r#*"(?:[^"\\]|\\.)*"#*|"(?:[^"\\]|\\.)*"', '""', line)
        line = re.sub(r"'(?:[^'\\]|\\.)'", "''", line)
        lines.append(line.split("//", 1)[0])
    return lines


def faults(path: Path, shown: str) -> list[str]:
    """Every function over MOST_FN_LINES, the file over MOST_FILE_LINES, every tuple
    parameter, each named with its place."""
    lines = code_lines(path.read_text())
    found = []
    if len(lines) > MOST_FILE_LINES:
        found.append(f"{shown}: {len(lines)} lines, more than {MOST_FILE_LINES}: split it by concept")
    depth = 0
    open_fns = []  # (name, the line it starts, the depth its body opens at)
    pending = None  # a signature read so far: (name, line, text)
    for number, line in enumerate(lines, start=1):
        named = FN.match(line)
        if named and pending is None:
            pending = (named.group(1), number, "")
        if pending is not None:
            pending = (pending[0], pending[1], pending[2] + line)
        for c in line:
            if c == "{":
                if pending is not None:
                    name, start, signature = pending
                    params = signature.split("(", 1)[1] if "(" in signature else ""
                    params = params.rsplit("->", 1)[0]
                    if TUPLE_PARAM.search(strip_generics(params)):
                        found.append(f"{shown}:{start}: `{name}` takes a tuple: name what travels together")
                    open_fns.append((name, start, depth))
                    pending = None
                depth += 1
            elif c == "}":
                depth -= 1
                if open_fns and open_fns[-1][2] == depth:
                    name, start, _ = open_fns.pop()
                    length = number - start + 1
                    if length > MOST_FN_LINES:
                        found.append(f"{shown}:{start}: `{name}` is {length} lines, more than {MOST_FN_LINES}: name its steps")
            elif c == ";" and pending is not None:
                pending = None  # a declaration without a body
    return found


def strip_generics(params: str) -> str:
    """The parameter list with every `<…>` taken out, so that a tuple inside a type
    (`Option<(A, B)>`) is not read as a parameter's."""
    out, depth = [], 0
    for c in params:
        if c == "<":
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    return "".join(out).replace("[(", "[")


def check(src: Path, out=sys.stdout, err=sys.stderr) -> int:
    found = []
    for path in sorted(src.rglob("*.rs")):
        found.extend(faults(path, str(path.relative_to(src.parent))))
    for line in found:
        print(f"source shape: {line}", file=err)
    if not found:
        print(f"source shape: no function over {MOST_FN_LINES} lines, no file over "
              f"{MOST_FILE_LINES}, no tuple parameter in {src.name}/", file=out)
    return 1 if found else 0


# Small files the check must fail on (or pass): the check's own negative controls.
SELF_TESTS = [
    ("a long function", 1, "is 82 lines", "fn long() {\n" + "    step();\n" * 80 + "}\n"),
    ("a destructured tuple parameter", 1, "takes a tuple",
     "fn f((a, b): (u8, u8)) -> u8 {\n    a + b\n}\n"),
    ("a tuple-typed parameter", 1, "takes a tuple", "fn f(pair: &(u8, u8)) {}\n"),
    ("a long file", 1, "more than 500", "const A: u8 = 0;\n" * 501),
    ("a tuple inside a type, a trait object, a unit, a test's long function", 0, "",
     "fn f(x: Option<(u8, u8)>, e: &(dyn std::error::Error + 'static), u: ()) -> (u8, u8) {\n"
     "    (1, 2)\n}\n#[cfg(test)]\nmod tests {\n    fn long() {\n" + "        step();\n" * 90 + "    }\n}\n"),
]


def self_test() -> int:
    import io

    failed = 0
    for name, want, says, text in SELF_TESTS:
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "src"
            src.mkdir()
            (src / "lib.rs").write_text(text)
            out, err = io.StringIO(), io.StringIO()
            got = check(src, out, err)
            ok = got == want and says in err.getvalue()
            print(f"self-test {'ok' if ok else 'FAILED'}: {name} (exit {got}, want {want})")
            if not ok:
                print(err.getvalue(), file=sys.stderr)
                failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    status = 0
    if "--self-test" in sys.argv[1:]:
        status |= self_test()
    status |= check(ROOT / "src")
    sys.exit(status)
