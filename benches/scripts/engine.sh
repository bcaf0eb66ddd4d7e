#!/usr/bin/env bash
# Plan/apply benchmark against the local API server, compared in the same run with kubectl's server-side
# apply on the same rendered objects. Usage: benches/scripts/engine.sh [engine-100|engine-1000] [runs]
# Needs: cargo build --release -p render-1000 -p piceli-bin; hyperfine; kubectl.
set -euo pipefail
app=${1:-engine-100}
runs=${2:-5}
ns=bench-${app#engine-}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/target/release
work=$(mktemp -d)
export KUBECACHEDIR=$work/kubecache
unset KUBECONFIG
cd "$work"

reset() {  # a fresh local cluster with both namespaces, and no journal
  "$bin/piceli" sim stop --dir "$work/.piceli/local" >/dev/null 2>&1 || true
  rm -rf "$work/.piceli"
  "$bin/piceli" sim start --dir "$work/.piceli/local" >/dev/null
  kubectl --kubeconfig "$work/.piceli/local/kubeconfig" create namespace "$ns" >/dev/null
  # The app's namespace exists and is the app's, so every object is dry-run like kubectl's.
  kubectl --kubeconfig "$work/.piceli/local/kubeconfig" label namespace "$ns" \
    app.kubernetes.io/managed-by=piceli "app.kubernetes.io/name=$ns" >/dev/null
  kubectl --kubeconfig "$work/.piceli/local/kubeconfig" create namespace "$ns-kubectl" >/dev/null
}
prepare_apply() {  # a fresh cluster and a stored plan whose hash is in $work/hash
  reset
  "$bin/$app" plan -o json > "$work/plan.json" || true
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$work/plan.json" > "$work/hash"
}
export -f reset prepare_apply
export bin work ns app

"$bin/$app" render --namespace "$ns-kubectl" > "$work/objects.yaml"
mkdir -p "$work/dir" && cp "$work/objects.yaml" "$work/dir/"
kc=$work/.piceli/local/kubeconfig

# First plan (every object a create, each dry-run) vs kubectl's server-side dry run.
hyperfine -N -i -w 1 -r "$runs" --export-markdown "$work/plan.md" \
  --prepare "bash -c reset" \
  "$bin/$app plan" \
  "kubectl --kubeconfig $kc apply --server-side --dry-run=server -f $work/dir" || true

# Apply of a fresh plan vs kubectl's server-side apply: writes only (`--timeout 0`, what kubectl does), and
# writes plus waiting until every Deployment has rolled out (the default).
hyperfine --shell=bash -w 0 -r "$runs" --export-markdown "$work/apply.md" \
  --prepare "bash -c prepare_apply" \
  "$bin/$app apply --timeout 0 --approve \$(cat $work/hash)" \
  "$bin/$app apply --approve \$(cat $work/hash)" \
  "kubectl --kubeconfig $kc apply --server-side -f $work/dir"

# No-op re-plan after an apply.
reset
"$bin/$app" plan -o json > plan.json || true
"$bin/$app" apply --approve "$(python3 -c 'import json;print(json.load(open("plan.json"))["hash"])')" >/dev/null
hyperfine -N -w 1 -r "$runs" --export-markdown "$work/noop.md" "$bin/$app plan"
cat "$work/plan.md" "$work/apply.md" "$work/noop.md"
"$bin/piceli" sim stop --dir "$work/.piceli/local" >/dev/null
