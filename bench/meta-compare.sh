#!/usr/bin/env bash
# Compare dfsbench's meta workload against a bare C loop of the same syscalls
# (bench/syscall_loop.c), on tmpfs and on a disk file system, in one invocation.
#
# Both run the phases create, stat, open, rename, delete on FILES files per worker in a
# directory per worker, with WORKERS workers; runs are interleaved in pairs whose order
# alternates (bare dfsbench, dfsbench bare, ...) so that drift of this machine and what one run
# leaves behind for the next affect both alike. Per phase the table prints the median
# ops/s of each and the median of the per-pair ratios dfsbench / bare; absolute numbers on a
# shared VM are noisy, the ratio is what matters. The cpu column compares CPU time per
# operation (bare / dfsbench), which load from other processes disturbs much less.
#
# Settings (environment):
#   FILES=100000         files per worker on tmpfs
#   DISK_FILES=10000     files per worker on the disk (creates on a disk are much slower)
#   WORKERS=2            workers (dfsbench --workers; threads of the bare loop)
#   MODE=threads         threads or procs: how the bare loop runs its workers
#   REPEATS=5            runs of each tool per file system
#   TARGET_RATIO=0.95    the ratio dfsbench must reach in every phase
#   TMPFS_DIR=           a directory on tmpfs (default: /dev/shm, or a tmpfs this script
#                        mounts if /dev/shm is not tmpfs)
#   DISK_DIR=/var/tmp    a directory on the disk file system (ext4 here)
#   FILESYSTEMS="tmpfs disk"   which of the two to run
#   CARGO_TARGET_DIR     where cargo builds dfsbench (default: <repo>/target)
#   DFSBENCH=            use this dfsbench binary instead of building one
set -euo pipefail

FILES=${FILES:-100000}
DISK_FILES=${DISK_FILES:-10000}
WORKERS=${WORKERS:-2}
MODE=${MODE:-threads}
REPEATS=${REPEATS:-5}
TARGET_RATIO=${TARGET_RATIO:-0.95}
TMPFS_DIR=${TMPFS_DIR:-}
DISK_DIR=${DISK_DIR:-/var/tmp}
FILESYSTEMS=${FILESYSTEMS:-"tmpfs disk"}
PHASES="create stat open rename delete"

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

NAME=meta-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

# --- tools ----------------------------------------------------------------------------------
need_commands cc:gcc,libc6-dev jq

find_dfsbench

