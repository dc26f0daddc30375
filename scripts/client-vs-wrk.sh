#!/usr/bin/env bash
# perfshape's load driver against wrk, side by side, on the same server: closed-loop
# throughput on a no-op endpoint (/health of `perfshape serve --workers 1`) at the same
# concurrency, 2 s each, alternating: wrk with 1 thread against perfshape load with 1
# client worker, and wrk with 2 threads (1 at concurrency 1) against 2 workers — each for both of perfshape's
# drivers (connections, the load driver; reqwest, the seed strategies' client). RUNS
# times (default 3); the table gives each ratio's range over the runs.
#
#   bash scripts/client-vs-wrk.sh [RUNS]
#
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
runs=${1:-3}
cargo build --release --quiet
bin=target/release/perfshape
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$bin" serve --workers 1 --bind "127.0.0.1:$port" --for 900 >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
sleep 1
url="http://127.0.0.1:$port/health"
rate() { "$bin" load "$url" --users "$1" --seconds 2 --client-workers "$2" --driver "$3" 2>/dev/null | awk 'NR==1 {print $(NF-1)}'; }
results=$(mktemp)
for run in $(seq "$runs"); do
    for c in 1 4 16 64; do
        for t in 1 2; do
            w=$(wrk -t"$(( t < c ? t : c ))" -c"$c" -d2s "$url" | awk '/Requests\/sec/ {print $2}')
            conn=$(rate "$c" "$t" connections)
            req=$(rate "$c" "$t" reqwest)
            echo "$c $t $w $conn $req" >> "$results"
        done
    done
done
python3 - "$results" "$runs" <<'PY'
import collections, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    c, t, w, conn, req = line.split()
    rows[(int(c), int(t))].append((float(w), float(conn), float(req)))
span = lambda xs: f"{min(xs):.2f}–{max(xs):.2f}"
print(f"| concurrency | threads / workers | wrk | connections ÷ wrk | reqwest ÷ wrk |")
print("|---:|---:|---:|---:|---:|")
for (c, t), values in sorted(rows.items()):
    wrk = [w for w, _, _ in values]
    print(f"| {c} | {t} | {min(wrk):.0f}–{max(wrk):.0f}/s | {span([conn / w for w, conn, _ in values])} | "
          f"{span([req / w for w, _, req in values])} |")
print(f"\n({sys.argv[2]} runs; each ratio from the same run's wrk.)")
PY
rm -f "$results"
