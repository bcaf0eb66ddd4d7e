#!/usr/bin/env bash
# Runs every test, after installing and starting what they need beyond cargo:
#   bash scripts/test.sh           the whole workspace on the local cluster (`cargo test --workspace`)
#   bash scripts/test.sh --real    the end-to-end suites on a real Kubernetes control plane: builds it from
#                                  Go modules (once, cached), starts it on loopback, runs the suites with
#                                  PICELI_REAL_KUBECONFIG set, stops it
#   bash scripts/test.sh --all     both, one after the other (what .ci/run does)
# Extra arguments after `--` go to every `cargo test`.
#
# Needs: cargo, kubectl, python3 >= 3.11 (the Python client and kopf are installed here with pip), Debian's
# docker-registry (installed here with apt when missing and run as root), and for --real: go >= 1.24 and
# openssl. A tool that is missing fails the run, never skips a test.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

mode=local
case "${1:-}" in
  --real) mode=real; shift ;;
  --all) mode=all; shift ;;
  --local) shift ;;
esac
[ "${1:-}" = "--" ] && shift
extra=("$@")

log() { printf 'test.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

# The suites that run on both clusters: `cargo test` target selections. A test in them that can only run on
# the local cluster has `sim_only` in its name and is left out of the real run by name (--skip sim_only).
REAL_SUITES=(
  "-p piceli --test engine"
  "-p piceli --test guarantees"
  "-p piceli --test job_replace"
  "-p piceli --test workload_readiness --test externals --test abandon"
  "-p piceli --test deploy_stages --test deploy_journal --test takeover --test deploy_rollback"
  "-p piceli-runtime --test webhook_sim --test controller_sim --test controller_leader --test controller_processes --test serve_replicas --test serve_tls_secret"
  "-p lamps --test serve --test in_cluster"
  "-p hello --test status_access --test approval --test conflicts --test engine --test guards --test deploy"
  "-p piceli-bin --test import_live"
  "-p piceli-sim --test differential"
)

install_tools() {
  command -v kubectl >/dev/null || die "kubectl is needed by the end-to-end tests and is not on PATH"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11) and "the sim tests need Python >= 3.11 (kopf 1.45)")'
  if ! python3 -c 'import kubernetes, kopf' 2>/dev/null; then
    log "installing the Python Kubernetes client and kopf (the local cluster's fidelity yardsticks)"
    # PIP_BREAK_SYSTEM_PACKAGES: a Debian python3 marked externally managed would refuse the install.
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
      --root-user-action=ignore "kubernetes==33.1.0" "kopf==1.45.2"
  fi
  if [ ! -x /usr/bin/docker-registry ]; then
    log "installing Debian's docker-registry (the image tests' OCI registry)"
    local sudo=()
    [ "$(id -u)" -eq 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq docker-registry
  fi
}

run_local() {
  log "the workspace on the local cluster"
  cargo test --workspace --no-fail-fast "${extra[@]}"
}

run_real() {
  command -v go >/dev/null || die "go (>= 1.24) builds the real control plane and is not on PATH"
  command -v openssl >/dev/null || die "openssl makes the real control plane's certificates and is not on PATH"
  local dir status=0 suite
  dir="$(mktemp -d "${TMPDIR:-/tmp}/piceli-real.XXXXXX")"
  trap 'bash "$ROOT/scripts/real-cluster.sh" stop "$dir" || true' EXIT
  bash "$ROOT/scripts/real-cluster.sh" start "$dir"
  export PICELI_REAL_KUBECONFIG="$dir/kubeconfig"
  unset PICELI_REAL_CONTEXT
  for suite in "${REAL_SUITES[@]}"; do
    log "on the real control plane: cargo test $suite"
    # shellcheck disable=SC2086 # each suite is a list of cargo arguments
    cargo test $suite --no-fail-fast "${extra[@]}" -- --skip sim_only || status=1
  done
  bash "$ROOT/scripts/real-cluster.sh" stop "$dir"
  trap - EXIT
  rm -rf "$dir"
  return $status
}

install_tools
case "$mode" in
  local) run_local ;;
  real) run_real ;;
  all) run_local; run_real ;;
esac
