#!/usr/bin/env bash
# The cargo-fuzz targets of issue 34 (fuzz/README.md), each run for a fixed time, one after another, one
# process each (`-jobs` is never passed: the machine is shared). Not part of CI's test run.
# Usage: benches/scripts/fuzz.sh [SECONDS] [TARGET…]      (default: 120 s, every target)
# env: SANITIZER (default `none`; `address` for ASAN), FUZZ_ARGS (more libFuzzer flags).
# Per target it prints the executions, exec/s, corpus size and findings from libFuzzer's final stats;
# the full log is in fuzz/logs/TARGET.log. Exit status: non-zero when a target crashed (a panic, a
# timeout of 10 s on one input, or over 2 GB of memory); the input is in fuzz/artifacts/TARGET/.
# Needs a nightly toolchain (`rustup toolchain list`) and `cargo install cargo-fuzz`.
set -uo pipefail
seconds=${1:-120}
shift || true
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root/fuzz"
export CARGO_INCREMENTAL=0
sanitizer=${SANITIZER:-none}
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
echo "machine: $(nproc) vCPUs, $(uname -r); $(rustc +nightly -V); cargo-fuzz $(cargo +nightly fuzz --version | awk '{print $2}'); sanitizer: $sanitizer; $seconds s per target"
cargo +nightly fuzz build -s "$sanitizer" -a || exit 2
mkdir -p logs
status=0
printf '%-18s %8s %12s %8s %12s %8s %s\n' target seconds executions exec/s corpus rss_mb findings
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    dirs=("corpus/$t" "seeds/$t")
    [ -d "regressions/$t" ] && dirs+=("regressions/$t")
    log=logs/$t.log
    # shellcheck disable=SC2086
    cargo +nightly fuzz run -s "$sanitizer" -a "$t" "${dirs[@]}" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -print_final_stats=1 ${FUZZ_ARGS:-} >"$log" 2>&1
    rc=$?
    runs=$(awk '/stat::number_of_executed_units:/ {n=$2} END {print n}' "$log")
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | awk '{print $5}' | tail -1)
    speed=$(awk '/stat::average_exec_per_sec:/ {n=$2} END {print n}' "$log")
    rss=$(awk '/stat::peak_rss_mb:/ {n=$2} END {print n}' "$log")
    corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$log" | tail -1 | awk '{print $2}')
    if [ $rc -eq 0 ]; then
        findings=0
    else
        status=1
        artifact=$(grep -o "Test unit written to [^ ]*" "$log" | tail -1 | awk '{print $5}')
        what=$(grep -m1 -E "panicked at|ERROR: libFuzzer|deadly signal" "$log" | cut -c1-160)
        findings="1: ${artifact:-see $log} ($what)"
    fi
    printf '%-18s %8s %12s %8s %12s %8s %s\n' "$t" "${secs:-?}" "${runs:-?}" "${speed:-?}" "${corpus:-?}" "${rss:-?}" "$findings"
done
exit $status
