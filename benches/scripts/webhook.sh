#!/usr/bin/env bash
# Webhook benchmark (docs/benchmarks.md): the guard example's `serve` (examples/guard: the app binary, its
# webhooks declared in app!), piceli's webhook server alone (benches/webhook), the harness's static
# hyper+rustls responder and knete 0.3.0, each alone on loopback, in one run, with the same AdmissionReview
# bodies and the same RSA-2048 certificate. Load: oha, 20 connections, keep-alive and a new TLS connection
# per request (and HTTP/2 for piceli alone). Prints one line per run: server, mode, body, req/s, p50, p99,
# errors, RSS idle / peak.
# Usage: benches/scripts/webhook.sh   (env: HARNESS, OHA, KNETE_PY, DURATION, LIMIT_TARGET, SERVERS, BIN_DIR, PIN)
#   BIN_DIR: where `guard` and `webhook-bench` are (default: build them into target/release).
#   PIN=S:L: run every server on CPU S and the load generator on CPU L (taskset), so that the two do not
#   preempt each other on a small machine; the same for every server compared.
# Needs: oha (`cargo install oha --locked`) or wrk (`LOAD=wrk`, Debian's package), knete in a venv
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
if [ -z "${BIN_DIR:-}" ]; then
  (cd "$root" && cargo build --release -q -p webhook-bench -p guard)
fi
bin_dir=${BIN_DIR:-$root/target/release}
piceli_bin=$bin_dir/webhook-bench
guard_bin=$bin_dir/guard
server_pin=() load_pin=()
if [ -n "${PIN:-}" ]; then
  server_pin=(taskset -c "${PIN%%:*}") load_pin=(taskset -c "${PIN##*:}")
fi

wait_port() {  # until something accepts on 127.0.0.1:$1
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2; return 1
}
rss() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }  # kB

load() {  # server port path mode body
  if [ "${LOAD:-oha}" = wrk ]; then load_wrk "$@"; return; fi
  local server=$1 port=$2 path=$3 mode=$4 body=$5 flags=()
  [ "$mode" = new-connection ] && flags=(--disable-keepalive)
  [ "$mode" = http2 ] && flags=(--http2)
  timeout 120 "${load_pin[@]}" "$oha" -z "$duration" -c 20 --insecure --no-tui --output-format json "${flags[@]}" \
    -m POST -H 'Content-Type: application/json' -D "$harness/$body" \
    "https://127.0.0.1:$port$path" > "$work/out.json"
  # "aborted due to deadline": the requests still in flight when -z ends, not failures.
  python3 - "$work/out.json" "$server" "$mode" "$body" "$work/rps.tsv" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s, p = d["summary"], d["latencyPercentiles"]
codes = d.get("statusCodeDistribution", {})
errs = {k: n for k, n in d.get("errorDistribution", {}).items() if k != "aborted due to deadline"}
errors = sum(errs.values()) + sum(n for c, n in codes.items() if c != "200")
print(f"{sys.argv[2]:7} {sys.argv[3]:15} {sys.argv[4]:27} {s['requestsPerSec']:8.0f} req/s  "
      f"p50 {p['p50']*1000:7.2f} ms  p99 {p['p99']*1000:7.2f} ms  errors {errors}{' ' + str(errs) if errs else ''}", end="")
with open(sys.argv[5], "a") as f:
    f.write(f"{sys.argv[2]}\t{sys.argv[3]}\t{sys.argv[4]}\t{s['requestsPerSec']}\t{p['p99']*1000}\n")
PY
}

