#!/usr/bin/env bash
# Compare dfsbench's io workload against fio on tmpfs, in one invocation.
#
# Each case runs fio and dfsbench with the same engine (io_uring), block size, queue depth,
# workers, file size and run length, interleaved in pairs whose order alternates (fio dfsbench,
# dfsbench fio, ...) so that drift of this machine affects both alike. The table prints the
# median of each tool's runs and the median of the per-pair ratios dfsbench / fio (each pair
# ran back to back); absolute numbers on a shared VM are noisy, the ratio is what matters. The
# cpu column compares CPU time per operation (fio / dfsbench, all threads of the tool and its
# io_uring workers), which load from other processes disturbs much less.
#
# Settings (environment):
#   DURATION=5          seconds per run (fio runtime, dfsbench --duration)
#   REPEATS=4           runs of each tool per case
#   SIZE=512m           file size per worker (fio size per job)
#   RAND_IODEPTH=32     queue depth of the 4 KiB random read cases
#   SEQ_IODEPTH=1       queue depth of the 1 MiB sequential cases (fio's default iodepth)
#   CASES="randread-1 randread-2 seqwrite seqread"   cases to run, in order
#   TARGET_RATIO=0.95   the ratio dfsbench must reach in every case
#   TMPFS_DIR=          a directory on tmpfs to work in (default: /dev/shm, or a tmpfs this
#                       script mounts if /dev/shm is not tmpfs)
#   CARGO_TARGET_DIR    where cargo builds dfsbench (default: <repo>/target)
#   DFSBENCH=           use this dfsbench binary instead of building one
set -euo pipefail

DURATION=${DURATION:-5}
REPEATS=${REPEATS:-4}
SIZE=${SIZE:-512m}
RAND_IODEPTH=${RAND_IODEPTH:-32}
SEQ_IODEPTH=${SEQ_IODEPTH:-1}
CASES=${CASES:-"randread-1 randread-2 seqwrite seqread"}
TARGET_RATIO=${TARGET_RATIO:-0.95}
TMPFS_DIR=${TMPFS_DIR:-}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

NAME=fio-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

# --- tools ----------------------------------------------------------------------------------
need_commands fio jq

find_dfsbench

# --- scratch space: everything this script creates lives under $WORK and $DATA --------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fio-compare.XXXXXX")
MOUNTED=""
cleanup() {
    local rc=$?
    rm -rf "${DATA:-}" "$WORK"
    if [ -n "$MOUNTED" ]; then
        as_root umount "$MOUNTED" || true
        rmdir "$MOUNTED" || true
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ -z "$TMPFS_DIR" ]; then
    if [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ]; then
        TMPFS_DIR=/dev/shm
    else
        MOUNTED=$(mktemp -d "${TMPDIR:-/tmp}/fio-compare-tmpfs.XXXXXX")
        as_root mount -t tmpfs -o size=8g tmpfs "$MOUNTED"
        TMPFS_DIR=$MOUNTED
    fi
fi
[ "$(stat -f -c %T "$TMPFS_DIR")" = tmpfs ] || die "$TMPFS_DIR is not on tmpfs"
DATA=$(mktemp -d "$TMPFS_DIR/fio-compare.XXXXXX")

# --- machine --------------------------------------------------------------------------------
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "machine:  $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM"
echo "kernel:   $(uname -srm)"
echo "fio:      $(fio --version)"
echo "dfsbench: $("$BIN" --version 2>/dev/null || echo "$BIN")"
echo "target:   $DATA (tmpfs)"
echo "settings: DURATION=${DURATION}s REPEATS=$REPEATS SIZE=$SIZE RAND_IODEPTH=$RAND_IODEPTH SEQ_IODEPTH=$SEQ_IODEPTH"
echo

# --- one run of each tool -------------------------------------------------------------------
# case -> "rw bs iodepth workers metric"
case_params() {
    case $1 in
        randread-1) echo "randread 4k $RAND_IODEPTH 1 iops" ;;
        randread-2) echo "randread 4k $RAND_IODEPTH 2 iops" ;;
        seqwrite) echo "write 1m $SEQ_IODEPTH 1 bw" ;;
        seqread) echo "read 1m $SEQ_IODEPTH 1 bw" ;;
        *) die "unknown case '$1' (known: randread-1 randread-2 seqwrite seqread)" ;;
    esac
}

# Set CMD to the command line of one run of fio or dfsbench.
fio_cmd() { # rw bs depth workers out
    CMD=(fio --name=bench --directory="$DATA/fio" --size="$SIZE" --rw="$1" --bs="$2"
        --iodepth="$3" --numjobs="$4" --ioengine=io_uring --thread --fallocate=none
        --time_based --runtime="$DURATION" --group_reporting
        --output-format=json --output="$5")
}

dfs_cmd() { # rw bs depth workers out
    CMD=("$BIN" run --target "$DATA/dfs" --workload io --rw "$1" --bs "$2" --size "$SIZE"
        --iodepth "$3" --workers "$4" --ioengine io_uring --duration "${DURATION}s"
        --quiet --out "$5")
}

show() { printf '%q ' "${CMD[@]}"; }

# CPU seconds (user + system) used by this shell's finished children so far: every thread of
# a tool, io_uring's io-wq workers included. `times` must run in this shell, not in a $(...).
child_cpu() { # variable
    times >"$WORK/times"
    printf -v "$1" '%s' "$(sed -n 2p "$WORK/times" |
        awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } print s }')"
}

