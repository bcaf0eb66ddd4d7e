#!/usr/bin/env bash
# The quick start on the local cluster: start it, plan, approve the plan's hash, apply, report.
# Run from anywhere: `bash examples/hello/run-local.sh`. State lives in .piceli/ at the repository root.
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --quiet -p hello -p piceli-cli
piceli=target/debug/piceli
hello=target/debug/hello

if ! "$piceli" sim status --dir .piceli/local >/dev/null 2>&1; then
  "$piceli" sim start --dir .piceli/local
fi

echo "== plan"
status=0
"$hello" plan || status=$?
if [ "$status" -eq 0 ]; then
  echo "== nothing to apply: the cluster already runs this release"
else
  [ "$status" -eq 3 ] || exit "$status"
  # The same inputs give the same hash: take it from the JSON form of the plan.
  hash=$("$hello" plan -o json | grep -o '"hash":"[0-9a-f]*"' | head -n 1 | cut -d'"' -f4) || true
  echo "== apply --approve $hash"
  "$hello" apply --approve "$hash"
fi

echo "== history"
"$hello" history
echo
echo "The local cluster keeps running. Look at it with:"
echo "  kubectl --kubeconfig .piceli/local/kubeconfig -n hello get deploy,svc,pods"
echo "Stop it with: $piceli sim stop --dir .piceli/local"
