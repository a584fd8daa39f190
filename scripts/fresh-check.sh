#!/usr/bin/env bash
# shellcheck disable=SC2317  # cleanup and inside run through trap and unshare
# Run the README's two commands as a newcomer would on a fresh Debian machine, without needing
# one: in a throwaway copy of this machine's root (an overlay of / on a scratch disk image,
# in private mount and PID namespaces, entered with chroot), from which the Debian packages and
# files that dfsbench's own scripts install are removed first, in a fresh clone of this
# repository's HEAD with ../shared beside it, as CI has it.
#
#   scripts/fresh-check.sh [--install-only] [--keep]
#
#   --install-only   run only the first command (install + a real benchmark), not the tests
#   --keep           keep the scratch image (its path is printed) to look into afterwards
#
# Needs root, overlayfs, loop devices and unshare (util-linux). Nothing on the real root is
# changed: every write lands in the scratch image, deleted at the end. Prints how long each
# command took and exits non-zero when either failed. The network is the machine's (package
# registries); every process started inside is killed with the PID namespace at the end.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/deps.sh
. "$repo/scripts/deps.sh"

install_only=0 keep=0
for arg in "$@"; do
    case "$arg" in
        --install-only) install_only=1 ;;
        --keep) keep=1 ;;
        -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "fresh-check.sh: unknown option '$arg' (--install-only, --keep)" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" -eq 0 ] || { echo "fresh-check.sh: run as root (it mounts an overlay of /)" >&2; exit 2; }
for tool in unshare chroot mkfs.ext4 git; do
    command -v "$tool" >/dev/null || { echo "fresh-check.sh: $tool is missing" >&2; exit 2; }
done

# What dfsbench's scripts install, to be removed from the copy: their Debian packages (the lab's
# come from `dfsbench lab systems --packages`, which lists every system's), the installed binary
# with its man pages and bash completion, and the download caches of cargo (a fresh machine has
# none).
dfsbench_bin=${CARGO_TARGET_DIR:-$repo/target}/debug/dfsbench
(cd "$repo" && cargo build --locked --quiet -p dfsbench-cli) || { echo "fresh-check.sh: cannot build dfsbench" >&2; exit 2; }
mapfile -t remove_debs < <(printf '%s\n' "${BUILD_DEBS[@]}" "${MPI_DEBS[@]}" "${TEST_DEBS[@]}" \
    && "$dfsbench_bin" lab systems --packages && echo fio)
remove_files=(/usr/local/bin/dfsbench /root/.cargo/bin/dfsbench /root/.cargo/registry /root/.cargo/git
    /usr/local/share/man/man1/dfsbench*.1 /usr/local/share/bash-completion/completions/dfsbench)

scratch=$(mktemp -d /var/tmp/dfsbench-fresh.XXXXXX)
cleanup() {
    if [ "$keep" = 1 ]; then
        echo "fresh-check.sh: kept $scratch/disk.img (mount -o loop it to look inside)" >&2
    else
        rm -rf "$scratch"
    fi
}
trap cleanup EXIT
# A sparse image: overlayfs refuses an upper layer on the file system it overlays.
truncate -s 120G "$scratch/disk.img"
mkfs.ext4 -q -F "$scratch/disk.img"
mkdir -p "$scratch/disk" "$scratch/root"

