#!/usr/bin/env bash
# Side by side, in one run: the memory of a local cluster (`piceli sim`) before, during and after 20
# concurrent 16 MB dry-run creates (a ConfigMap whose one value is 16 MB, `?dryRun=All`), from two builds.
# Prints VmRSS before and after (and VmHWM, the peak) from /proc/PID/status, and the HTTP codes answered.
# Usage: benches/scripts/sim-big-dry-runs.sh BASE_BIN_DIR NEW_BIN_DIR [CONCURRENCY] [MB]
#   Each BIN_DIR holds `piceli` (cargo build --release -p piceli-bin). Needs curl and python3.
set -euo pipefail
base=$1 new=$2 n=${3:-20} mb=${4:-16}
work=$(mktemp -d)
bin_of() { if [ "$1" = base ]; then echo "$base"; else echo "$new"; fi; }
stop_all() {
  for label in base new; do
    [ -d "$work/$label" ] && "$(bin_of $label)/piceli" sim stop --dir "$work/$label" >/dev/null 2>&1 || true
  done
  rm -rf "$work"
}
trap stop_all EXIT
python3 -c "import json,sys; print(json.dumps({'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'big'},'data':{'x':'a'*(int(sys.argv[1])<<20)}}))" \
  "$mb" >"$work/big.json"
mem() { grep -E "^$2:" "/proc/$1/status" | awk '{print $2}'; }
for label in base new; do
  dir=$work/$label
  "$(bin_of $label)/piceli" sim start --dir "$dir" >/dev/null
  pid=$(head -1 "$dir/sim.pid") url=$(sed -n 2p "$dir/sim.pid") token=$(cat "$dir/token")
  sleep 2
  before=$(mem "$pid" VmRSS)
  codes=$(seq "$n" | xargs -P "$n" -I{} curl -s -o /dev/null -w '%{http_code}\n' --cacert "$dir/ca.crt" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' --data-binary "@$work/big.json" \
    "$url/api/v1/namespaces/default/configmaps?dryRun=All" | sort | uniq -c | tr -s ' ' | tr '\n' ',')
  sleep 2
  after=$(mem "$pid" VmRSS) peak=$(mem "$pid" VmHWM)
  echo "$label: $n × $mb MB dry-run creates answered ${codes%,}; VmRSS ${before} kB before, ${after} kB after (peak VmHWM ${peak} kB)"
done
uptime
