#!/usr/bin/env bash
# Install dfsbench on Debian: build dependencies from apt, the binary with cargo into
# /usr/local/bin (root) or ~/.cargo/bin, its man pages beside it (share/man/man1, where man
# finds them from PATH) and its bash completion where bash-completion looks. Idempotent: a second run installs no package and only
# rebuilds what changed. The binary runs under mpirun/srun across machines (the `mpi` feature:
# Open MPI and libclang for its bindings); DFSBENCH_NO_MPI=1 builds without it (then only
# --procs N on one machine).
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

# Put generated files into DIR; a directory that cannot be made is a warning, not a failure
# (the binary is installed either way).
place() { # DIR WHAT COMMAND...
    local dir=$1 what=$2
    shift 2
    if ! mkdir -p "$dir" 2>/dev/null || ! "$@"; then
        echo "install.sh: warning: could not install the $what into $dir" >&2
        return 0
    fi
    echo "installed the $what in $dir"
}
man_dir="$root/share/man/man1"
if [ "$(id -u)" -eq 0 ]; then
    completion_dir=/usr/local/share/bash-completion/completions
else
    completion_dir="${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions"
fi
completion() { # written beside, then renamed: a failed run leaves the old one whole
    "$root/bin/dfsbench" completions bash >"$completion_dir/dfsbench.tmp" &&
        mv "$completion_dir/dfsbench.tmp" "$completion_dir/dfsbench"
}
place "$man_dir" "man pages" "$root/bin/dfsbench" man --dir "$man_dir"
place "$completion_dir" "bash completion" completion
