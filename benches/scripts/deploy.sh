#!/usr/bin/env bash
# `deploy` benchmark against the local API server (`piceli sim`, controllers on): whole-process time of
#  1. hello's first `deploy --approve HASH` on a fresh cluster: plan + apply + readiness + the http check;
#  2. a no-change `deploy` (nothing to approve or apply: plan, readiness confirmed, the http check).
# Usage: benches/scripts/deploy.sh [runs]     Needs: cargo build --release -p hello -p piceli-bin; hyperfine.
set -euo pipefail
runs=${1:-10}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/target/release
work=$(mktemp -d)
unset KUBECONFIG
cd "$work"

reset() {  # a fresh local cluster, no journal, and the hash of hello's first plan in $work/hash
  "$bin/piceli" sim stop --dir "$work/.piceli/local" >/dev/null 2>&1 || true
  rm -rf "$work/.piceli"
  "$bin/piceli" sim start --dir "$work/.piceli/local" >/dev/null
  "$bin/hello" deploy -o json > "$work/first.jsonl" || true   # exit 3: approval required
  python3 -c 'import json,sys; print(json.loads(open(sys.argv[1]).read().splitlines()[-1])["hash"])' \
    "$work/first.jsonl" > "$work/hash"
}
export -f reset
export bin work

hyperfine --shell=bash -w 0 -r "$runs" --export-markdown "$work/deploy.md" \
  --prepare "bash -c reset" \
  "$bin/hello deploy --approve \$(cat $work/hash)"

reset
"$bin/hello" deploy --approve "$(cat "$work/hash")" >/dev/null
hyperfine -N -w 2 -r "$runs" --export-markdown "$work/noop.md" "$bin/hello deploy"
cat "$work/deploy.md" "$work/noop.md"
"$bin/piceli" sim stop --dir "$work/.piceli/local" >/dev/null
