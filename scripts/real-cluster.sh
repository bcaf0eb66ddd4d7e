#!/usr/bin/env bash
# The real Kubernetes control plane on loopback, envtest-style, for the end-to-end suites:
#   scripts/real-cluster.sh build        builds etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#                                        and kwok from their Go modules (once; cached)
#   scripts/real-cluster.sh start DIR    starts them with throwaway certificates, one kwok Node, and writes
#                                        DIR/kubeconfig (context `real`, a system:masters client certificate)
#   scripts/real-cluster.sh stop DIR     stops exactly what `start DIR` started (by the PIDs in DIR/pids)
#
# The binaries go to $PICELI_K8S_BIN, else <target dir>/k8s/bin ($CARGO_TARGET_DIR or ./target). The Go
# module that builds them is scripts/real-cluster/ (go.mod and go.sum committed): k8s.io/kubernetes v1.33.13
# with every staging module replaced by its published v0.33.13, etcd's server at the release Kubernetes
# requires, and kwok v0.7.0. `go` reuses its own build and module caches.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
MODULE="$ROOT/scripts/real-cluster"
K8S_VERSION=v1.33.13
BIN="${PICELI_K8S_BIN:-${CARGO_TARGET_DIR:-$ROOT/target}/k8s/bin}"
BINARIES=(etcd kube-apiserver kube-controller-manager kube-scheduler kwok)

