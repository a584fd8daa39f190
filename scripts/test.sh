#!/usr/bin/env bash
# The test suite: what CI runs (.ci/run) and what a newcomer runs. Installs what the tests need
# on a fresh Debian machine (idempotently: a second run installs nothing), then runs every test
# of the workspace, including the backends against real servers started on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "test.sh: cargo is missing: install Rust 1.87 or newer and run again" >&2
    exit 1
fi

# Chromium, for the report tests (tests/report.rs open the HTML report in headless Chromium).
if ! command -v chromium >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium fonts-dejavu-core >/dev/null
    else
        echo "test.sh: chromium is missing (apt-get install chromium): the report tests skip the browser checks" >&2
    fi
fi

# Open MPI and libclang (bindgen) for the mpi feature and the mpirun tests (tests/cluster.rs).
if ! command -v mpirun >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/libclang*.so*" >/dev/null \
    || ! pkg-config --exists ompi 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
            openmpi-bin libopenmpi-dev libclang-dev pkg-config >/dev/null
    else
        echo "test.sh: install openmpi-bin libopenmpi-dev libclang-dev (apt-get) for the mpi tests" >&2
        exit 1
    fi
fi
# mpirun as root (CI runs as root in a VM).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# The lab servers (MinIO, SeaweedFS, Swift, HDFS, WebDAV) for tests/servers.rs, cached under
# .cache/. With DFSBENCH_REQUIRE_LAB=1 a missing server fails the tests instead of skipping them.
lab/install.sh all
export DFSBENCH_REQUIRE_LAB=1

cargo test --workspace --locked --features dfsbench-cli/mpi
