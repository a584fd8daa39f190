#!/usr/bin/env bash
# The long run of dfsbench's generated-input tests (crates/dfsbench-cli/src/fuzz.rs): the
# command line, target URIs, workload files and result files, each with PROPTEST_CASES inputs
# (the normal `cargo test` runs 256). Every input must end in a value or in a one-line error;
# a panic or an error of several lines fails the property and prints the smallest input that
# does it. Prints per property the inputs tried and how many were refused.
#
# Settings (environment):
#   PROPTEST_CASES=100000   inputs per property
#   PROPERTIES="command_lines target_uris workload_files fio_job_files result_files"   properties to run
#   CARGO_TARGET_DIR        as for any cargo build
set -euo pipefail
cd "$(dirname "$0")/.."
export PROPTEST_CASES="${PROPTEST_CASES:-100000}"
PROPERTIES="${PROPERTIES:-command_lines target_uris workload_files fio_job_files result_files}"
status=0
for p in $PROPERTIES; do
    start=$(date +%s)
    # One property at a time: its counts come out together and a failure names it.
    log=$(mktemp)
    if ! cargo test -q -p dfsbench-cli --features dfsbench-cli/mpi --bins "fuzz::$p" -- \
        --exact --nocapture --test-threads 1 >"$log" 2>&1; then
        status=1
        echo "fuzz $p: FAILED"
    fi
    grep -E "^fuzz |minimal failing|Test failed|panicked|^error" "$log" || tail -20 "$log"
    rm -f "$log"
    echo "fuzz $p: $(($(date +%s) - start)) s"
done
exit $status
