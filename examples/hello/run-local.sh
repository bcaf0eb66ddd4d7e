#!/usr/bin/env bash
# The quick start on the local cluster: start it, deploy hello (plan, approve the plan's hash, apply, wait
# for readiness, run its http check), then show its status with the URL `access` serves.
# Run from anywhere: `bash examples/hello/run-local.sh`. State lives in .piceli/ at the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet -p hello -p piceli-bin
# Wherever the build went (CARGO_TARGET_DIR, build.target-dir in a cargo config, or target/).
target_dir=$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
piceli=$target_dir/debug/piceli
hello=$target_dir/debug/hello

if ! "$piceli" sim status --dir .piceli/local >/dev/null 2>&1; then
  "$piceli" sim start --dir .piceli/local
fi

echo "== deploy (plan: what would change, and the hash that approves it)"
status=0
"$hello" deploy || status=$?
if [ "$status" -eq 3 ]; then
  # The same inputs give the same hash: take it from the JSON form of the plan.
  hash=$("$hello" deploy -o json | grep -o '"hash":"[0-9a-f]*"' | tail -n 1 | cut -d'"' -f4) || true
  echo
  echo "== deploy --approve $hash (apply, wait for readiness, run the checks)"
  "$hello" deploy --approve "$hash"
elif [ "$status" -ne 0 ]; then
  exit "$status"
fi

echo
echo "== status"
"$hello" status
echo
echo "== history"
"$hello" history
echo
echo "The local cluster keeps running. Reach the app on 127.0.0.1 with:"
echo "  $hello access        # then: curl http://127.0.0.1:18080/"
echo "Look at it with kubectl:"
echo "  kubectl --kubeconfig .piceli/local/kubeconfig -n hello get deploy,svc,pods"
echo "Stop it with: $piceli sim stop --dir .piceli/local"
