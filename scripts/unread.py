#!/usr/bin/env python3
"""Counts a suite run's claims by verdict, and the claims a missing platform read left
inconclusive (a report's `unread`), from the run's JSON artifacts.

    python3 scripts/unread.py target/perfshape/portable            # the portable build's
    python3 scripts/unread.py target/perfshape/suite --none        # Linux's: must be none

With --none it fails when any claim says a read is missing: on Linux every read is made.
`.ci/run` runs both after the two suites.
"""

import collections
import json
import sys
from pathlib import Path


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    folder = Path(args[0])
    verdicts = collections.Counter()
    unread = []
    for path in sorted(folder.glob("*.json")):
        try:
            report = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if not isinstance(report, dict) or "verdict" not in report:
            continue
        verdicts[report["verdict"]] += 1
        if report.get("unread"):
            unread.append((report["name"], report["unread"]))
    if not verdicts:
        print(f"error: no claim reports in {folder}", file=sys.stderr)
        return 1
    counted = ", ".join(f"{n} {v}" for v, n in sorted(verdicts.items()))
    print(f"{folder}: {sum(verdicts.values())} claims ({counted}); "
          f"{len(unread)} inconclusive for a read this build does not make")
    for name, why in sorted(unread):
        print(f"  {name}: {why}")
    if "--none" in sys.argv and unread:
        print("error: a claim said a read is missing where every read is made", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
