#!/usr/bin/env bash
# Side by side, in one run: hello's `deploy` from two builds (e.g. before and after a change), each against
# a local cluster of its own (`piceli sim`, controllers on), whole-process time with hyperfine:
#  1. the first `deploy --approve HASH` on a fresh cluster (plan + apply + readiness + the http check; the
#     apply takes the cluster Lease lock in builds that have it);
#  2. a no-change `deploy` (nothing to approve or apply: plan, readiness confirmed, the http check).
# Usage: benches/scripts/deploy-compare.sh BASE_BIN_DIR NEW_BIN_DIR [runs]
#   Each BIN_DIR holds `hello` and `piceli` (cargo build --release -p hello -p piceli-bin). Needs hyperfine.
set -euo pipefail
base=$1 new=$2 runs=${3:-20}
work=$(mktemp -d)
unset KUBECONFIG
export work

setup() {  # $1: label, $2: bin dir — a fresh cluster in $work/$1 and the first plan's hash in $work/$1/hash
  local dir=$work/$1
  "$2/piceli" sim stop --dir "$dir/.piceli/local" >/dev/null 2>&1 || true
  rm -rf "$dir" && mkdir -p "$dir"
  (cd "$dir" && "$2/piceli" sim start --dir .piceli/local >/dev/null)
  (cd "$dir" && "$2/hello" deploy -o json > first.jsonl || true)
  python3 -c 'import json,sys; print([json.loads(l) for l in open(sys.argv[1])][-1]["hash"])' \
    "$dir/first.jsonl" > "$dir/hash"
}
export -f setup

hyperfine --shell=bash -w 0 -r "$runs" --export-markdown "$work/first.md" \
  -n base --prepare "setup base $base" "cd $work/base && $base/hello deploy --approve \$(cat hash)" \
  -n new --prepare "setup new $new" "cd $work/new && $new/hello deploy --approve \$(cat hash)"

for label in base new; do
  bin=$base; [ "$label" = new ] && bin=$new
  setup "$label" "$bin"
  (cd "$work/$label" && "$bin/hello" deploy --approve "$(cat hash)" >/dev/null)
done
hyperfine -N -w 3 -r "$runs" --export-markdown "$work/noop.md" \
  -n base "bash -c 'cd $work/base && exec $base/hello deploy'" \
  -n new "bash -c 'cd $work/new && exec $new/hello deploy'"
cat "$work/first.md" "$work/noop.md"
for label in base new; do
  bin=$base; [ "$label" = new ] && bin=$new
  "$bin/piceli" sim stop --dir "$work/$label/.piceli/local" >/dev/null 2>&1 || true
done
