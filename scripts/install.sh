#!/usr/bin/env bash
# Install dfsbench on Debian: build dependencies from apt, the binary with cargo into
# /usr/local/bin (root) or ~/.cargo/bin, and (scripts/install-docs.sh) its man pages and bash
# completion. Idempotent: a second run installs no package and only rebuilds what changed.
# The binary runs under mpirun/srun across machines (the `mpi` feature: Open MPI and libclang
# for its bindings); DFSBENCH_NO_MPI=1 builds without it (then only --procs N on one machine).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/deps.sh
. scripts/deps.sh

debs=("${BUILD_DEBS[@]}")
features=()
if [ "${DFSBENCH_NO_MPI:-0}" != 1 ]; then
    features=(--features mpi)
    debs+=("${MPI_DEBS[@]}")
fi
debs_ensure install.sh "${debs[@]}"
if ! command -v cargo >/dev/null; then
    echo "install.sh: cargo is missing: install Rust 1.87 or newer (rustup or Debian's rustc/cargo) and run again" >&2
    exit 1
fi
# As root the binary goes to /usr/local/bin, on every PATH; otherwise to ~/.cargo/bin.
if [ "$(id -u)" -eq 0 ]; then root=/usr/local; else root="$HOME/.cargo"; fi
cargo install --locked --quiet --root "$root" --path crates/dfsbench-cli "${features[@]}"
echo "installed $("$root/bin/dfsbench" --version) in $root/bin"

scripts/install-docs.sh "$root"
