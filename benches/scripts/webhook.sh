#!/usr/bin/env bash
# Webhook benchmark (docs/benchmarks.md): piceli's webhook server (benches/webhook), the harness's static
# hyper+rustls responder and knete 0.3.0, each alone on loopback, in one run, with the same AdmissionReview
# bodies and the same RSA-2048 certificate. Load: oha, 20 connections, keep-alive and a new TLS connection
# per request. Prints one line per run: server, mode, body, req/s, p50, p99, errors, RSS idle / peak.
# Usage: benches/scripts/webhook.sh   (env: HARNESS, OHA, KNETE_PY, DURATION, LIMIT_TARGET)
# Needs: oha (`cargo install oha --locked`), knete in a venv
#   (`python3.12 -m venv /tmp/knete-venv && /tmp/knete-venv/bin/pip install knete==0.3.0`), openssl.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
harness=${HARNESS:-$root/../shared/bench/webhook}
oha=${OHA:-oha}
knete_py=${KNETE_PY:-/tmp/knete-venv/bin/python}
duration=${DURATION:-10s}
work=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true' EXIT
pid=

sh "$harness/make_certs.sh" "$work" >/dev/null 2>&1
cp -r "$harness/limit" "$work/limit"
chmod -R u+w "$work/limit"
(cd "$work/limit" && CARGO_TARGET_DIR=${LIMIT_TARGET:-$work/limit-target} cargo build --release -q)
limit_bin=${LIMIT_TARGET:-$work/limit-target}/release/limit
(cd "$root" && cargo build --release -q -p webhook-bench)
piceli_bin=$root/target/release/webhook-bench

wait_port() {  # until something accepts on 127.0.0.1:$1
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2; return 1
}
rss() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }  # kB

load() {  # server port path mode body
  local server=$1 port=$2 path=$3 mode=$4 body=$5 flags=()
  [ "$mode" = new-connection ] && flags=(--disable-keepalive)
  timeout 120 "$oha" -z "$duration" -c 20 --insecure --no-tui --output-format json "${flags[@]}" \
    -m POST -H 'Content-Type: application/json' -D "$harness/$body" \
    "https://127.0.0.1:$port$path" > "$work/out.json"
  python3 - "$work/out.json" "$server" "$mode" "$body" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s, p = d["summary"], d["latencyPercentiles"]
codes = d.get("statusCodeDistribution", {})
errors = sum(d.get("errorDistribution", {}).values()) + sum(n for c, n in codes.items() if c != "200")
print(f"{sys.argv[2]:8} {sys.argv[3]:15} {sys.argv[4]:27} {s['requestsPerSec']:10.0f} req/s  "
      f"p50 {p['p50']*1000:8.2f} ms  p99 {p['p99']*1000:8.2f} ms  errors {errors}", end="")
PY
}

run() {  # server port path command...
  local server=$1 port=$2 path=$3; shift 3
  "$@" >"$work/$server.log" 2>&1 &
  pid=$!
  wait_port "$port"
  sleep 1
  local idle; idle=$(rss "$pid" VmRSS)
  for mode in keep-alive new-connection; do
    for body in admissionreview-allow.json admissionreview-deny.json; do
      [ "$mode" = new-connection ] && [ "$body" = admissionreview-deny.json ] && continue
      load "$server" "$port" "$path" "$mode" "$body"
      echo "  rss idle $((idle / 1024)) MiB, peak $(( $(rss "$pid" VmHWM) / 1024 )) MiB"
    done
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true
  pid=
}

echo "machine: $(nproc) cores, $(uname -r); duration $duration per run; oha $("$oha" --version | cut -d' ' -f2)"
run limit 9443 /validate/no-latest-tag "$limit_bin" "$work/tls.crt" "$work/tls.key" 127.0.0.1:9443
run piceli 9444 /validate/no-latest-tag "$piceli_bin" "$work/tls.crt" "$work/tls.key" 127.0.0.1:9444
run knete 8443 /validate/no-latest-tag env KNETE_TLS_CERT="$work/tls.crt" KNETE_TLS_KEY="$work/tls.key" \
  KNETE_PORT=8443 "$knete_py" "$harness/knete_server.py"
