#!/usr/bin/env bash
# schemathesis against the local cluster, each case sent again to a real Kubernetes control plane (built
# from Go modules and started on loopback by scripts/real-cluster.sh): the `kube_same_as_real` check of
# sim/tests/schemathesis/hooks.py fails a case whose status differs (a 4xx for another mistake, an error
# where the real server succeeds, or the reverse). Both clusters get the same requests in the same order,
# after the same CRD. Prints, per document, the operations tested and each difference found.
#
# Usage: benches/scripts/schemathesis-vs-real.sh [EXAMPLES] [DOCUMENTS]   (DOCUMENTS: comma-separated)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir="$(mktemp -d "${TMPDIR:-/tmp}/piceli-diff.XXXXXX")"
trap 'bash scripts/real-cluster.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
bash scripts/real-cluster.sh start "$dir"
kc="$dir/kubeconfig"
export KUBECACHEDIR="$dir/kubecache"
# The CRD the local cluster's run applies (sim/tests/it/schemathesis.rs), on the real plane too.
sed -n '/^const CRD: &str = "/,/^";/p' sim/tests/it/schemathesis.rs | sed '1s/^const CRD: &str = "//; $d' \
  | kubectl --kubeconfig "$kc" apply -f - >/dev/null
kubectl --kubeconfig "$kc" wait --for=condition=Established crd/widgets.example.com --timeout=30s >/dev/null
# The client certificate, its key and the CA the kubeconfig names (files: scripts/real-cluster.sh writes them).
python3 - "$kc" "$dir" <<'PY'
import json, sys, yaml
kc, out = sys.argv[1], sys.argv[2]
doc = yaml.safe_load(open(kc))
cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
json.dump({"url": cluster["server"], "ca": cluster["certificate-authority"],
           "cert": user["client-certificate"], "key": user["client-key"]}, open(f"{out}/real.json", "w"))
PY
PICELI_DIFF_REAL="$dir/real.json" SCHEMATHESIS_EXAMPLES="${1:-20}" SCHEMATHESIS_DOCUMENTS="${2:-}" \
  SCHEMATHESIS_MAX_TIME=300 cargo test -p piceli-sim --test it schemathesis:: -- --nocapture 2>&1 | tee "${DIFF_LOG:-/dev/null}" \
  | grep -E '^schemathesis |the local cluster answers|test result|panicked' || true
