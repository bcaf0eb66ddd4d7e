#!/usr/bin/env bash
# What RBAC adds to a write, counted in instructions rather than timed (the rbac bench's rates move ±10 %
# between runs on a shared 2-core VM): `piceli-sim serve --no-controllers` under callgrind, the bench's policy
# (a ServiceAccount `writer` allowed to apply ConfigMaps amid 40 other bindings) made with kubectl, then N
# server-side applies as the admin and N as the ServiceAccount, each phase one curl process on one keep-alive
# connection, the server's counters zeroed before and dumped after each phase (`callgrind_control`). Two
# rounds. Prints each dump's total: divide by N for instructions per apply.
# Usage: SIM=target/release/piceli-sim N=300 benches/scripts/rbac-instructions.sh   (needs valgrind, kubectl, curl)
# PAR=8: each phase's requests 8 at a time (curl --parallel, up to 8 keep-alive connections).
set -euo pipefail
SIM=${SIM:-/work/target-rel/release/piceli-sim}
N=${N:-300}
PAR=${PAR:-1}
d=$(mktemp -d)
export KUBECACHEDIR=$d/cache
unset KUBECONFIG
valgrind --tool=callgrind --callgrind-out-file=$d/cg.out --dump-instr=no "$SIM" serve --no-controllers --dir $d/c >$d/sim.log 2>&1 &
vpid=$!
# Whatever happens, the server started here is stopped.
trap 'kill $vpid 2>/dev/null || true' EXIT
for _ in $(seq 600); do [ -s $d/c/kubeconfig ] && break; sleep 0.5; done
sleep 2
kc=$d/c/kubeconfig
k() { kubectl --kubeconfig $kc "$@"; }
k create sa writer >/dev/null
k create role cm-writer --verb=get,list,watch,create,update,patch --resource=configmaps >/dev/null
for i in $(seq 0 19); do
  k create rolebinding other-$i --role=cm-writer --serviceaccount=default:other-$i >/dev/null
  k create clusterrolebinding other-$i --clusterrole=system:discovery --serviceaccount=default:other-$i >/dev/null
done
k create rolebinding writer --role=cm-writer --serviceaccount=default:writer >/dev/null
sa_token=$(k create token writer)
admin_token=$(awk '/token:/ {print $2; exit}' $kc)
server=$(awk '/server:/ {print $2; exit}' $kc)
awk '/certificate-authority-data:/ {print $2; exit}' $kc | base64 -d > $d/ca.crt
# One curl process per phase: every request on one keep-alive connection.
phase() {  # $1 token, $2 round
  : > $d/req.cfg
  for i in $(seq 0 $((N-1))); do
    [ $i -gt 0 ] && echo next >> $d/req.cfg
    printf 'cacert = "'$d'/ca.crt"\nurl = "%s/api/v1/namespaces/default/configmaps/cm-%d?fieldManager=bench"\nrequest = "PATCH"\nheader = "Content-Type: application/apply-patch+yaml"\nheader = "Authorization: Bearer %s"\ndata = "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"ConfigMap\\",\\"metadata\\":{\\"name\\":\\"cm-%d\\"},\\"data\\":{\\"n\\":\\"%s-%d\\"}}"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' "$server" $((i % 50)) "$1" $((i % 50)) "$2" $i >> $d/req.cfg
  done
  if [ "$PAR" -gt 1 ]; then
    curl -s --parallel --parallel-max "$PAR" -K $d/req.cfg | sort | uniq -c
  else
    curl -s -K $d/req.cfg | sort | uniq -c
  fi
}
phase "$admin_token" warm >/dev/null
phase "$sa_token" warm >/dev/null
for r in 1 2; do
  callgrind_control -z $vpid >/dev/null
  echo "admin round $r: $(phase "$admin_token" a$r | tr '\n' ' ')"
  callgrind_control -d admin$r $vpid >/dev/null
  callgrind_control -z $vpid >/dev/null
  echo "sa round $r: $(phase "$sa_token" s$r | tr '\n' ' ')"
  callgrind_control -d sa$r $vpid >/dev/null
done
kill $vpid; wait $vpid 2>/dev/null || true
for f in $d/cg.out.*; do
  echo "$(basename $f): $(grep -E '^(summary|totals):' $f | head -1) $(grep -m1 '^desc: Trigger' $f)"
done
echo "dir $d"
