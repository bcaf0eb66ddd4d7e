#!/usr/bin/env bash
# Side by side, in one run: a benchmark app's `plan` from two builds (e.g. before and after a change), each
# against a local cluster of its own (`piceli sim`), whole-process time with hyperfine:
#  1. the first plan on a fresh cluster (every object a create, each dry-run);
#  2. the no-op re-plan after an apply (nothing changed).
# (plan exits 3 when it has changes to approve: the first plan is timed with -i.)
# Usage: benches/scripts/plan-compare.sh BASE_BIN_DIR NEW_BIN_DIR APP [runs]
#   APP: engine-100 | engine-1000 | engine-5000. Each BIN_DIR holds `piceli` and APP
#   (cargo build --release -p render-1000 -p piceli-bin). Needs hyperfine and kubectl.
set -euo pipefail
base=$1 new=$2 app=$3 runs=${4:-10}
ns=bench-${app#engine-}
work=$(mktemp -d)
unset KUBECONFIG
export KUBECACHEDIR=$work/kubecache
export work app ns

reset() {  # $1: label, $2: bin dir — a fresh cluster in $work/$1 with the app's namespace, no journal
  local dir=$work/$1
  "$2/piceli" sim stop --dir "$dir/.piceli/local" >/dev/null 2>&1 || true
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && "$2/piceli" sim start --dir .piceli/local >/dev/null)
  kubectl --kubeconfig "$dir/.piceli/local/kubeconfig" create namespace "$ns" >/dev/null
  kubectl --kubeconfig "$dir/.piceli/local/kubeconfig" label namespace "$ns" \
    app.kubernetes.io/managed-by=piceli "app.kubernetes.io/name=$ns" >/dev/null
}
export -f reset

hyperfine --shell=bash -i -w 0 -r "$runs" --export-markdown "$work/first.md" \
  -n "base first plan" --prepare "reset base $base" "cd $work/base && $base/$app plan >/dev/null" \
  -n "new first plan" --prepare "reset new $new" "cd $work/new && $new/$app plan >/dev/null"

for label in base new; do
  bin=$base; [ "$label" = new ] && bin=$new
  reset "$label" "$bin"
  (cd "$work/$label" && "$bin/$app" plan -o json > plan.json || true)
  hash=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$work/$label/plan.json")
  (cd "$work/$label" && "$bin/$app" apply --timeout 0 --approve "$hash" >/dev/null)
done
hyperfine -N -w 2 -r "$runs" --export-markdown "$work/noop.md" \
  -n "base no-op re-plan" "bash -c 'cd $work/base && exec $base/$app plan'" \
  -n "new no-op re-plan" "bash -c 'cd $work/new && exec $new/$app plan'"
cat "$work/first.md" "$work/noop.md"
for label in base new; do
  bin=$base; [ "$label" = new ] && bin=$new
  "$bin/piceli" sim stop --dir "$work/$label/.piceli/local" >/dev/null 2>&1 || true
done
