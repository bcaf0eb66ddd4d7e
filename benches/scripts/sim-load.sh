#!/usr/bin/env bash
# Load with faults (issue 34), full size: 100 watchers and 100 writers against one local cluster for 10 minutes,
# with random client disconnects (watches dropped mid-stream and resumed from their last resourceVersion,
# re-listed on 410 Gone; writes abandoned in flight). Checks that every watcher's final state equals a list
# and that the server's resident set is flat after the warm-up (the first third), and prints the events
# checked, the RSS samples and their slope. The driver is the bounded test sim/tests/it/load_faults.rs.
# Usage: benches/scripts/sim-load.sh [BIN_DIR] [SECONDS] [WATCHERS] [WRITERS]
#   BIN_DIR: a `piceli` to serve the cluster (`cargo build --release -p piceli-bin`); without it the test's
#   own `piceli-sim` (a debug build) serves. SECONDS 600, WATCHERS 100, WRITERS 100 by default.
set -euo pipefail
bin=${1:-} seconds=${2:-600} watchers=${3:-100} writers=${4:-100}
cd "$(dirname "$0")/../.."
unset KUBECONFIG
if [ -n "$bin" ]; then export PICELI_LOAD_PICELI=$bin/piceli; fi
PICELI_LOAD_SECONDS=$seconds PICELI_LOAD_WATCHERS=$watchers PICELI_LOAD_WRITERS=$writers \
  PICELI_LOAD_SAMPLE_SECONDS=${PICELI_LOAD_SAMPLE_SECONDS:-10} \
  cargo test -p piceli-sim --test it load_faults::watchers -- --nocapture 2>&1 | grep -E -A1 '^load:|test result|panicked'
uptime