log() { printf 'real-cluster: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

build() {
  command -v go >/dev/null || die "Go (1.24 or newer) is needed to build the control plane; it is not on PATH"
  local stamp="$BIN/.built" want
  want="$(cat "$MODULE/go.mod" "$MODULE/go.sum" "$MODULE/etcd/main.go" | sha256sum | cut -c1-16)"
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && all_present; then
    return 0
  fi
  mkdir -p "$BIN"
  local ld="-s -w" p
  # The version Kubernetes' own build stamps (hack/lib/version.sh), so /version reports the real gitVersion.
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=33 -X $p.gitTreeState=clean"
  done
  log "building ${BINARIES[*]} ($K8S_VERSION) into $BIN (the first build takes many minutes)"
  local started=$SECONDS
  (cd "$MODULE" && GOFLAGS="-mod=readonly -buildvcs=false" go build -ldflags "$ld" -o "$BIN/" \
    ./etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kube-scheduler sigs.k8s.io/kwok/cmd/kwok)
  echo "$want" >"$stamp"
  log "built in $((SECONDS - started)) s"
}

all_present() {
  local b
  for b in "${BINARIES[@]}"; do [ -x "$BIN/$b" ] || return 1; done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# A CA and the certificates signed by it: serving (apiserver), clients (admin = system:masters, the
# controller manager, the scheduler, kwok), and the ServiceAccount signing key.
certificates() {
  local pki="$1"
  mkdir -p "$pki"
  (
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=piceli-real-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign,digitalSignature" 2>/dev/null
    sign serving "/CN=kube-apiserver" \
      "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local" serverAuth
    sign admin "/O=system:masters/CN=piceli-admin" "" clientAuth
    sign controller-manager "/CN=system:kube-controller-manager" "" clientAuth
    sign scheduler "/CN=system:kube-scheduler" "" clientAuth
    sign kwok "/O=system:masters/CN=kwok" "" clientAuth
    sign kwok-serving "/CN=kwok-node-0" "subjectAltName=IP:127.0.0.1,DNS:kwok-node-0" serverAuth
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  )
}

sign() {
  local name="$1" subject="$2" san="$3" usage="$4" ext
  ext="$(mktemp)"
  {
    echo "basicConstraints=critical,CA:FALSE"
    echo "keyUsage=critical,digitalSignature,keyEncipherment"
    echo "extendedKeyUsage=$usage"
    [ -n "$san" ] && echo "$san"
  } >"$ext"
  openssl req -newkey rsa:2048 -nodes -keyout "$name.key" -out "$name.csr" -subj "$subject" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -out "$name.crt" -days 2 \
    -extfile "$ext" 2>/dev/null
  rm -f "$ext" "$name.csr"
}

kubeconfig() {
  local file="$1" server="$2" user="$3" context="$4" pki="$5"
  cat >"$file" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $context
  cluster:
    server: $server
    certificate-authority: $pki/ca.crt
users:
- name: $user
  user:
    client-certificate: $pki/$user.crt
    client-key: $pki/$user.key
contexts:
- name: $context
  context: {cluster: $context, user: $user}
current-context: $context
EOF
}

# Starts one process in the background, its output in DIR/logs/NAME.log, its PID appended to DIR/pids.
launch() {
  local dir="$1" name="$2"
  shift 2
  "$@" >"$dir/logs/$name.log" 2>&1 &
  echo "$! $name" >>"$dir/pids"
}

wait_for() {
  local what="$1" seconds="$2" dir="$3"
  shift 3
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if [ $SECONDS -ge $deadline ]; then
      log "timed out after ${seconds} s waiting for $what; the last lines of each log:"
      tail -n 15 "$dir"/logs/*.log >&2 || true
      stop "$dir"
      die "the control plane did not become ready"
    fi
    check_alive "$dir"
    sleep 0.3
  done
}

check_alive() {
  local dir="$1" pid name
  while read -r pid name; do
    if ! kill -0 "$pid" 2>/dev/null; then
      log "$name (pid $pid) exited; its log:"
      tail -n 30 "$dir/logs/$name.log" >&2 || true
      stop "$dir"
      die "$name exited during start"
    fi
  done <"$dir/pids"
}

start() {
  local dir="$1"
  [ -n "$dir" ] || die "usage: $0 start DIR"
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  if [ -f "$dir/pids" ]; then
    die "$dir/pids exists: a control plane may run from this directory; run \`$0 stop $dir\` first"
  fi
  build
  local started=$SECONDS pki="$dir/pki"
  rm -rf "$dir/etcd" "$dir/logs" "$pki"
  mkdir -p "$dir/logs"
  : >"$dir/pids"
  certificates "$pki"

  local etcd_port peer_port api_port kwok_port pods_port
  etcd_port="$(free_port)"
  peer_port="$(free_port)"
  api_port="$(free_port)"
  kwok_port="$(free_port)"
  pods_port="$(free_port)"
  local server="https://127.0.0.1:$api_port"
  kubeconfig "$dir/kubeconfig" "$server" admin real "$pki"
  kubeconfig "$dir/controller-manager.kubeconfig" "$server" controller-manager real "$pki"
  kubeconfig "$dir/scheduler.kubeconfig" "$server" scheduler real "$pki"
  kubeconfig "$dir/kwok.kubeconfig" "$server" kwok real "$pki"

  launch "$dir" etcd "$BIN/etcd" --name=real --data-dir="$dir/etcd" \
    --listen-client-urls="http://127.0.0.1:$etcd_port" --advertise-client-urls="http://127.0.0.1:$etcd_port" \
    --listen-peer-urls="http://127.0.0.1:$peer_port" --initial-advertise-peer-urls="http://127.0.0.1:$peer_port" \
    --initial-cluster="real=http://127.0.0.1:$peer_port" --unsafe-no-fsync --quota-backend-bytes=4294967296 \
    --log-level=warn

  launch "$dir" kube-apiserver "$BIN/kube-apiserver" \
    --etcd-servers="http://127.0.0.1:$etcd_port" \
    --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port="$api_port" \
    --cert-dir="$dir/apiserver" \
    --tls-cert-file="$pki/serving.crt" --tls-private-key-file="$pki/serving.key" \
    --client-ca-file="$pki/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$pki/sa.pub" --service-account-signing-key-file="$pki/sa.key" \
    --authorization-mode=Node,RBAC \
    --enable-admission-plugins=NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,ResourceQuota,OwnerReferencesPermissionEnforcement \
    --service-cluster-ip-range=10.0.0.0/16 --allow-privileged=true \
    --endpoint-reconciler-type=none

  local curl_ca=(curl -fsS --max-time 2 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key")
  wait_for "the apiserver's /readyz" 120 "$dir" "${curl_ca[@]}" "$server/readyz"

  launch "$dir" kube-controller-manager "$BIN/kube-controller-manager" \
    --kubeconfig="$dir/controller-manager.kubeconfig" \
    --authentication-kubeconfig="$dir/controller-manager.kubeconfig" \
    --authorization-kubeconfig="$dir/controller-manager.kubeconfig" \
    --service-account-private-key-file="$pki/sa.key" --root-ca-file="$pki/ca.crt" \
    --use-service-account-credentials=true \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 \
    --controllers='*' --concurrent-gc-syncs=5

  launch "$dir" kube-scheduler "$BIN/kube-scheduler" \
    --kubeconfig="$dir/scheduler.kubeconfig" \
    --authentication-kubeconfig="$dir/scheduler.kubeconfig" \
    --authorization-kubeconfig="$dir/scheduler.kubeconfig" \
    --leader-elect=false --bind-address=127.0.0.1 --secure-port=0

  # What the pods serve: without a kubelet no container runs, so kwok's kubelet API forwards every pod
  # port (`kubectl port-forward`, and the checks and `access` forwards through the apiserver) to one
  # static HTTP responder on loopback (real-cluster/pods-responder.py: 200 and a short page; /status/NNN
  # answers NNN, as the local cluster's responder does).
  launch "$dir" pods-http python3 "$ROOT/scripts/real-cluster/pods-responder.py" "$pods_port"
  cat >"$dir/kwok.yaml" <<EOF
apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterPortForward
metadata:
  name: every-pod-port
spec:
  forwards:
  - target: {address: 127.0.0.1, port: $pods_port}
EOF

  launch "$dir" kwok "$BIN/kwok" --kubeconfig="$dir/kwok.kubeconfig" \
    --config="$dir/kwok.yaml" \
    --node-port="$kwok_port" \
    --tls-cert-file="$pki/kwok-serving.crt" --tls-private-key-file="$pki/kwok-serving.key" \
    --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --manage-nodes-with-label-selector= \
    --disregard-status-with-annotation-selector=kwok.x-k8s.io/status=custom \
    --disregard-status-with-label-selector= \
    --cidr=10.244.0.0/16 --node-ip=127.0.0.1 \
    --node-lease-duration-seconds=40 \
    --server-address="127.0.0.1:$kwok_port"

  local kubectl=(kubectl --kubeconfig="$dir/kubeconfig" --context=real)
  export KUBECACHEDIR="$dir/kubecache"
  "${kubectl[@]}" apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations:
    kwok.x-k8s.io/node: fake
    node.alpha.kubernetes.io/ttl: "0"
  labels:
    type: kwok
    kubernetes.io/hostname: kwok-node-0
    kubernetes.io/os: linux
    kubernetes.io/arch: amd64
status:
  allocatable: {cpu: "1000", memory: 4Ti, pods: "10000", ephemeral-storage: 10Ti}
  capacity: {cpu: "1000", memory: 4Ti, pods: "10000", ephemeral-storage: 10Ti}
  nodeInfo:
    kubeletVersion: fake
    kubeProxyVersion: fake
    operatingSystem: linux
    architecture: amd64
EOF
  wait_for "the kwok Node to be Ready" 60 "$dir" \
    "${kubectl[@]}" wait --for=condition=Ready node/kwok-node-0 --timeout=1s
  wait_for "the default ServiceAccount" 60 "$dir" "${kubectl[@]}" get serviceaccount default -n default
  wait_for "kube-root-ca.crt in default" 60 "$dir" "${kubectl[@]}" get configmap kube-root-ca.crt -n default
  log "ready in $((SECONDS - started)) s: $server (kubeconfig $dir/kubeconfig, context real)"
}

stop() {
  local dir="$1" pid name
  [ -n "$dir" ] || die "usage: $0 stop DIR"
  [ -f "$dir/pids" ] || { log "nothing started from $dir"; return 0; }
  # In reverse order: kwok and the controllers before the apiserver, the apiserver before etcd.
  tac "$dir/pids" | while read -r pid name; do
    if kill -0 "$pid" 2>/dev/null; then
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
  done
  rm -f "$dir/pids"
  log "stopped the control plane of $dir"
}

case "${1:-}" in
  build) build ;;
  start) start "${2:-}" ;;
  stop) stop "${2:-}" ;;
  *) die "usage: $0 build | start DIR | stop DIR" ;;
esac
