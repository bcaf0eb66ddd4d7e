#!/usr/bin/env bash
# schemathesis against the local cluster's OpenAPI v3 documents (core v1, apps v1, batch v1, rbac v1,
# admissionregistration v1 and a CRD's), longer than the bounded run of `cargo test -p piceli-sim --test
# schemathesis`: EXAMPLES examples per operation (default 100), each document time-boxed at 300 s.
# Prints, per document, the operations tested and the cases generated; fails on any finding
# (sim/tests/schemathesis/hooks.py says what is checked). Needs schemathesis (scripts/test.sh installs it).
#
# Usage: benches/scripts/schemathesis.sh [EXAMPLES] [DOCUMENTS]   (DOCUMENTS: comma-separated, e.g. api/v1)
set -euo pipefail
cd "$(dirname "$0")/../.."
SCHEMATHESIS_EXAMPLES="${1:-100}" SCHEMATHESIS_DOCUMENTS="${2:-}" SCHEMATHESIS_MAX_TIME=300 \
  cargo test -p piceli-sim --test it schemathesis:: -- --nocapture 2>&1 | grep -E '^schemathesis |test result|panicked'
