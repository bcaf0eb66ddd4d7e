#!/usr/bin/env bash
# The cost of the immutable-field check on a 1,000-object re-plan: two builds of engine-1000 (BASE without
# the check, NEW with it), each against a local cluster of its own, in one run (hyperfine, whole process).
# Every object of the app is applied, then re-applied by field manager `piceli` with one more annotation
# (`bench.piceli.dev/changed`), so the re-plan finds all 1,000 objects changed: each goes through the
# check and a dry run (the plan removes the annotation). The no-op re-plan (no object changed: neither
# the check nor a dry run runs) is timed too. Plans are read-only, so the re-plans repeat as they are.
# Usage: benches/scripts/immutable-check.sh BASE_BIN_DIR NEW_BIN_DIR [runs]
#   Each BIN_DIR holds `piceli` and `engine-1000` (cargo build --release -p render-1000 -p piceli-bin).
#   Needs hyperfine, kubectl, python3.
set -euo pipefail
base=$1 new=$2 runs=${3:-10}
app=engine-1000 ns=bench-1000
work=$(mktemp -d)
unset KUBECONFIG
export KUBECACHEDIR=$work/kubecache

for label in base new; do
  bin=$base; [ "$label" = new ] && bin=$new
  dir=$work/$label && mkdir -p "$dir"
  kc=$dir/.piceli/local/kubeconfig
  (cd "$dir" && "$bin/piceli" sim start --dir .piceli/local >/dev/null)
  kubectl --kubeconfig "$kc" create namespace "$ns" >/dev/null
  kubectl --kubeconfig "$kc" label namespace "$ns" \
    app.kubernetes.io/managed-by=piceli "app.kubernetes.io/name=$ns" >/dev/null
  (cd "$dir" && "$bin/$app" plan -o json > plan.json || true)
  hash=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hash"])' "$dir/plan.json")
  (cd "$dir" && "$bin/$app" apply --timeout 0 --approve "$hash" >/dev/null)
  hyperfine -N -w 1 -r "$runs" --export-markdown "$dir/noop.md" \
    -n "$label no-op re-plan" "bash -c 'cd $dir && exec $bin/$app plan'"
  # The same objects with one more annotation, applied as `piceli`: what the app applied changes.
  (cd "$dir" && "$bin/$app" render --namespace "$ns" -o json) > "$dir/objects.json"
  python3 - "$dir/objects.json" "$dir/changed.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
items = doc["items"] if isinstance(doc, dict) and "items" in doc else doc
for o in items:
    o.setdefault("metadata", {}).setdefault("annotations", {})["bench.piceli.dev/changed"] = "1"
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(sys.argv[2], "w"))
PY
  kubectl --kubeconfig "$kc" apply --server-side --field-manager=piceli --force-conflicts \
    -f "$dir/changed.json" >/dev/null
done
hyperfine -N -i -w 2 -r "$runs" --export-markdown "$work/changed.md" \
  -n "base re-plan, 1,000 changed (no check)" "bash -c 'cd $work/base && exec $base/$app plan'" \
  -n "new re-plan, 1,000 changed (check)" "bash -c 'cd $work/new && exec $new/$app plan'"
cat "$work/base/noop.md" "$work/new/noop.md" "$work/changed.md"
# Load-independent: each build's changed re-plan under callgrind — the instructions of the whole process,
# and in NEW those inside the check (`replace::decide`, inclusive) — and how many objects the plan updates.
for label in base new; do
  bin=$base; [ "$label" = new ] && bin=$new
  (cd "$work/$label" && valgrind --tool=callgrind --callgrind-out-file="$work/$label.callgrind" \
    "$bin/$app" plan -o json > "$work/$label/changed-plan.json" 2>"$work/$label/valgrind.txt" || true)
  python3 -c 'import json,sys,collections; p=json.load(open(sys.argv[1])); print(sys.argv[2], "actions:", dict(collections.Counter(a["action"] for a in p["actions"])))' \
    "$work/$label/changed-plan.json" "$label"
  callgrind_annotate --inclusive=yes "$work/$label.callgrind" 2>/dev/null \
    | grep -E "PROGRAM TOTALS|engine::replace::decide[^_]|engine::immutable::changed" | head -5
done
for label in base new; do
  bin=$base; [ "$label" = new ] && bin=$new
  "$bin/piceli" sim stop --dir "$work/$label/.piceli/local" >/dev/null 2>&1 || true
done
