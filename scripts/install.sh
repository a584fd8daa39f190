#!/usr/bin/env bash
# Install dfsbench on Debian: build dependencies from apt, the binary with cargo into
# ~/.cargo/bin. Idempotent: a second run only rebuilds what changed. The binary runs under
# mpirun/srun across machines (the `mpi` feature: Open MPI and libclang for its bindings);
# DFSBENCH_NO_MPI=1 builds without it (then only --procs N on one machine).
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v cc >/dev/null || need_apt+=(build-essential)
command -v pkg-config >/dev/null || need_apt+=(pkg-config)
features=()
if [ "${DFSBENCH_NO_MPI:-0}" != 1 ]; then
    features=(--features mpi)
    command -v mpirun >/dev/null || need_apt+=(openmpi-bin)
    pkg-config --exists ompi 2>/dev/null || need_apt+=(libopenmpi-dev)
    compgen -G "/usr/lib/llvm-*/lib/libclang*.so*" >/dev/null || need_apt+=(libclang-dev)
fi
if ((${#need_apt[@]})); then
    if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi
if ! command -v cargo >/dev/null; then
    echo "install.sh: cargo is missing: install Rust 1.87 or newer (rustup or Debian's rustc/cargo) and run again" >&2
    exit 1
fi
# As root the binary goes to /usr/local/bin, on every PATH; otherwise to ~/.cargo/bin.
if [ "$(id -u)" -eq 0 ]; then root=/usr/local; else root="$HOME/.cargo"; fi
cargo install --locked --quiet --root "$root" --path crates/dfsbench-cli "${features[@]}"
echo "installed $("$root/bin/dfsbench" --version) in $root/bin"
