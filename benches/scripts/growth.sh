#!/usr/bin/env bash
# Growth benchmark: one app on a fresh local cluster — first plan, apply --timeout 0, two no-op re-plans
# (whole-process times in ms). Usage: benches/scripts/growth.sh BIN_DIR APP NAMESPACE
#   e.g. benches/scripts/growth.sh target/release engine-5000 bench-5000 (see docs/benchmarks.md).
set -euo pipefail
B=$1 app=$2 ns=$3
d=$(mktemp -d) && cd $d
export KUBECACHEDIR=$d/kubecache
unset KUBECONFIG
$B/piceli sim start --dir .piceli/local >/dev/null
K=.piceli/local/kubeconfig
kubectl --kubeconfig $K create namespace $ns >/dev/null
kubectl --kubeconfig $K label namespace $ns app.kubernetes.io/managed-by=piceli app.kubernetes.io/name=$ns >/dev/null
t0=$(date +%s%N); $B/$app plan -o json > plan.json || true; t1=$(date +%s%N)
H=$(python3 -c 'import json;print(json.load(open("plan.json"))["hash"])')
$B/$app apply --timeout 0 --approve $H >/dev/null; t2=$(date +%s%N)
$B/$app plan >/dev/null; t3=$(date +%s%N)
$B/$app plan >/dev/null; t4=$(date +%s%N)
echo "$app first-plan $(( (t1-t0)/1000000 )) apply $(( (t2-t1)/1000000 )) re-plan $(( (t3-t2)/1000000 )) $(( (t4-t3)/1000000 ))"
$B/piceli sim stop --dir .piceli/local >/dev/null
