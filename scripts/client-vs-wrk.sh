#!/usr/bin/env bash
# perfshape's load drivers against wrk, side by side, on the same server: closed-loop
# throughput on a no-op endpoint (/health of `perfshape serve --workers 1`) at the same
# concurrency — wrk with 1 thread against perfshape load with 1 client worker, and wrk
# with 2 threads (1 at concurrency 1) against 2 workers — for both of perfshape's drivers
# (connections, the load driver; reqwest, the seed strategies' client).
#
# Each cell is PAIRS rounds (default 6) of 1 s per tool, the tools' order rotated each
# round. On this VM one run of either tool lands in a slow or a fast mode (at 16 callers
# ≈40 k/s or ≈72 k/s, wrk and perfshape alike, the server and the tool pinned to separate
# cores or not), so a single pair cannot tell the tools apart. Two ratios per run: the
# median of perfshape's rounds ÷ the median of wrk's, which moves with how many rounds
# each tool had in each mode, and the best round ÷ wrk's best, the capacity each reached.
# wrk runs twice per round: "wrk again ÷ wrk" is the same ratio between one tool and
# itself, the floor of what the measurement can tell apart.
# RUNS runs (default 3); the table gives each ratio's range over the runs, and the
# client's CPU per request (user + system of the whole process, startup included, ÷
# requests; median of the rounds, range over the runs). Every round's figures are kept in
# target/client-vs-wrk.txt.
#
#   bash scripts/client-vs-wrk.sh [RUNS] [PAIRS]
#   bash scripts/client-vs-wrk.sh --table     # the tables again, from the kept rounds
#
# Needs wrk (Debian: apt-get install wrk).
set -euo pipefail
cd "$(dirname "$0")/.."
results=target/client-vs-wrk.txt
if [ "${1:-}" != "--table" ]; then
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install wrk" >&2; exit 1; }
runs=${1:-3}
pairs=${2:-6}
source scripts/serve-demo.sh
serve_demo 1 3600
mkdir -p target
: > "$results"
url="http://127.0.0.1:$port/health"
cpu=$(mktemp)
# Each prints "requests/s requests cpu_seconds".
wrk_rate() {
    local out
    out=$(/usr/bin/time -o "$cpu" -f '%U %S' wrk -t"$(( $2 < $1 ? $2 : $1 ))" -c"$1" -d1s "$url")
    awk '/requests in/ {n=$1} /Requests\/sec/ {r=$2} END {print r, n}' <<<"$out" | tr '\n' ' '
    awk '{print $1 + $2}' "$cpu"
}
perfshape_rate() {
    local out
    out=$(/usr/bin/time -o "$cpu" -f '%U %S' "$bin" load "$url" --users "$1" --seconds 1 \
        --client-workers "$2" --driver "$3" 2>/dev/null)
    # Its first line: "… sent N = ok … ; R requests/s".
    awk 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "sent") n = $(i + 1); print $(NF - 1), n}' <<<"$out" | tr '\n' ' '
    awk '{print $1 + $2}' "$cpu"
}
for run in $(seq "$runs"); do
    for c in 1 4 16 64; do
        for t in 1 2; do
            for round in $(seq "$pairs"); do
                tools=(wrk connections reqwest wrk-again)
                shift_by=$(( round % 4 ))
                ordered=("${tools[@]:$shift_by}" "${tools[@]:0:$shift_by}")
                for tool in "${ordered[@]}"; do
                    case $tool in
                        wrk | wrk-again) figures=$(wrk_rate "$c" "$t") ;;
                        *) figures=$(perfshape_rate "$c" "$t" "$tool") ;;
                    esac
                    echo "$run $c $t $tool $figures" >> "$results"
                done
            done
        done
    done
done
rm -f "$cpu"
kill $server 2>/dev/null
fi
python3 - "$results" <<'PY'
import collections, statistics, sys
rate = collections.defaultdict(list)
cost = collections.defaultdict(list)
for line in open(sys.argv[1]):
    run, c, t, tool, r, n, seconds = line.split()
    key = (int(run), int(c), int(t), tool)
    rate[key].append(float(r))
    cost[key].append(float(seconds) / max(float(n), 1) * 1e6)
runs = sorted({k[0] for k in rate})
cells = sorted({(k[1], k[2]) for k in rate})
span = lambda xs, f: f"{f(min(xs))}–{f(max(xs))}"
ratio = lambda x: f"{x:.2f}"
whole = lambda x: f"{x:.0f}"
print("| concurrency | threads / workers | wrk (median of a run) | connections ÷ wrk: medians · best rounds | reqwest ÷ wrk: medians · best rounds | wrk again ÷ wrk: medians · best rounds | µs of CPU per request: wrk · connections · reqwest |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for c, t in cells:
    rounds = lambda run, tool: rate[(run, c, t, tool)]
    med = lambda run, tool: statistics.median(rounds(run, tool))
    best = lambda run, tool: max(rounds(run, tool))
    per = lambda tool: [statistics.median(cost[(run, c, t, tool)]) for run in runs]
    versus = lambda tool: (f"{span([med(run, tool) / med(run, 'wrk') for run in runs], ratio)} · "
                           f"{span([best(run, tool) / best(run, 'wrk') for run in runs], ratio)}")
    wrk = [med(run, "wrk") for run in runs]
    print(f"| {c} | {t} | {span(wrk, whole)}/s | {versus('connections')} | {versus('reqwest')} | {versus('wrk-again')} | "
          f"{span(per('wrk'), whole)} · {span(per('connections'), whole)} · {span(per('reqwest'), whole)} |")
rounds = len(rate[(runs[0], *cells[0], "wrk")])
print(f"\n({len(runs)} runs of {rounds} rounds per cell; each ratio against the same run's wrk.)\n")
print("Every run's rounds pooled: a tool's median (and upper quartile) ÷ wrk's.\n")
print("| concurrency | threads / workers | connections ÷ wrk | reqwest ÷ wrk | wrk again ÷ wrk |")
print("|---:|---:|---:|---:|---:|")
for c, t in cells:
    pooled = lambda tool: sorted(x for run in runs for x in rate[(run, c, t, tool)])
    quartile = lambda xs: xs[int(len(xs) * 0.75)]
    versus = lambda tool: (f"{statistics.median(pooled(tool)) / statistics.median(pooled('wrk')):.2f} "
                           f"({quartile(pooled(tool)) / quartile(pooled('wrk')):.2f})")
    print(f"| {c} | {t} | {versus('connections')} | {versus('reqwest')} | {versus('wrk-again')} |")
PY
