#!/usr/bin/env bash
# The controller benchmark of issue 15, side by side in one run on one local cluster (`piceli-sim serve`,
# its own controllers off): the same handler (on create of a ConfigMap, append "NAME UNIX_NS" to a file)
# run by piceli (controller-bench handle), knete 0.3.0 and kopf, each in a process of its own, measured by
# one driver (controller-bench drive-latency / drive-sync):
#  1. create→handler latency p50/p99 and events handled per second, 1,000 ConfigMaps created by kube with
#     16 requests in flight, into a fresh namespace per framework;
#  2. initial sync: the handler started on a namespace holding 10,000 ConfigMaps, until it handled every
#     one (time from process start, peak RSS of the handler process).
# The floor: kube's bare watcher appending the same line (controller-bench handle-raw), what the API
# server, the creator and the machine take with no framework at all.
#  3. PAIRS=N (default 0): N paired runs, the floor and piceli watching one namespace at once and timed on
#     the same COUNT creations (controller-bench drive-pair): the p99 ratio of one run, the API server's
#     queueing and the machine's scheduling shared by both (run one after the other, the floor's own p99
#     moves 20–75 ms between runs on two cores).
# Usage: benches/scripts/controller-compare.sh [VENV] [COUNT] [SYNC_COUNT]   (env: FRAMEWORKS, BIN_DIR, PAIRS)
#   Build first: cargo build --release -p controller-bench -p piceli-sim
#   VENV (default /work/venv-ctl) holds knete==0.3.0 and kopf.
set -euo pipefail
venv=${1:-/work/venv-ctl} count=${2:-1000} sync_count=${3:-10000}
root=$(cd "$(dirname "$0")/../.." && pwd)
bench=${BIN_DIR:-$root/target/release}/controller-bench
sim=${BIN_DIR:-$root/target/release}/piceli-sim
scripts=$root/benches/scripts
work=$(mktemp -d)
unset KUBECONFIG
"$sim" serve --dir "$work/cluster" --no-controllers >"$work/sim.log" 2>&1 &
sim_pid=$!
trap 'kill $sim_pid 2>/dev/null || true' EXIT
kc=$work/cluster/kubeconfig
for _ in $(seq 100); do [ -s "$kc" ] && break; sleep 0.1; done
sleep 0.5

echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB, $(uname -r); $("$venv/bin/python" --version); kopf $("$venv/bin/python" -c 'import kopf; print(kopf.__version__)')"
echo "load before: $(uptime)"
run() {  # $1: mode, $2: label, $3: namespace, $4: count; the handler command follows
  local mode=$1 label=$2 ns=$3 n=$4; shift 4
  "$bench" "$mode" "$kc" "$ns" "$n" "$work/$label-$mode.out" "$label" -- "$@"
}
for fw in ${FRAMEWORKS:-floor piceli knete kopf}; do
  ns=lat-$fw
  case $fw in
    floor) run drive-latency "$fw" "$ns" "$count" "$bench" handle-raw "$kc" "$ns" "$work/$fw-drive-latency.out" ;;
    piceli) run drive-latency "$fw" "$ns" "$count" "$bench" handle "$kc" "$ns" "$work/$fw-drive-latency.out" ;;
    knete) run drive-latency "$fw" "$ns" "$count" "$venv/bin/python" "$scripts/controller_knete.py" ;;
    kopf) run drive-latency "$fw" "$ns" "$count" env KUBECONFIG="$kc" "$venv/bin/kopf" run --standalone \
            --quiet --namespace "$ns" "$scripts/controller_kopf.py" ;;
  esac
done
for i in $(seq 1 "${PAIRS:-0}"); do
  "$bench" drive-pair "$kc" "pair-$i" "$count" "$work/pair-$i"
done
echo "load between: $(uptime)"
"$bench" seed "$kc" sync "$sync_count"
for fw in ${FRAMEWORKS:-floor piceli knete kopf}; do
  case $fw in
    floor) run drive-sync "$fw" sync "$sync_count" "$bench" handle-raw "$kc" sync "$work/$fw-drive-sync.out" ;;
    piceli) run drive-sync "$fw" sync "$sync_count" "$bench" handle "$kc" sync "$work/$fw-drive-sync.out" ;;
    knete) run drive-sync "$fw" sync "$sync_count" "$venv/bin/python" "$scripts/controller_knete.py" ;;
    kopf) run drive-sync "$fw" sync "$sync_count" env KUBECONFIG="$kc" "$venv/bin/kopf" run --standalone \
            --quiet --namespace sync "$scripts/controller_kopf.py" ;;
  esac
done
echo "load after: $(uptime)"
