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

# The suites that run on both clusters: a package and the modules of its one integration-test binary
# (`tests/it/`), as `cargo test -p PACKAGE --test it MODULE:: …` filters. A test in them that can only run on
# the local cluster has `sim_only` in its name and is left out of the real run by name (--skip sim_only).
REAL_SUITES=(
  "piceli engine guarantees job_replace workload_readiness externals abandon deploy_stages deploy_journal takeover deploy_rollback immutable_fields crd_versions custom_resources generated_secrets"
  "piceli-runtime webhook_sim controller_sim controller_leader controller_processes serve_replicas serve_tls_secret controller_triggers controller_policy webhook_shutdown webhook_generic controller_app_fns serve_self_managed"
  "lamps serve in_cluster serve_logs"
  "piceli-otlp export"
  "hello status_access approval conflicts engine guards deploy"
  "piceli-bin import_live"
  "piceli-sim differential bad_requests"
)

install_tools() {
  command -v kubectl >/dev/null || die "kubectl is needed by the end-to-end tests and is not on PATH"
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 11) and "the sim tests need Python >= 3.11 (kopf 1.45)")'
  if ! python3 -c 'import kubernetes, kopf, schemathesis' 2>/dev/null || ! command -v schemathesis >/dev/null; then
    log "installing the Python Kubernetes client, kopf and schemathesis (the local cluster's yardsticks)"
    # PIP_BREAK_SYSTEM_PACKAGES: a Debian python3 marked externally managed would refuse the install.
    PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --quiet --disable-pip-version-check \
      --root-user-action=ignore "kubernetes==33.1.0" "kopf==1.45.2" "schemathesis==4.32.5"
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
  local package modules filters module
  for suite in "${REAL_SUITES[@]}"; do
    read -r package modules <<<"$suite"
    filters=()
    for module in $modules; do filters+=("$module::"); done
    log "on the real control plane: cargo test -p $package --test it ${filters[*]}"
    cargo test -p "$package" --test it --no-fail-fast "${extra[@]}" -- "${filters[@]}" --skip sim_only || status=1
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
