#!/usr/bin/env bash
# Takeover benchmark (issue 29): the app already runs, applied from plain YAML with `kubectl apply`
# (client-side, its objects without Piceli's `managed-by` label, so none is the app's), and is taken over with
# `plan --adopt-all` then `apply`. Measures the takeover plan, the takeover apply (writes only, `--timeout 0`,
# and writes plus waiting for every rollout) and the no-op re-plan, each against a fresh local cluster; then
# one takeover whose objects' UIDs are compared before and after (objects recreated: must be 0).
# Usage: benches/scripts/takeover.sh [engine-30|engine-1000] [runs] [BINDIR]; ONCE=1 skips the repeated
# plan and apply runs (each needs a fresh cluster running the app: minutes for 1,000 objects) and times only
# the checked takeover.
# Needs: cargo build --release -p render-1000 -p piceli-bin; hyperfine; kubectl; python3.
set -euo pipefail
app=${1:-engine-30}
runs=${2:-5}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${3:-$root/target/release}
ns=bench-${app#engine-}
work=$(mktemp -d)
export KUBECACHEDIR=$work/kubecache
unset KUBECONFIG
cd "$work"
kc=$work/.piceli/local/kubeconfig

# The app's objects as someone else's plain YAML: every rendered field, without the ownership label.
"$bin/$app" render | grep -v 'app.kubernetes.io/managed-by: piceli' > "$work/objects.yaml"

running() {  # a fresh local cluster running the app from plain YAML, and no journal
  "$bin/piceli" sim stop --dir "$work/.piceli/local" >/dev/null 2>&1 || true
  rm -rf "$work/.piceli"
  "$bin/piceli" sim start --dir "$work/.piceli/local" >/dev/null
  kubectl --kubeconfig "$kc" apply -f "$work/objects.yaml" >/dev/null
  # An app that runs: its Deployments rolled out (the controllers no longer write them).
  kubectl --kubeconfig "$kc" -n "$ns" wait --for=condition=Available deployment --all --timeout=300s >/dev/null
}
planned() {  # running, and a stored takeover plan whose hash is in $work/hash
  running
  "$bin/$app" plan --adopt-all -o json > "$work/plan.json" || true
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$work/plan.json" > "$work/hash"
}
uids() {
  kubectl --kubeconfig "$kc" get deployments,services,namespaces -A \
    -o jsonpath='{range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name} {.metadata.uid}{"\n"}{end}' |
    grep -E "/$ns[/ ]|/$ns\$" | sort
}
export -f running planned
export bin work kc app ns

: > "$work/plan.md"; : > "$work/apply.md"
[ -n "${ONCE:-}" ] || hyperfine -N -i -w 1 -r "$runs" --export-markdown "$work/plan.md" \
  --prepare "bash -c running" \
  "$bin/$app plan --adopt-all"
[ -n "${ONCE:-}" ] || hyperfine --shell=bash -w 0 -r "$runs" --export-markdown "$work/apply.md" \
  --prepare "bash -c planned" \
  "$bin/$app apply --timeout 0 --approve \$(cat $work/hash)" \
  "$bin/$app apply --approve \$(cat $work/hash)"

# One takeover, checked: every object kept its UID, every action was an adoption, the re-plan is a no-op.
running
uids > "$work/before"
TIMEFORMAT='%R s'
echo -n "takeover plan: "; { time "$bin/$app" plan --adopt-all -o json > "$work/plan.json" || true; } 2>&1
python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$work/plan.json" > "$work/hash"
python3 - "$work/plan.json" <<'PY'
import collections, json, sys
plan = json.load(open(sys.argv[1]))
print("actions:", dict(collections.Counter(a["action"] for a in plan["actions"])))
PY
echo -n "takeover apply --timeout 0: "
{ time "$bin/$app" apply --timeout 0 --approve "$(cat "$work/hash")" >/dev/null; } 2>&1
uids > "$work/after"
echo "objects: $(wc -l < "$work/before"), recreated: $(comm -23 "$work/before" "$work/after" | wc -l)"
"$bin/$app" plan | tail -1
hyperfine -N -w 1 -r "$runs" --export-markdown "$work/noop.md" "$bin/$app plan"
cat "$work/plan.md" "$work/apply.md" "$work/noop.md"
"$bin/piceli" sim stop --dir "$work/.piceli/local" >/dev/null