# Inside the namespaces: mount the copy, strip it, clone, run the README's commands.
inside() {
    set -euo pipefail
    mount -o loop "$scratch/disk.img" "$scratch/disk"
    mkdir -p "$scratch/disk/upper" "$scratch/disk/work"
    mount -t overlay overlay -o "lowerdir=/,upperdir=$scratch/disk/upper,workdir=$scratch/disk/work" "$scratch/root"
    local r=$scratch/root
    mount -t proc proc "$r/proc"
    mount --rbind /sys "$r/sys"
    mount --rbind /dev "$r/dev"
    mount -t tmpfs -o mode=1777 tmpfs "$r/dev/shm"
    mount -t tmpfs tmpfs "$r/run"
    mkdir -p "$r/run/netns"

    echo "== removing what dfsbench's scripts install" >&2
    chroot "$r" /bin/bash -s -- "${remove_debs[@]}" <<'STRIP'
set -euo pipefail
remove=()
for name in "$@"; do
    dpkg-query -W -f='${Status}\n' "$name" 2>/dev/null | grep -qx 'install ok installed' || continue
    # Purge only what takes nothing else with it: a package the base image depends on stays.
    others=$(apt-get -s purge "$name" | awk '/^Purg /{print $2}' | grep -vxF -f <(printf '%s\n' "$@") || true)
    if [ -n "$others" ]; then
        echo "kept $name: removing it would remove $(echo "$others" | head -3 | tr '\n' ' ')" >&2
    else
        remove+=("$name")
    fi
done
if ((${#remove[@]})); then
    echo "purging ${remove[*]}" >&2
    # dpkg says why a maintainer script failed on stdout: show its end when the purge fails.
    DEBIAN_FRONTEND=noninteractive apt-get purge -y "${remove[@]}" >/tmp/purge.log 2>&1 ||
        { tail -n 30 /tmp/purge.log >&2; exit 1; }
    # What the purge left unneeded goes too; a maintainer script that fails here (seen with the
    # Ceph lab's dependencies in the chroot) leaves a library behind, not a dfsbench install step.
    DEBIAN_FRONTEND=noninteractive apt-get autoremove --purge -y >/tmp/autoremove.log 2>&1 ||
        { echo "warning: autoremove failed; what dpkg said:" >&2; tail -n 15 /tmp/autoremove.log >&2; }
fi
STRIP
    for f in "${remove_files[@]}"; do rm -rf "${r:?}$f"; done

    echo "== fresh clone of $(git -C "$repo" rev-parse --short HEAD)" >&2
    mkdir -p "$r/fresh"
    git clone -q --no-local "$repo" "$r/fresh/dfsbench"
    [ -d "$repo/../shared" ] && cp -a "$repo/../shared" "$r/fresh/shared"

    # The README's commands, from a login shell with a clean environment, as a newcomer runs them.
    local env=(env -i HOME=/root TERM=dumb LANG=C.UTF-8 PATH=/root/.cargo/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
    local status=0 t0 t1 t2
    t0=$(date +%s)
    echo "== ./scripts/install.sh && dfsbench run" >&2
    chroot "$r" "${env[@]}" /bin/bash -lc 'cd /fresh/dfsbench && ./scripts/install.sh && dfsbench run' || status=1
    t1=$(date +%s)
    echo "fresh-check: install + first run: $((t1 - t0)) s, $([ "$status" = 0 ] && echo ok || echo FAILED)" >&2
    if [ "$install_only" = 0 ]; then
        echo "== ./scripts/test.sh" >&2
        chroot "$r" "${env[@]}" CI=true /bin/bash -lc 'cd /fresh/dfsbench && ./scripts/test.sh </dev/null' || status=$((status | 2))
        t2=$(date +%s)
        echo "fresh-check: tests: $((t2 - t1)) s, $([ $((status & 2)) = 0 ] && echo ok || echo FAILED)" >&2
    fi
    return "$status"
}

export scratch repo install_only
export -f inside
status=0
# A PID namespace: when it ends, the kernel kills whatever the commands left running.
unshare --mount --propagation private --pid --fork \
    /bin/bash -c "$(declare -p remove_debs remove_files); inside" || status=$?
case "$status" in
    0) echo "fresh-check: passed" >&2 ;;
    1) echo "fresh-check: FAILED: ./scripts/install.sh && dfsbench run" >&2 ;;
    2) echo "fresh-check: FAILED: ./scripts/test.sh" >&2 ;;
    *) echo "fresh-check: FAILED (status $status)" >&2 ;;
esac
exit "$status"
