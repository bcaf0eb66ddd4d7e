#!/usr/bin/env bash
# The local cluster (`piceli sim`, release) and the real control plane (scripts/real-cluster.sh: kube-apiserver
# 1.33.13, etcd, kube-controller-manager, kube-scheduler, kwok), side by side in one run, with the same
# release binaries: `plan` (first), `apply` to ready (a fresh namespace per run) and the no-op re-plan of
# engine-100 and engine-1000; `apply` of hello to ready, and hello's `deploy --approve` (plan, apply, readiness
# and its HTTP check through a port forward: on the real plane kwok's kubelet API forwards the pod port to
# real-cluster.sh's static responder) and its no-change `deploy`; the admission latency one validating webhook
# (webhook-bench, by url) adds per write; a controller's create→handler latency p50/p99 (controller-bench).
# These say where the sim flatters us (docs/benchmarks.md, "The local cluster and a real control plane").
#
# Usage: benches/scripts/sim-vs-real.sh [RUNS]      (env: BIN_DIR — where the release binaries are; default:
#        build them into target/release; COUNT — writes for the admission and controller figures, 300;
#        APPS — the apps of the first part, default "engine-100 engine-1000 hello")
# Needs: hyperfine, kubectl, python3 with the kubernetes client, openssl, go (the real plane's first build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${1:-3}
count=${COUNT:-300}
if [ -z "${BIN_DIR:-}" ]; then
  (cd "$root" && cargo build --release -q -p render-1000 -p piceli-bin -p hello -p webhook-bench -p controller-bench)
fi
bin=${BIN_DIR:-${CARGO_TARGET_DIR:-$root/target}/release}
bin=$(cd "$bin" && pwd) # absolute: the measured commands run in their own directories
work=$(mktemp -d)
export KUBECACHEDIR=$work/kubecache
unset KUBECONFIG
webhook_pid=
cleanup() {
  [ -n "$webhook_pid" ] && kill "$webhook_pid" 2>/dev/null || true
  "$bin/piceli" sim stop --dir "$work/sim" >/dev/null 2>&1 || true
  bash "$root/scripts/real-cluster.sh" stop "$work/real" >/dev/null 2>&1 || true
}
trap cleanup EXIT

"$bin/piceli" sim start --dir "$work/sim" >/dev/null
bash "$root/scripts/real-cluster.sh" start "$work/real" 2>/dev/null
declare -A kc=([sim]="$work/sim/kubeconfig" [real]="$work/real/kubeconfig")
declare -A ctx=([sim]=piceli-sim [real]=real)
echo 0 >"$work/counter"

# A fresh namespace labelled as APP's (so every object is dry-run, as for an existing app), and a working
# directory of its own (its own state directory); prints "DIR NAMESPACE".
fresh() {
  local kc=$1 ctx=$2 app=$3 n
  n=$(($(cat "$work/counter") + 1))
  echo "$n" >"$work/counter"
  local ns="b$n-${app#engine-}" dir="$work/run$n"
  mkdir -p "$dir"
  kubectl --kubeconfig "$kc" --context "$ctx" create namespace "$ns" >/dev/null
  kubectl --kubeconfig "$kc" --context "$ctx" label namespace "$ns" \
    app.kubernetes.io/managed-by=piceli "app.kubernetes.io/name=${app/engine-/bench-}" >/dev/null
  echo "$dir $ns"
}

# For hyperfine's --prepare: a fresh namespace, planned; "DIR NAMESPACE HASH" in $work/next.
prepare_apply() {
  local kc=$1 ctx=$2 app=$3 dir ns
  read -r dir ns < <(fresh "$kc" "$ctx" "$app")
  (cd "$dir" && "$bin/$app" plan -o json --kubeconfig "$kc" --context "$ctx" --namespace "$ns" >plan.json) || true
  echo "$dir $ns $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$dir/plan.json")" \
    >"$work/next"
}
# For hello's deploy: a fresh namespace, `deploy` run once for its hash; "DIR NAMESPACE HASH" in $work/next.
prepare_deploy() {
  local kc=$1 ctx=$2 dir ns
  read -r dir ns < <(fresh "$kc" "$ctx" hello)
  (cd "$dir" && "$bin/hello" deploy -o json --kubeconfig "$kc" --context "$ctx" --namespace "$ns" >deploy.json) || true
  echo "$dir $ns $(grep -o '"hash":"[0-9a-f]*"' "$dir/deploy.json" | tail -n 1 | cut -d'"' -f4)" >"$work/next"
}
export -f fresh prepare_apply prepare_deploy
export bin work

