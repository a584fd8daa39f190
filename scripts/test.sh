#!/usr/bin/env bash
# The test suite: what CI runs (.ci/run) and what a newcomer runs. Installs what the tests need
# on a fresh Debian machine (idempotently: a second run installs nothing), then runs every test
# of the workspace, including the backends against real servers started on 127.0.0.1. Every
# test runs even when some fail; the failures are listed together at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/deps.sh
. scripts/deps.sh

if ! command -v cargo >/dev/null; then
    echo "test.sh: cargo is missing: install Rust 1.87 or newer and run again" >&2
    exit 1
fi
# The build (with the mpi feature, for the mpirun tests in tests/cluster.rs) and Chromium for
# the report tests.
debs_ensure test.sh "${BUILD_DEBS[@]}" "${MPI_DEBS[@]}" "${TEST_DEBS[@]}"
# mpirun as root (CI runs as root in a VM).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The lab servers (MinIO, SeaweedFS, Swift, HDFS, WebDAV) for tests/servers.rs, installed by the
# lab crate and cached under .cache/. With DFSBENCH_REQUIRE_LAB=1 a missing server fails the
# tests instead of skipping them.
cargo run --locked --quiet --features dfsbench-cli/mpi -p dfsbench-cli -- lab install all
export DFSBENCH_REQUIRE_LAB=1

log=$(mktemp "${TMPDIR:-/tmp}/dfsbench-test.XXXXXX")
trap 'rm -f "$log"' EXIT
set +e
cargo test --workspace --locked --features dfsbench-cli/mpi --no-fail-fast 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
set -e

# One summary of the whole run, so a failure early in the log is not lost in it.
awk '
    /^     Running / { target = ($2 == "unittests") ? $NF : $2 }
    /^test .* \.\.\. FAILED$/ { failed[++n] = target ": " $2 }
    /^test result: / { passed += $4; failures += $6; ignored += $8 }
    /^error: could not compile/ { broken[++b] = $0 }
    END {
        print ""
        print "==== test summary ===="
        for (i = 1; i <= n; i++) print "FAILED " failed[i]
        for (i = 1; i <= b; i++) print broken[i]
        printf "tests: %d passed, %d failed, %d skipped\n", passed, failures, ignored
    }' "$log"
exit "$status"
