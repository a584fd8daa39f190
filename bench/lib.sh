# Shared by the bench/ scripts, sourced after each sets REPO and NAME (its name in messages).

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

# Set BIN to the dfsbench to measure: $DFSBENCH, or a release build of this checkout.
find_dfsbench() {
    if [ -n "${DFSBENCH:-}" ]; then
        BIN=$DFSBENCH
    else
        export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
        log "building dfsbench (release) in $CARGO_TARGET_DIR"
        cargo build --release --quiet --manifest-path "$REPO/Cargo.toml" -p dfsbench-cli >&2
        BIN=$CARGO_TARGET_DIR/release/dfsbench
    fi
    [ -x "$BIN" ] || die "no dfsbench binary at $BIN"
}
