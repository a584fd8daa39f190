#!/usr/bin/env bash
# Do dfsbench's reads reach the disk? Compare its first read phase after its layout (write)
# phase with fio's randread of the same job with invalidate=1 (fio's default), on a
# disk-backed file system (a directory on the root disk, ext4 here), in one invocation.
#
# Both tools lay the file out, drop its cached pages (fio: invalidate=1; dfsbench: its default
# --invalidate 1) and then read 4 KiB blocks at random for the same time at the same queue
# depth. Reads that came from the page cache would run many times faster than fio's. The
# script prints both figures and their ratio, then dfsbench with --invalidate 0 for reference
# (what the page cache gives), and fails when dfsbench and fio differ by more than MAX_RATIO.
#
# Settings (environment):
#   DURATION=10       seconds of reading (fio runtime, dfsbench --duration)
#   SIZE=1g           file size
#   IODEPTH=32        queue depth
#   MAX_RATIO=2       the largest factor by which the two may differ
#   DATA_DIR=<repo>   a directory on the disk-backed file system to work in
#   CARGO_TARGET_DIR  where cargo builds dfsbench (default: <repo>/target)
#   DFSBENCH=         use this dfsbench binary instead of building one
set -euo pipefail

DURATION=${DURATION:-10}
SIZE=${SIZE:-1g}
IODEPTH=${IODEPTH:-32}
MAX_RATIO=${MAX_RATIO:-2}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA_DIR=${DATA_DIR:-$REPO}

NAME=cache-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

need_commands fio jq

find_dfsbench

fs=$(stat -f -c %T "$DATA_DIR")
case $fs in
    tmpfs | ramfs) die "$DATA_DIR is on $fs, which keeps every page in memory: set DATA_DIR to a directory on a disk" ;;
esac

WORK=$(mktemp -d "$DATA_DIR/cache-compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
trap 'exit 130' INT TERM

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "machine:  $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM"
echo "kernel:   $(uname -srm)"
echo "fio:      $(fio --version)"
echo "dfsbench: $("$BIN" --version 2>/dev/null || echo "$BIN")"
echo "target:   $WORK ($fs on $(df --output=source "$WORK" | tail -1))"
echo "job:      randread bs=4k iodepth=$IODEPTH size=$SIZE ${DURATION}s, 1 worker, io_uring"
echo

show() { printf '%q ' "$@"; }

FIO=(fio --name=bench --directory="$WORK/fio" --size="$SIZE" --rw=randread --bs=4k --iodepth="$IODEPTH"
    --numjobs=1 --ioengine=io_uring --invalidate=1 --time_based --runtime="$DURATION"
    --output-format=json --output="$WORK/fio.json")
mkdir -p "$WORK/fio"
echo "fio:      $(show "${FIO[@]}")"
# From its own directory: a non-file named as the job in the working directory (the
# repository's bench/) would become fio's file.
(cd "$WORK/fio" && exec "${FIO[@]}") >"$WORK/fio.log" 2>&1 || { cat "$WORK/fio.log" >&2; die "fio failed"; }
rm -rf "$WORK/fio"
fio_iops=$(jq '[.jobs[].read.iops] | add' "$WORK/fio.json")

# dfsbench: the first measured read phase of the job; its layout is the write phase before it.
dfs() { # out [extra flags]
    local out=$1
    shift
    local cmd=("$BIN" run --target "$WORK/dfs" --workload io --rw randread --bs 4k --size "$SIZE"
        --iodepth "$IODEPTH" --workers 1 --ioengine io_uring --duration "${DURATION}s" --quiet --out "$out" "$@")
    mkdir -p "$WORK/dfs"
    echo "dfsbench: $(show "${cmd[@]}")" >&2
    "${cmd[@]}" >"$WORK/dfs.log" 2>&1 || { cat "$WORK/dfs.log" >&2; die "dfsbench failed"; }
    rm -rf "$WORK/dfs"
    jq -r '[.phases[] | select(.prepare | not)][0] | "\(.ops_per_sec) \(.cache.policy) \(.cache_suspect // [] | length)"' "$out"
}
read -r dfs_iops dfs_policy dfs_flags < <(dfs "$WORK/dfs.json")
read -r warm_iops warm_policy warm_flags < <(dfs "$WORK/dfs-warm.json" --invalidate 0)

ratio=$(awk -v a="$dfs_iops" -v b="$fio_iops" 'BEGIN { printf "%.3f", a / b }')
iops() { awk -v v="$1" 'BEGIN { printf "%.0f IOPS", v }'; }
echo
printf '%-44s %14s\n' "fio randread, invalidate=1" "$(iops "$fio_iops")"
printf '%-44s %14s  (page cache: %s, flags: %s)\n' "dfsbench first read after its layout" "$(iops "$dfs_iops")" \
    "$dfs_policy" "$dfs_flags"
printf '%-44s %14s  (page cache: %s, flags: %s)\n' "dfsbench with --invalidate 0 (reference)" \
    "$(iops "$warm_iops")" "$warm_policy" "$warm_flags"
echo "ratio dfsbench / fio: $ratio"
echo
ok=$(awk -v r="$ratio" -v m="$MAX_RATIO" 'BEGIN { print (r <= m && r >= 1 / m) ? 1 : 0 }')
if [ "$ok" = 1 ]; then
    echo "RESULT: PASS: dfsbench's first read is within ${MAX_RATIO}x of fio invalidate=1"
else
    echo "RESULT: FAIL: dfsbench's first read differs from fio invalidate=1 by more than ${MAX_RATIO}x"
    exit 1
fi
