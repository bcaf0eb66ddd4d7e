#!/usr/bin/env bash
# The local cluster's memory over one engine-1000 rollout (500 Deployments × 2 replicas = 1,000 pods, as
# sim-idle.sh rolls it out): VmRSS and VmHWM (peak) of the `piceli sim` process from /proc/PID/status once every
# Deployment is seen Available, again after 10 s settled, and the rollout's span and wall time (its write rate).
# Usage: benches/scripts/sim-rollout-memory.sh BIN_DIR [APP]
#   BIN_DIR holds `piceli` and APP (cargo build --release -p render-1000 -p piceli-bin); APP: engine-1000
#   (default) | engine-100 | engine-5000. With WRAP set (e.g. WRAP="heaptrack -o /tmp/sim"), the server runs
#   in the foreground (`piceli sim serve`) under that command and is stopped with SIGINT at the end.
#   Needs kubectl and python3.
set -euo pipefail
bin=$1 app=${2:-engine-1000}
ns=bench-${app#engine-}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
unset KUBECONFIG
export KUBECACHEDIR=$work/kubecache
dir=$work/c
mkdir -p "$dir"
server= pid=
cleanup() {
  # The server itself, not WRAP's process: heaptrack's wrapper script does not pass SIGINT on.
  if [ -n "$server" ]; then kill -INT "${pid:-$server}" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  "$bin/piceli" sim stop --dir "$dir/.piceli/local" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
kc="$dir/.piceli/local/kubeconfig"
if [ -n "${WRAP:-}" ]; then
  mkdir -p "$dir/.piceli/local"
  # shellcheck disable=SC2086  # WRAP is a command line
  $WRAP "$bin/piceli" sim serve --dir "$dir/.piceli/local" >"$work/serve.log" 2>&1 &
  server=$!
  until [ -s "$kc" ] && kubectl --kubeconfig "$kc" get --raw /readyz >/dev/null 2>&1; do sleep 0.5; done
  pid=$(pgrep -f -n -- "piceli sim serve --dir $dir/.piceli/local" | head -1)
else
  (cd "$dir" && "$bin/piceli" sim start --dir .piceli/local >/dev/null)
  pid=$(head -1 "$dir/.piceli/local/sim.pid")
fi
kb() { awk -v f="$2:" '$1 == f {print $2}' "/proc/$1/status"; }
kubectl --kubeconfig "$kc" create namespace "$ns" >/dev/null
kubectl --kubeconfig "$kc" label namespace "$ns" app.kubernetes.io/managed-by=piceli "app.kubernetes.io/name=$ns" >/dev/null
(cd "$dir" && "$bin/$app" plan -o json >plan.json || true)
hash=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$dir/plan.json")
echo "before the apply: VmRSS $(kb "$pid" VmRSS) kB"
t0=$(date +%s.%N)
(cd "$dir" && "$bin/$app" apply --timeout 0 --approve "$hash" >/dev/null)
until kubectl --kubeconfig "$kc" -n "$ns" get deploy -o json >"$dir/deploys.json" &&
  python3 "$here/sim_rollout.py" "$dir/deploys.json" >"$dir/span"; do sleep 1; done
t1=$(date +%s.%N)
pods=$(kubectl --kubeconfig "$kc" -n "$ns" get pods --no-headers | grep -c ' Running ')
python3 -c "import sys; print(f'rollout of $app ($pods pods Running): {sys.argv[3]} s from the first creation to the last Available; {float(sys.argv[2])-float(sys.argv[1]):.1f} s wall from the apply until seen')" "$t0" "$t1" "$(cat "$dir/span")"
echo "rolled out: VmRSS $(kb "$pid" VmRSS) kB, VmHWM $(kb "$pid" VmHWM) kB"
sleep 10
echo "10 s later: VmRSS $(kb "$pid" VmRSS) kB, VmHWM $(kb "$pid" VmHWM) kB"
du -sk "$dir/.piceli/local" | awk '{print "state directory: " $1 " kB"}'