mkdir -p "$work/json"
for app in ${APPS:-engine-100 engine-1000 hello}; do
  for cluster in sim real; do
    read -r dir ns < <(fresh "${kc[$cluster]}" "${ctx[$cluster]}" "$app")
    flags="--kubeconfig ${kc[$cluster]} --context ${ctx[$cluster]} --namespace $ns"
    if [ "$app" != hello ]; then
      hyperfine -N -i -w 1 -r "$runs" --export-json "$work/json/$app-$cluster-1plan.json" \
        -n "$app plan ($cluster)" "bash -c 'cd $dir && $bin/$app plan $flags'" >/dev/null
    fi
    # Apply to ready, each run in a fresh namespace planned in --prepare.
    hyperfine --shell=bash -w 0 -r "$runs" --export-json "$work/json/$app-$cluster-2apply.json" \
      -n "$app apply to ready ($cluster)" \
      --prepare "prepare_apply ${kc[$cluster]} ${ctx[$cluster]} $app" \
      "read -r d s h < $work/next && cd \$d && $bin/$app apply --approve \$h --kubeconfig ${kc[$cluster]} --context ${ctx[$cluster]} --namespace \$s --timeout 300" \
      >/dev/null
    if [ "$app" = hello ]; then
      # deploy --approve: plan, apply, readiness and the HTTP check; then a no-change deploy (readiness and the
      # check again) in the last namespace.
      hyperfine --shell=bash -w 0 -r "$runs" --export-json "$work/json/$app-$cluster-4deploy.json" \
        -n "hello deploy --approve ($cluster)" \
        --prepare "prepare_deploy ${kc[$cluster]} ${ctx[$cluster]}" \
        "read -r d s h < $work/next && cd \$d && $bin/hello deploy --approve \$h --kubeconfig ${kc[$cluster]} --context ${ctx[$cluster]} --namespace \$s" \
        >/dev/null
      read -r d s _ <"$work/next"
      hyperfine -N -w 1 -r "$runs" --export-json "$work/json/$app-$cluster-5deploy-noop.json" \
        -n "hello no-change deploy ($cluster)" \
        "bash -c 'cd $d && $bin/hello deploy --kubeconfig ${kc[$cluster]} --context ${ctx[$cluster]} --namespace $s'" >/dev/null
    else
      # No-op re-plan of the last applied namespace.
      read -r d s _ <"$work/next"
      hyperfine -N -i -w 1 -r "$runs" --export-json "$work/json/$app-$cluster-3noop.json" \
        -n "$app no-op re-plan ($cluster)" \
        "bash -c 'cd $d && $bin/$app plan --kubeconfig ${kc[$cluster]} --context ${ctx[$cluster]} --namespace $s'" >/dev/null
    fi
    # Each app's namespaces go before the next app is measured.
    kubectl --kubeconfig "${kc[$cluster]}" --context "${ctx[$cluster]}" delete namespace \
      -l "app.kubernetes.io/name=${app/engine-/bench-}" --wait=true --timeout=300s >/dev/null
  done
done
python3 - "$work/json" <<'PY'
import glob, json, os, sys
print("| measurement | mean ± σ | min | max | runs |")
print("|---|---|---|---|---|")
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    for r in json.load(open(path))["results"]:
        ms = lambda v: f"{v * 1000:,.0f} ms"
        print(f"| {r['command']} | {ms(r['mean'])} ± {ms(r['stddev'] or 0)} | {ms(r['min'])} | {ms(r['max'])} | {len(r['times'])} |")
PY

# Admission: webhook-bench by url, the same certificate, on each cluster.
sh "$root/../shared/bench/webhook/make_certs.sh" "$work" >/dev/null 2>&1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')
"$bin/webhook-bench" "$work/tls.crt" "$work/tls.key" "127.0.0.1:$port" >/dev/null 2>&1 &
webhook_pid=$!
for cluster in sim real; do
  printf '%s ' "$cluster"
  python3 "$root/benches/scripts/admission_latency.py" "${kc[$cluster]}" "${ctx[$cluster]}" \
    "https://127.0.0.1:$port/validate/no-latest-tag" "$work/tls.crt" "$count"
done

# Controllers: create→on_create latency of an edge controller, COUNT ConfigMaps.
for cluster in sim real; do
  printf '%s ' "$cluster"
  "$bin/controller-bench" latency "${kc[$cluster]}" "$count" | tail -n 1
done
