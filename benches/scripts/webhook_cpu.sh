#!/usr/bin/env bash
# CPU per admission request (docs/benchmarks.md, issue 14): a server's user + system CPU time, from
# /proc/PID/stat, over a fixed number of keep-alive requests (oha, 20 connections), divided by that
# number. Less sensitive to a shared machine than req/s or p99: what it counts is the server's own work.
# Usage: benches/scripts/webhook_cpu.sh NAME PORT COMMAND...   (env: HARNESS, OHA, REQUESTS, BODY)
# Example: benches/scripts/webhook_cpu.sh serve 9445 target/release/guard serve --listen 127.0.0.1:9445 \
#            --tls-cert DIR/tls.crt --tls-key DIR/tls.key        # DIR from $HARNESS/make_certs.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${HARNESS:-$root/../shared/bench/webhook}
oha=${OHA:-oha}
requests=${REQUESTS:-100000}
body=${BODY:-admissionreview-allow.json}
name=$1 port=$2
shift 2
log=$(mktemp)
"$@" >"$log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
sleep 0.5
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }  # utime + stime, in clock ticks
hz=$(getconf CLK_TCK)
before=$(ticks)
timeout 120 "$oha" -n "$requests" -c 20 --insecure --no-tui --output-format json -m POST \
  -H 'Content-Type: application/json' -D "$harness/$body" \
  "https://127.0.0.1:$port/validate/no-latest-tag" >/dev/null
after=$(ticks)
awk -v n="$name" -v t=$((after - before)) -v hz="$hz" -v r="$requests" -v b="$body" \
  'BEGIN { printf "%-10s %-27s %6.1f µs CPU per request (%d requests)\n", n, b, t / hz * 1e6 / r, r }'
