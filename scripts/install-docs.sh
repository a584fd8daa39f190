#!/usr/bin/env bash
# Install dfsbench's man pages and bash completion for the binary in ROOT/bin (install.sh runs
# this after `cargo install --root ROOT`): the pages into ROOT/share/man/man1, where man finds
# them from PATH, the completion where bash-completion looks (system-wide as root, else the
# user's XDG data directory). Idempotent; a directory that cannot be made is a warning.
set -euo pipefail
root=${1:?usage: install-docs.sh ROOT}
bin="$root/bin/dfsbench"

# Put generated files into DIR with COMMAND; a failure is a warning, not the install's failure.
place() { # DIR WHAT COMMAND...
    local dir=$1 what=$2
    shift 2
    if ! mkdir -p "$dir" 2>/dev/null || ! "$@"; then
        echo "install-docs.sh: warning: could not install the $what into $dir" >&2
        return 0
    fi
    echo "installed the $what in $dir"
}
completion() { # written beside, then renamed: a failed run leaves the old one whole
    "$bin" completions bash >"$completion_dir/dfsbench.tmp" &&
        mv "$completion_dir/dfsbench.tmp" "$completion_dir/dfsbench"
}

man_dir="$root/share/man/man1"
if [ "$(id -u)" -eq 0 ] && [ "$root" = /usr/local ]; then
    completion_dir=/usr/local/share/bash-completion/completions
else
    completion_dir="${BASH_COMPLETION_USER_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/bash-completion}/completions"
fi
place "$man_dir" "man pages" "$bin" man --dir "$man_dir"
place "$completion_dir" "bash completion" completion
