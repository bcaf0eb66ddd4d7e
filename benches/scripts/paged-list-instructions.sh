#!/usr/bin/env bash
# The local cluster's instructions for kubectl's paged list of 10,000 ConfigMaps (20 pages of 500), three
# times: the ConfigMaps are created with the server running normally, then the server is restarted on the
# same directory under callgrind, one list warms it, its counters are zeroed, three lists run, and the
# dump's total is printed. Compares trees where the timed paged-list figure is too noisy.
# Usage: benches/scripts/paged-list-instructions.sh PATH/TO/piceli-sim   (needs valgrind, kubectl, python3)
set -euo pipefail
SIM=$1; d=$(mktemp -d); export KUBECACHEDIR=$d/cache; unset KUBECONFIG
"$SIM" serve --no-controllers --dir $d/c >$d/sim.log 2>&1 & p=$!
v=
# Whatever happens, the servers started here are stopped.
trap 'kill $p ${v:-} 2>/dev/null || true' EXIT
for _ in $(seq 200); do [ -s $d/c/kubeconfig ] && break; sleep 0.1; done; sleep 0.5
K="kubectl --kubeconfig $d/c/kubeconfig"
python3 -c "
import json
items=[{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':f'cm-{i}','namespace':'default'},'data':{'k':'v'*100}} for i in range(10000)]
print(json.dumps({'apiVersion':'v1','kind':'List','items':items}))" > $d/list.json
$K create --validate=false -f $d/list.json >/dev/null
kill $p; wait $p 2>/dev/null || true
valgrind --tool=callgrind --callgrind-out-file=$d/cg.out --dump-instr=no "$SIM" serve --no-controllers --dir $d/c >$d/sim2.log 2>&1 & v=$!
for _ in $(seq 600); do $K get ns default >/dev/null 2>&1 && break; sleep 0.5; done
$K get cm --chunk-size=500 -o name >/dev/null
callgrind_control -z $v >/dev/null
for r in 1 2 3; do $K get cm --chunk-size=500 -o name | wc -l; done
callgrind_control -d paged $v >/dev/null
kill $v; wait $v 2>/dev/null || true
grep -E '^(summary|totals):' $d/cg.out.* | head -3
