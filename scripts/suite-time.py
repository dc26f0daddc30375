#!/usr/bin/env python3
"""Where a nextest run's time went: each test group's sum against the run's wall time.

    python3 scripts/suite-time.py [JUNIT] [--profile PROFILE] [--workspace] [--top N]

JUNIT is nextest's JUnit report of the run (default target/nextest/ci/junit.xml, which
`cargo nextest run --profile ci` writes); the tests' groups come from nextest itself
(`cargo nextest show-config test-groups`, for the same profile), so this reads the
configuration as the runner does. A group limited to one test at a time (the timing
claims' `shape`, the `exact` tests) runs its tests one after another: its sum is a floor
under the run's wall time, and the longest of them is the suite's critical path. The
tests that share a module sum together (`signin::…`), the top N of the longest group
after them. `--workspace` lists the tests as a run with `--workspace` built them (as
`.ci/run`'s does): the listing builds nothing then.
"""

import argparse
import collections
import re
import subprocess
import sys
import xml.etree.ElementTree as ET


def groups(profile: str, workspace: bool) -> dict[tuple[str, str], str]:
    """(binary id, test) → the group nextest runs it in; tests in no group are absent."""
    command = ["cargo", "nextest", "show-config", "test-groups", "--profile", profile]
    out = subprocess.run(
        command + (["--workspace"] if workspace else []),
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    found: dict[tuple[str, str], str] = {}
    group = binary = None
    for line in out.splitlines():
        if m := re.match(r"group: (\S+)", line):
            group = m.group(1)
        elif m := re.match(r"      (\S+):$", line):
            binary = m.group(1)
        elif m := re.match(r"          (\S+)$", line):
            found[(binary, m.group(1))] = group
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("junit", nargs="?", default="target/nextest/ci/junit.xml")
    parser.add_argument("--profile", default="ci")
    parser.add_argument("--workspace", action="store_true")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    root = ET.parse(args.junit).getroot()
    wall = float(root.get("time", "nan"))
    by_group: dict[str, list[tuple[float, str]]] = collections.defaultdict(list)
    of = groups(args.profile, args.workspace)
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            binary, test = suite.get("name"), case.get("name")
            group = of.get((binary, test), "(no group)")
            by_group[group].append((float(case.get("time")), f"{binary} {test}"))
    print(f"the run: {sum(map(len, by_group.values()))} tests, {wall:.1f} s of wall time")
    longest = max(by_group, key=lambda g: sum(t for t, _ in by_group[g]))
    for group, tests in sorted(by_group.items(), key=lambda kv: -sum(t for t, _ in kv[1])):
        total = sum(t for t, _ in tests)
        print(f"  {group}: {len(tests)} tests, {total:.1f} s summed ({total / wall:.0%} of the wall)")
    print(f"{longest}, by module:")
    modules: collections.Counter[str] = collections.Counter()
    for t, name in by_group[longest]:
        binary, test = name.split(" ", 1)
        modules[f"{binary} {test.split('::')[0]}"] += t
    for module, t in modules.most_common(args.top):
        print(f"  {t:6.1f} s  {module}")
    print(f"{longest}, its {args.top} longest tests:")
    for t, name in sorted(by_group[longest], reverse=True)[: args.top]:
        print(f"  {t:6.2f} s  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
