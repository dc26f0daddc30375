#!/usr/bin/env bash
# A fan-out of 100 requests to /async?ms=20 of `perfshape serve --workers 2`, sent at once by
# perfshape load --fan-out, hey and oha, side by side, alternating, RUNS times (default 3):
# each tool's wall time as a multiple of the 20 ms of work (1.00 would be every request
# answered at once). perfshape opens its connections with a warm-up fan-out first; hey
# and oha open theirs inside the run they time, as they always do.
#
#   bash scripts/fan-out-vs-tools.sh [RUNS]
#
# Needs hey (Debian: apt-get install hey) and oha (cargo install oha --locked).
set -euo pipefail
cd "$(dirname "$0")/.."
for tool in hey oha; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (see the header)" >&2; exit 1; }
done
runs=${1:-3}
source scripts/serve-demo.sh
serve_demo 2 600
url="http://127.0.0.1:$port/async?ms=20"
results=$(mktemp)
for run in $(seq "$runs"); do
    ours=$("$bin" load "$url" --fan-out 100 | awk '{print $(NF-1)}')
    # Each tool's total, in milliseconds whatever unit it prints.
    hey=$(hey -n 100 -c 100 "$url" | awk '/Total:/ {print ($3 == "ms" ? $2 : $2 * 1000)}')
    oha=$(oha -n 100 -c 100 --no-tui "$url" | awk '/Total:/ {print ($3 == "ms" ? $2 : $2 * 1000)}')
    echo "$ours $hey $oha" >> "$results"
done
python3 - "$results" "$runs" <<'PY'
import sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
print("| tool | wall of 100 × 20 ms at once | ÷ work |")
print("|---|---:|---:|")
for i, tool in enumerate(["perfshape load --fan-out 100", "hey -n 100 -c 100", "oha -n 100 -c 100"]):
    walls = [row[i] for row in rows]
    print(f"| {tool} | {min(walls):.1f}–{max(walls):.1f} ms | {min(walls)/20:.2f}–{max(walls)/20:.2f} |")
print(f"\n({sys.argv[2]} runs.)")
PY
rm -f "$results"