# Print the measured value, iops (operations/s) or bw (bytes/s), and the CPU time of the whole
# invocation per measured operation (layout of a read case included, which both tools do).
run_fio() { # rw bs depth workers metric out
    local dir="read" cpu0 cpu1 rc
    case $1 in *write) dir="write" ;; esac
    mkdir -p "$DATA/fio"
    fio_cmd "$1" "$2" "$3" "$4" "$6"
    child_cpu cpu0
    "${CMD[@]}" >"$WORK/fio.log" 2>&1 || {
        rc=$?
        cat "$WORK/fio.log" >&2
        die "fio failed ($(status "$rc")): $(show)"
    }
    child_cpu cpu1
    rm -rf "$DATA/fio"
    jq -r --arg d "$dir" --arg m "$5" --argjson cpu "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')" \
        '([.jobs[][$d] | if $m == "iops" then .iops else .bw_bytes end] | add) as $v
        | ([.jobs[][$d].total_ios] | add) as $n | "\($v) \($cpu / $n)"' "$6"
}

run_dfs() { # rw bs depth workers metric out
    local errors cpu0 cpu1 rc
    mkdir -p "$DATA/dfs"
    dfs_cmd "$1" "$2" "$3" "$4" "$6"
    child_cpu cpu0
    "${CMD[@]}" >"$WORK/dfs.log" 2>&1 || {
        rc=$?
        cat "$WORK/dfs.log" >&2
        die "dfsbench failed ($(status "$rc")): $(show)"
    }
    child_cpu cpu1
    rm -rf "$DATA/dfs"
    errors=$(jq '[.phases[] | select(.prepare | not) | .errors.total] | add' "$6")
    [ "$errors" = 0 ] || die "dfsbench reported $errors errors: $(show)"
    # Prepare phases (the unmeasured layout write of a read case) are skipped.
    jq -r --arg m "$5" --argjson cpu "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')" \
        '[.phases[] | select(.prepare | not)] as $p
        | ([$p[] | if $m == "iops" then .ops_per_sec else .bytes_per_sec end] | add) as $v
        | ([$p[].ops] | add) as $n | "\($v) \($cpu / $n)"' "$6"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

fmt() { # metric value
    if [ "$1" = iops ]; then awk -v v="$2" 'BEGIN { printf "%.0f IOPS", v }'; else
        awk -v v="$2" 'BEGIN { printf "%.0f MB/s", v / 1e6 }'
    fi
}

# --- the cases, interleaved -----------------------------------------------------------------
rows=()
all_ok=1
for c in $CASES; do
    read -r rw bs depth workers metric <<<"$(case_params "$c")"
    echo "== $c: $rw bs=$bs iodepth=$depth workers=$workers size=$SIZE ${DURATION}s, io_uring"
    fio_cmd "$rw" "$bs" "$depth" "$workers" "$WORK/fio-$c-N.json"
    echo "   fio:      $(show)"
    dfs_cmd "$rw" "$bs" "$depth" "$workers" "$WORK/dfs-$c-N.json"
    echo "   dfsbench: $(show)"
    : >"$WORK/pairs"
    for r in $(seq 1 "$REPEATS"); do
        # Alternate which tool goes first (fio dfsbench, dfsbench fio, ...).
        if [ $((r % 2)) = 1 ]; then
            read -r f fc < <(run_fio "$rw" "$bs" "$depth" "$workers" "$metric" "$WORK/fio-$c-$r.json")
            read -r d dc < <(run_dfs "$rw" "$bs" "$depth" "$workers" "$metric" "$WORK/dfs-$c-$r.json")
        else
            read -r d dc < <(run_dfs "$rw" "$bs" "$depth" "$workers" "$metric" "$WORK/dfs-$c-$r.json")
            read -r f fc < <(run_fio "$rw" "$bs" "$depth" "$workers" "$metric" "$WORK/fio-$c-$r.json")
        fi
        if [ -z "$f" ] || [ -z "$d" ]; then die "no figures for $c"; fi
        echo "$f $d $fc $dc" >>"$WORK/pairs"
        printf '   run %d: fio %s, dfsbench %s (%.3fx); CPU per op: fio %.2f us, dfsbench %.2f us\n' \
            "$r" "$(fmt "$metric" "$f")" "$(fmt "$metric" "$d")" \
            "$(awk -v a="$d" -v b="$f" 'BEGIN { print a / b }')" \
            "$(awk -v v="$fc" 'BEGIN { print v * 1e6 }')" "$(awk -v v="$dc" 'BEGIN { print v * 1e6 }')"
    done
    fm=$(awk '{ print $1 }' "$WORK/pairs" | median)
    dm=$(awk '{ print $2 }' "$WORK/pairs" | median)
    ratio=$(awk '{ print $2 / $1 }' "$WORK/pairs" | median)
    cpu_ratio=$(awk '$4 > 0 { print $3 / $4 }' "$WORK/pairs" | median)
    ok=$(awk -v r="$ratio" -v t="$TARGET_RATIO" 'BEGIN { print (r >= t) ? 1 : 0 }')
    [ "$ok" = 1 ] || all_ok=0
    rows+=("$(printf '%-12s %16s %16s %8.3f %8.3f%s' "$c" "$(fmt "$metric" "$fm")" "$(fmt "$metric" "$dm")" \
        "$ratio" "$cpu_ratio" "$([ "$ok" = 1 ] || echo '  <')")")
    echo
done

echo "median of $REPEATS interleaved runs of ${DURATION}s each (ratio: median of the per-pair dfsbench / fio;"
echo "cpu: median of the per-pair CPU time per operation, fio / dfsbench)"
printf '%-12s %16s %16s %8s %8s\n' case fio dfsbench ratio cpu
printf '%s\n' "${rows[@]}"
echo
if [ "$all_ok" = 1 ]; then
    echo "RESULT: PASS: dfsbench reached >= ${TARGET_RATIO}x fio in every case"
else
    echo "RESULT: FAIL: dfsbench stayed below ${TARGET_RATIO}x fio in a case marked '<'"
fi
