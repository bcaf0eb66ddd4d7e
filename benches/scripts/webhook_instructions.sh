#!/usr/bin/env bash
# Instructions per webhook request (docs/benchmarks.md), load-independent: runs one server under callgrind,
# warms it up (300 requests, so the handshakes are done), zeroes the counters, sends N keep-alive requests
# over 2 connections with oha, and divides the user-space instructions counted by N (the kernel's share
# and the 2 new handshakes of the measured run are not separated out; they are the same for every server).
# MODE=new-connection: a new TLS connection per request instead (the full handshake counted in each).
# Usage: benches/scripts/webhook_instructions.sh NAME PORT CMD...   (env: HARNESS, OHA, N=2000, BODY, MODE)
# e.g.   benches/scripts/webhook_instructions.sh serve 9445 target/release/guard serve --listen 127.0.0.1:9445 \
#          --tls-cert tls.crt --tls-key tls.key      (certificates: $HARNESS/make_certs.sh DIR)
# Needs: valgrind (callgrind_control), oha.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${HARNESS:-$root/../shared/bench/webhook}
oha=${OHA:-oha}
n=${N:-2000}
body=${BODY:-admissionreview-allow.json}
flags=()
[ "${MODE:-keep-alive}" = new-connection ] && flags=(--disable-keepalive)
name=$1 port=$2; shift 2
work=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$work/cg.%p" "$@" >"$work/server.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.2; done
send() {
  timeout 600 "$oha" -n "$1" -c 2 --insecure --no-tui --output-format json "${flags[@]}" -m POST \
    -H 'Content-Type: application/json' -D "$harness/$body" "https://127.0.0.1:$port/validate/no-latest-tag"
}
send 300 >/dev/null
callgrind_control -z "$pid" >/dev/null 2>&1
send "$n" >"$work/oha.json"
callgrind_control -d "$pid" >/dev/null 2>&1
kill "$pid"; wait "$pid" 2>/dev/null || true
instructions=$(awk '/^(summary|totals):/ {print $2; exit}' "$work/cg.$pid.1")
python3 - "$work/oha.json" "$name" "$n" "$instructions" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(f"{sys.argv[2]:8} {int(sys.argv[4]) / int(sys.argv[3]):9.0f} instructions/request  "
      f"status codes {d.get('statusCodeDistribution')}")
PY
