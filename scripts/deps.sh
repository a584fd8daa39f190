# shellcheck shell=bash disable=SC2034
# (SC2034: the arrays are read by the scripts that source this file)
# The Debian packages dfsbench's build and tests need, declared once: scripts/install.sh and
# scripts/test.sh install them, scripts/fresh-check.sh removes them to play a fresh machine.
# Sourced, never run.

# The compiler and pkg-config for the build.
BUILD_DEBS=(build-essential pkg-config)
# The `mpi` feature: Open MPI, and libclang for the bindings bindgen generates at build time.
MPI_DEBS=(openmpi-bin libopenmpi-dev libclang-dev)
# The report tests open the HTML report in headless Chromium; the fault tests stall a bindfs
# FUSE mount by stopping its daemon; the fio job-file tests run fio's examples and compare
# with fio itself; the CLI tests render the man page with `man -l`.
TEST_DEBS=(chromium fonts-dejavu-core bindfs fio fio-examples man-db)

# Print the packages of "$@" that are not installed. Asks dpkg about the package itself: a glob
# over library files is satisfied by lookalikes (libclang-cpp.so.14 is in the base image, while
# bindgen needs libclang.so from libclang-dev).
debs_missing() { # NAME...
    local name
    for name in "$@"; do
        dpkg-query -W -f='${Status}\n' "$name" 2>/dev/null | grep -qx 'install ok installed' || echo "$name"
    done
}

# Install the packages of "$@" that are missing (none missing: nothing runs, not even an update).
# WHO names the calling script in messages.
debs_ensure() { # WHO NAME...
    local who=$1 missing sudo=
    shift
    if ! command -v dpkg-query >/dev/null; then
        echo "$who: not a Debian system: install the equivalents of $* and run again" >&2
        return 1
    fi
    mapfile -t missing < <(debs_missing "$@")
    ((${#missing[@]})) || return 0
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null || { echo "$who: run as root or install: ${missing[*]}" >&2; return 1; }
        sudo=sudo
    fi
    echo "$who: apt-get install ${missing[*]}" >&2
    $sudo apt-get -o DPkg::Lock::Timeout=300 update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y -qq \
        --no-install-recommends "${missing[@]}" >/dev/null
}
