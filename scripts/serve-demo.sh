# Sourced by the scripts that measure load tools against the demo service: builds the
# release binary, starts `perfshape serve --workers WORKERS` on a free port of 127.0.0.1
# for at most SECONDS, stops it (by its process id) when the script exits, and returns once
# it listens — or at once, with its own error, if it exits first. Sets `bin`, `port` and
# `server`.
#
#   source scripts/serve-demo.sh; serve_demo WORKERS SECONDS
serve_demo() {
    cargo build --release --quiet
    bin=target/release/perfshape
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    local errors
    errors=$(mktemp)
    "$bin" serve --workers "$1" --bind "127.0.0.1:$port" --for "$2" >/dev/null 2>"$errors" &
    server=$!
    trap 'kill $server 2>/dev/null' EXIT
    for _ in $(seq 100); do
        if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
            rm -f "$errors"
            return 0
        fi
        if ! kill -0 "$server" 2>/dev/null; then
            echo "perfshape serve exited before listening on 127.0.0.1:$port: $(cat "$errors")" >&2
            rm -f "$errors"
            return 1
        fi
        sleep 0.05
    done
    echo "perfshape serve did not listen on 127.0.0.1:$port within 5 s" >&2
    rm -f "$errors"
    return 1
}