# LOAD=wrk: wrk (Debian) with the harness's post.lua, 2 threads, 20 connections; a new connection per
# request is `Connection: close` (CLOSE=1). wrk has no HTTP/2: those runs are skipped.
load_wrk() {  # server port path mode body
  local server=$1 port=$2 path=$3 mode=$4 body=$5 close=0
  [ "$mode" = new-connection ] && close=1
  (cd "$harness" && BODY=$body CLOSE=$close timeout 120 wrk -t2 -c20 -d"$duration" --latency \
    -s post.lua "https://127.0.0.1:$port$path") > "$work/out.txt"
  python3 - "$work/out.txt" "$server" "$mode" "$body" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def ms(q):
    m = re.search(rf"^\s+{q}%\s+([\d.]+)(us|ms|s)\s*$", t, re.M)
    v, u = float(m.group(1)), m.group(2)
    return v / 1000 if u == "us" else v * 1000 if u == "s" else v
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
non2xx = int((re.search(r"Non-2xx or 3xx responses: (\d+)", t) or [0, 0])[1])
sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", t)
errs = sum(map(int, sock.groups())) if sock else 0
print(f"{sys.argv[2]:7} {sys.argv[3]:15} {sys.argv[4]:27} {rps:8.0f} req/s  "
      f"p50 {ms(50):7.2f} ms  p99 {ms(99):7.2f} ms  errors {errs + non2xx}"
      f"{' (socket ' + '/'.join(sock.groups()) + ')' if errs else ''}", end="")
PY
}

start() {  # server port command...: starts it alone, waits until it listens
  local server=$1 port=$2; shift 2
  "${server_pin[@]}" "$@" >"$work/$server.log" 2>&1 &
  pid=$!
  wait_port "$port"
  sleep 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }

declare -A port=([limit]=9443 [piceli]=9444 [serve]=9445 [knete]=8443)
launch() {  # server
  case $1 in
    limit) start limit 9443 "$limit_bin" "$work/tls.crt" "$work/tls.key" 127.0.0.1:9443 ;;
    piceli) start piceli 9444 "$piceli_bin" "$work/tls.crt" "$work/tls.key" 127.0.0.1:9444 ;;
    serve) start serve 9445 "$guard_bin" serve --listen 127.0.0.1:9445 --tls-cert "$work/tls.crt" \
      --tls-key "$work/tls.key" ;;
    knete) start knete 8443 env KNETE_TLS_CERT="$work/tls.crt" KNETE_TLS_KEY="$work/tls.key" \
      KNETE_PORT=8443 "$knete_py" "$harness/knete_server.py" ;;
  esac
}

if [ "${LOAD:-oha}" = wrk ]; then tool="$({ wrk -v 2>&1 || true; } | head -1 | cut -d' ' -f1-2)"; else tool="oha $("$oha" --version | cut -d' ' -f2)"; fi
echo "machine: $(nproc) cores, $(uname -r); duration $duration per run; $tool; pinned ${PIN:-no}; load average $(cut -d' ' -f1-3 /proc/loadavg)"
# Each configuration runs against the three servers back to back (each alone, freshly started), so that
# the machine's other load is alike for the figures compared.
for config in "keep-alive admissionreview-allow.json" "keep-alive admissionreview-deny.json" \
              "new-connection admissionreview-allow.json" "http2 admissionreview-allow.json"; do
  set -- $config
  for server in ${SERVERS:-limit serve piceli knete}; do
    # The responder serves HTTP/1.1 only, knete HTTP/1.0 only.
    [ "$1" = http2 ] && [ "$server" != piceli ] && [ "$server" != serve ] && continue
    [ "$1" = http2 ] && [ "${LOAD:-oha}" = wrk ] && continue
    launch "$server"
    idle=$(rss "$pid" VmRSS)
    load "$server" "${port[$server]}" /validate/no-latest-tag "$1" "$2"
    echo "  rss idle $((idle / 1024)) MiB, peak $(( $(rss "$pid" VmHWM) / 1024 )) MiB"
    stop
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
# Same-run ratios (oha only): serve and the server alone against the responder and knete.
[ -f "$work/rps.tsv" ] && python3 - "$work/rps.tsv" <<'PY'
import sys
rps = {}
for line in open(sys.argv[1]):
    server, mode, body, r, p99 = line.rstrip("\n").split("\t")
    rps[(server, mode, body)] = float(r)
for (server, mode, body), r in sorted(rps.items()):
    if server not in ("serve", "piceli"):
        continue
    parts = [f"{r / rps[(ref, mode, body)]:.2f}x {ref}" for ref in ("limit", "knete")
             if rps.get((ref, mode, body))]
    if parts:
        print(f"ratio   {server:7} {mode:15} {body:27} " + ", ".join(parts))
PY
