#!/usr/bin/env bash
# perfshape's load client against wrk, side by side, on the same server: closed-loop
# throughput on a no-op endpoint (/health) at the same concurrency, each for the same
# time, alternating. The server is `perfshape serve` on one worker; wrk runs one thread.
#
#   bash scripts/client-vs-wrk.sh            # concurrency 1, 4, 16, 64; 2 s each
#
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
cargo build --release --quiet
bin=target/release/perfshape
port=18080
"$bin" serve --workers 1 --bind "127.0.0.1:$port" --for 300 >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null' EXIT
sleep 1
url="http://127.0.0.1:$port/health"
echo "| concurrency | wrk (1 thread) | perfshape load (1 worker) | ÷ wrk | perfshape load (2 workers) | ÷ wrk |"
echo "|---:|---:|---:|---:|---:|---:|"
for c in 1 4 16 64; do
    wrk_rate=$(wrk -t1 -c"$c" -d2s "$url" | awk '/Requests\/sec/ {print $2}')
    one=$("$bin" load "$url" --users "$c" --seconds 2 --client-workers 1 2>/dev/null | awk 'NR==1 {print $(NF-1)}')
    two=$("$bin" load "$url" --users "$c" --seconds 2 --client-workers 2 2>/dev/null | awk 'NR==1 {print $(NF-1)}')
    printf '| %s | %.0f/s | %.0f/s | %.2f | %.0f/s | %.2f |\n' "$c" "$wrk_rate" "$one" \
        "$(echo "$one / $wrk_rate" | bc -l)" "$two" "$(echo "$two / $wrk_rate" | bc -l)"
done
