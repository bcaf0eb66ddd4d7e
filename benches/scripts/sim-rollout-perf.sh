#!/usr/bin/env bash
# One engine-1000 rollout on a release `piceli sim` (as sim-idle.sh rolls it out), with perf recording the
# sim process (dwarf call graphs, 250 Hz) until every Deployment is seen Available; prints the rollout's CPU.
# Read it with `perf report -i OUT_DIR/perf.data --children`. Usage: sim-rollout-perf.sh BIN_DIR OUT_DIR
# (BIN_DIR: `piceli` and engine-1000 from `cargo build --release -p render-1000 -p piceli-bin`). Needs perf.
set -euo pipefail
bin=$1 out=$2 app=engine-1000 ns=bench-1000
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
unset KUBECONFIG
export KUBECACHEDIR=$work/kubecache
dir=$work/c
tck=$(getconf CLK_TCK)
mkdir -p "$dir" "$out"
cleanup() { "$bin/piceli" sim stop --dir "$dir/.piceli/local" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
(cd "$dir" && "$bin/piceli" sim start --dir .piceli/local >/dev/null)
kc="$dir/.piceli/local/kubeconfig"
kubectl --kubeconfig "$kc" create namespace "$ns" >/dev/null
kubectl --kubeconfig "$kc" label namespace "$ns" app.kubernetes.io/managed-by=piceli "app.kubernetes.io/name=$ns" >/dev/null
(cd "$dir" && "$bin/$app" plan -o json >plan.json || true)
hash=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$dir/plan.json")
pid=$(head -1 "$dir/.piceli/local/sim.pid")
perf record -F 250 --call-graph dwarf,32768 -p "$pid" -o "$out/perf.data" >/dev/null 2>"$out/perf.log" &
perf_pid=$!
sleep 1
c0=$(awk '{print $14 + $15}' "/proc/$pid/stat") t0=$(date +%s.%N)
(cd "$dir" && "$bin/$app" apply --timeout 0 --approve "$hash" >/dev/null)
until kubectl --kubeconfig "$kc" -n "$ns" get deploy -o json >"$dir/deploys.json" &&
  python3 "$here/sim_rollout.py" "$dir/deploys.json" >"$dir/span"; do sleep 1; done
c1=$(awk '{print $14 + $15}' "/proc/$pid/stat") t1=$(date +%s.%N)
kill -INT "$perf_pid"; wait "$perf_pid" || true
python3 -c "import sys; w=float(sys.argv[2])-float(sys.argv[1]); c=(int(sys.argv[4])-int(sys.argv[3]))/int(sys.argv[6]); print(f'rollout: {sys.argv[5]} s span; {w:.1f} s wall, {c:.2f} s CPU ({100*c/w:.0f} % of a core)')" "$t0" "$t1" "$c0" "$c1" "$(cat "$dir/span")" "$tck"