# --- scratch space: everything this script creates lives under $WORK and the run dirs -------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/meta-compare.XXXXXX")
MOUNTED=""
RUN_DIRS=()
cleanup() {
    local rc=$?
    rm -rf "${RUN_DIRS[@]}" "$WORK"
    if [ -n "$MOUNTED" ]; then
        as_root umount "$MOUNTED" || true
        rmdir "$MOUNTED" || true
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

LOOP=$WORK/syscall_loop
CC_CMD=(cc -O2 -pthread -o "$LOOP" "$REPO/bench/syscall_loop.c")
"${CC_CMD[@]}"

if [ -z "$TMPFS_DIR" ]; then
    if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
        TMPFS_DIR=/dev/shm
    else
        MOUNTED=$(mktemp -d "${TMPDIR:-/tmp}/meta-compare-tmpfs.XXXXXX")
        as_root mount -t tmpfs -o size=2g tmpfs "$MOUNTED"
        TMPFS_DIR=$MOUNTED
    fi
fi

# --- machine --------------------------------------------------------------------------------
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "machine:  $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM"
echo "kernel:   $(uname -srm)"
echo "cc:       $(cc --version | head -1)"
echo "dfsbench: $("$BIN" --version 2>/dev/null || echo "$BIN")"
echo "settings: FILES=$FILES (tmpfs) DISK_FILES=$DISK_FILES (disk) WORKERS=$WORKERS MODE=$MODE REPEATS=$REPEATS"
echo "compiled: $(printf '%q ' "${CC_CMD[@]}")"
echo

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

rows=()
all_ok=1
for fs in $FILESYSTEMS; do
    case $fs in
        tmpfs) base=$TMPFS_DIR n=$FILES ;;
        disk) base=$DISK_DIR n=$DISK_FILES ;;
        *) die "unknown file system '$fs' (known: tmpfs disk)" ;;
    esac
    [ -d "$base" ] || die "$base does not exist"
    dir=$(mktemp -d "$base/meta-compare.XXXXXX")
    RUN_DIRS+=("$dir")
    # findmnt names ext4 (stat -f says ext2/ext3); stacked mounts print a line each.
    fstype=$(findmnt -n -o FSTYPE -T "$dir" 2>/dev/null | tail -n 1 || true)
    [ -n "$fstype" ] || fstype=$(stat -f -c %T "$dir")
    if [ "$fs" = tmpfs ] && [ "$fstype" != tmpfs ]; then die "$base is not on tmpfs"; fi
    if [ "$fs" = disk ] && [ "$fstype" = tmpfs ]; then die "DISK_DIR $base is on tmpfs: point it at a disk"; fi
    bare_cmd=("$LOOP" "$dir/bare" "$n" "$WORKERS" "$MODE")
    dfs_cmd=("$BIN" run --target "$dir/dfs" --workload meta --phases "create,stat,open,rename,delete"
        --files "$n" --workers "$WORKERS" --quiet --out "$WORK/dfs.json")
    echo "== $fs ($fstype, $dir): $n files per worker, $WORKERS workers"
    echo "   bare:     $(printf '%q ' "${bare_cmd[@]}")"
    echo "   dfsbench: $(printf '%q ' "${dfs_cmd[@]}")"
    : >"$WORK/pairs"
    for r in $(seq 1 "$REPEATS"); do
        # Alternate which tool goes first (bare dfsbench, dfsbench bare, ...): work a run leaves
        # behind (journal commits, discards and inode freeing after its deletes) then burdens
        # both tools alike. syncfs before each run flushes what it can of it.
        if [ $((r % 2)) = 1 ]; then order="bare dfs"; else order="dfs bare"; fi
        for tool in $order; do
            sync -f "$dir"
            if [ "$tool" = bare ]; then
                mkdir "$dir/bare"
                "${bare_cmd[@]}" >"$WORK/bare.out" || die "the bare loop failed ($(status $?))"
                rmdir "$dir/bare"
            else
                mkdir "$dir/dfs"
                "${dfs_cmd[@]}" >"$WORK/dfs.log" 2>&1 || {
                    rc=$?
                    cat "$WORK/dfs.log" >&2
                    die "dfsbench failed ($(status "$rc"))"
                }
                rmdir "$dir/dfs"
            fi
        done
        errors=$(jq '[.phases[].errors.total] | add' "$WORK/dfs.json")
        [ "$errors" = 0 ] || die "dfsbench reported $errors errors"
        line="   run $r ($order):"
        for p in $PHASES; do
            read -r b_ops b_cpu < <(awk -v p="$p" '$1 == p { print $5, $6 / $2 }' "$WORK/bare.out")
            read -r d_ops d_cpu < <(jq -r --arg p "$p" '.phases[] | select(.name == $p and (.prepare | not))
                | "\(.ops_per_sec) \((.cpu.user_s + .cpu.sys_s) / .ops)"' "$WORK/dfs.json")
            if [ -z "$b_ops" ] || [ -z "$d_ops" ]; then die "no $p figures"; fi
            echo "$p $b_ops $d_ops $b_cpu $d_cpu" >>"$WORK/pairs"
            line+=$(awk -v p="$p" -v a="$d_ops" -v b="$b_ops" 'BEGIN { printf " %s %.2fx", p, a / b }')
        done
        echo "$line"
    done
    for p in $PHASES; do
        b=$(awk -v p="$p" '$1 == p { print $2 }' "$WORK/pairs" | median)
        d=$(awk -v p="$p" '$1 == p { print $3 }' "$WORK/pairs" | median)
        ratio=$(awk -v p="$p" '$1 == p { print $3 / $2 }' "$WORK/pairs" | median)
        cpu_ratio=$(awk -v p="$p" '$1 == p && $5 > 0 { print $4 / $5 }' "$WORK/pairs" | median)
        ok=$(awk -v r="$ratio" -v t="$TARGET_RATIO" 'BEGIN { print (r >= t) ? 1 : 0 }')
        [ "$ok" = 1 ] || all_ok=0
        rows+=("$(awk -v fs="$fs" -v p="$p" -v b="$b" -v d="$d" -v r="$ratio" -v c="$cpu_ratio" -v ok="$ok" \
            'BEGIN { printf "%-6s %-7s %12.0f %12.0f %7.3f %7.3f%s", fs, p, b, d, r, c, ok ? "" : "  <" }')")
    done
    rm -rf "$dir"
    echo
done

echo "median of $REPEATS interleaved runs (ops/s; ratio = dfsbench / bare, cpu = CPU per op bare / dfsbench):"
printf '%-6s %-7s %12s %12s %7s %7s\n' fs phase bare dfsbench ratio cpu
printf '%s\n' "${rows[@]}"
echo
if [ "$all_ok" = 1 ]; then
    echo "RESULT: PASS: dfsbench reached >= ${TARGET_RATIO}x the bare loop in every phase"
else
    echo "RESULT: FAIL: dfsbench stayed below ${TARGET_RATIO}x the bare loop in a phase marked '<'"
fi
