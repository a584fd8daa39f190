# shellcheck shell=bash
# Shared by the bench/ scripts, sourced after each sets REPO and NAME (its name in messages).

# The comparisons' many runs stay out of the user's history of runs (`dfsbench history`).
export DFSBENCH_HISTORY=off

log() { printf '%s\n' "$*" >&2; }
die() { log "$NAME: $*"; exit 1; }
status() { if [ "$1" -gt 128 ]; then echo "killed by signal $(kill -l "$(($1 - 128))")"; else echo "exit status $1"; fi; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        die "need root to run: $*"
    fi
}

# Install the Debian packages named (none: nothing to do).
apt_install() { # PKG...
    [ $# -gt 0 ] || return 0
    command -v apt-get >/dev/null || die "please install: $*"
    log "installing $* with apt-get"
    as_root apt-get update -qq >&2
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2
}

# Install the packages of the commands that are missing: `fio` installs fio, `cc:gcc,libc6-dev`
# installs gcc and libc6-dev when cc is missing.
need_commands() { # COMMAND[:PACKAGE,...]...
    local spec more pkgs=()
    for spec in "$@"; do
        command -v "${spec%%:*}" >/dev/null && continue
        if [[ $spec == *:* ]]; then
            IFS=, read -ra more <<<"${spec#*:}"
            pkgs+=("${more[@]}")
        else
            pkgs+=("$spec")
        fi
    done
    apt_install ${pkgs[@]+"${pkgs[@]}"}
}

# Set BIN to the dfsbench to measure: $DFSBENCH, or a release build of this checkout with the
# cargo arguments given (e.g. --features mpi).
find_dfsbench() { # [CARGO_ARG...]
    if [ -n "${DFSBENCH:-}" ]; then
        BIN=$DFSBENCH
    else
        export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
        log "building dfsbench (release${*:+, $*}) in $CARGO_TARGET_DIR"
        cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" -p dfsbench-cli "$@" >&2
        BIN=$CARGO_TARGET_DIR/release/dfsbench
    fi
    [ -x "$BIN" ] || die "no dfsbench binary at $BIN"
}
