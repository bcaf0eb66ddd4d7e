#!/usr/bin/env bash
# Side by side, in one run: the CPU a local cluster (`piceli sim`) spends holding a benchmark app, from two
# builds (e.g. before and after a change), each cluster its own process in its own directory:
#  1. the rollout: CPU seconds and wall time from the apply until every Deployment is seen Available, and
#     the span from the first Deployment's creation to the last one's Available transition
#     (engine-1000: 500 Deployments × 2 replicas = 1,000 pods; the clusters roll out one after the other);
#  2. idle: CPU seconds per 5 s of wall time once settled (both clusters idle at the same time, WINDOWS
#     windows each), from utime+stime in /proc/PID/stat.
# Usage: benches/scripts/sim-idle.sh BASE_BIN_DIR NEW_BIN_DIR [APP] [WINDOWS]
#   APP: engine-100 | engine-1000 (default) | engine-5000. Each BIN_DIR holds `piceli` and APP
#   (cargo build --release -p render-1000 -p piceli-bin). Needs kubectl and python3.
set -euo pipefail
base=$1 new=$2 app=${3:-engine-1000} windows=${4:-3}
ns=bench-${app#engine-}
work=$(mktemp -d)
unset KUBECONFIG
export KUBECACHEDIR=$work/kubecache
tck=$(getconf CLK_TCK)
here=$(cd "$(dirname "$0")" && pwd)

cpu() {  # $1: pid — utime+stime in clock ticks
  awk '{print $14 + $15}' "/proc/$1/stat"
}

bin_of() { if [ "$1" = base ]; then echo "$base"; else echo "$new"; fi; }

stop_all() {
  for label in base new; do
    [ -d "$work/$label" ] && "$(bin_of $label)/piceli" sim stop --dir "$work/$label/.piceli/local" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap stop_all EXIT

for label in base new; do
  bin=$(bin_of $label) dir=$work/$label
  mkdir -p "$dir"
  (cd "$dir" && "$bin/piceli" sim start --dir .piceli/local >/dev/null)
  kc="$dir/.piceli/local/kubeconfig"
  kubectl --kubeconfig "$kc" create namespace "$ns" >/dev/null
  kubectl --kubeconfig "$kc" label namespace "$ns" \
    app.kubernetes.io/managed-by=piceli "app.kubernetes.io/name=$ns" >/dev/null
  (cd "$dir" && "$bin/$app" plan -o json >plan.json || true)
  hash=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$dir/plan.json")
  pid=$(head -1 "$dir/.piceli/local/sim.pid")
  t0=$(date +%s.%N) c0=$(cpu "$pid")
  (cd "$dir" && "$bin/$app" apply --timeout 0 --approve "$hash" >/dev/null)
  # Polled once a second (`kubectl wait --all` waits for one Deployment after the other: 98 s for 500
  # that are all Available already); the rollout's own span is read from the objects' timestamps.
  until kubectl --kubeconfig "$kc" -n "$ns" get deploy -o json >"$dir/deploys.json" &&
    python3 "$here/sim_rollout.py" "$dir/deploys.json" >"$dir/span"; do sleep 1; done
  t1=$(date +%s.%N) c1=$(cpu "$pid")
  pods=$(kubectl --kubeconfig "$kc" -n "$ns" get pods --no-headers | grep -c ' Running ')
  python3 -c "import sys; w=float(sys.argv[2])-float(sys.argv[1]); c=(int(sys.argv[4])-int(sys.argv[3]))/int(sys.argv[5]); print(f'$label rollout of $app ($pods pods Running): {sys.argv[6]} s from the first creation to the last Available; {w:.1f} s wall from the apply until seen, {c:.2f} s CPU ({100*c/w:.0f} % of a core)')" \
    "$t0" "$t1" "$c0" "$c1" "$tck" "$(cat "$dir/span")"
done

sleep 10 # let timed follow-ups (minReadySeconds, the garbage collector's full sweep) finish
pb=$(head -1 "$work/base/.piceli/local/sim.pid") pn=$(head -1 "$work/new/.piceli/local/sim.pid")
for w in $(seq "$windows"); do
  b0=$(cpu "$pb") n0=$(cpu "$pn")
  sleep 5
  b1=$(cpu "$pb") n1=$(cpu "$pn")
  python3 -c "import sys; t=int(sys.argv[5]); print(f'idle window $w: base {(int(sys.argv[2])-int(sys.argv[1]))/t:.2f} s CPU / 5 s, new {(int(sys.argv[4])-int(sys.argv[3]))/t:.2f} s CPU / 5 s')" \
    "$b0" "$b1" "$n0" "$n1" "$tck"
done
uptime
