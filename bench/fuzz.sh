#!/usr/bin/env bash
# The long run of dfsbench's generated-input tests (crates/dfsbench-cli/src/fuzz/): the
# command line (faults and probes), target URIs, workload files (${VAR} too), fio job files,
# result files, compare --threshold, lab arguments and output paths (a tree of decoy files,
# links, devices and a socket checked by kind and content after each write), each with
# PROPTEST_CASES inputs
# (the normal `cargo test` runs 256). Every input must end in a value or in a one-line error;
# a panic or an error of several lines fails the property and prints the smallest input that
# does it. Prints per property the inputs tried and how many were refused.
#
# Settings (environment):
#   PROPTEST_CASES=100000   inputs per property
#   PROPERTIES="command_lines target_uris workload_files fio_job_files result_files compare_thresholds
#               lab_arguments output_paths"   properties to run
#   CARGO_TARGET_DIR        as for any cargo build
#   TMPDIR                  the decoy tree's place (default /dev/shm)
set -euo pipefail
cd "$(dirname "$0")/.."
export PROPTEST_CASES="${PROPTEST_CASES:-100000}"
# output_paths syncs every file it writes: on a disk 100,000 of them take hours, in memory
# (tmpfs, where mknod and sockets work too) minutes.
if [ -z "${TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then
    export TMPDIR=/dev/shm
fi
PROPERTIES="${PROPERTIES:-command_lines target_uris workload_files fio_job_files result_files compare_thresholds lab_arguments output_paths}"
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
