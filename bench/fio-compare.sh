#!/usr/bin/env bash
# Compare dfsbench's io workload against fio on tmpfs, in one invocation.
#
# Each case runs fio and dfsbench with the same engine (io_uring, libaio or psync), block size,
# queue depth, workers, file size and run length, interleaved in pairs whose order alternates
# (fio dfsbench, dfsbench fio, ...) so that drift of this machine affects both alike. The table
# prints the median of each tool's runs and the median of the per-pair ratios dfsbench / fio
# (each pair ran back to back); absolute numbers on a shared VM are noisy, the ratio is what
# matters. The cpu column compares CPU time per operation (fio / dfsbench, all threads of the
# tool and its io_uring workers), which load from other processes disturbs much less. The p50,
# p99 and p99.9 columns are latency ratios dfsbench / fio (fio's lat_ns percentiles: from
# submission to completion, as dfsbench times an operation), median of the pairs.
#
# Settings (environment):
#   DURATION=5          seconds per run (fio runtime, dfsbench --duration)
#   REPEATS=4           runs of each tool per case
#   SIZE=512m           file size per worker (fio size per job)
#   RAND_IODEPTH=32     queue depth of the 4 KiB random read cases
#   SEQ_IODEPTH=1       queue depth of the 1 MiB sequential cases (fio's default iodepth)
#   CASES="randread-1 randread-2 seqwrite seqread randread-psync randread-libaio randread-qd1"
#                       cases to run, in order (psync: qd 1; libaio: qd RAND_IODEPTH, buffered,
#                       so fio's and dfsbench's libaio both complete inside io_submit; qd1: io_uring)
#   LOAD=0              1: a busy loop per CPU at nice 0 runs beside both tools for the whole
#                       invocation (killed on exit), to see the latency tail under CPU load
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
CASES=${CASES:-"randread-1 randread-2 seqwrite seqread randread-psync randread-libaio randread-qd1"}
LOAD=${LOAD:-0}
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
LOAD_PIDS=()
cleanup() {
    local rc=$?
    if [ "${#LOAD_PIDS[@]}" -gt 0 ]; then kill "${LOAD_PIDS[@]}" 2>/dev/null || true; fi
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
echo "settings: DURATION=${DURATION}s REPEATS=$REPEATS SIZE=$SIZE RAND_IODEPTH=$RAND_IODEPTH SEQ_IODEPTH=$SEQ_IODEPTH LOAD=$LOAD"
echo "load:     $(cut -d' ' -f1-3 /proc/loadavg) (1, 5, 15 min) before the runs"
if [ "$LOAD" = 1 ]; then
    # One busy loop per CPU at the tools' own priority: every run shares the CPUs with them.
    for _ in $(seq "$(nproc)"); do
        nice -n 0 sh -c 'while :; do :; done' &
        LOAD_PIDS+=($!)
    done
    echo "LOAD=1:   ${#LOAD_PIDS[@]} busy loops at nice 0 (pids ${LOAD_PIDS[*]})"
fi
echo

# --- one run of each tool -------------------------------------------------------------------
# case -> "rw bs iodepth workers metric engine"
case_params() {
    case $1 in
        randread-1) echo "randread 4k $RAND_IODEPTH 1 iops io_uring" ;;
        randread-2) echo "randread 4k $RAND_IODEPTH 2 iops io_uring" ;;
        seqwrite) echo "write 1m $SEQ_IODEPTH 1 bw io_uring" ;;
        seqread) echo "read 1m $SEQ_IODEPTH 1 bw io_uring" ;;
        randread-psync) echo "randread 4k 1 1 iops psync" ;;
        randread-libaio) echo "randread 4k $RAND_IODEPTH 1 iops libaio" ;;
        randread-qd1) echo "randread 4k 1 1 iops io_uring" ;;
        *) die "unknown case '$1' (known: randread-1 randread-2 seqwrite seqread randread-psync randread-libaio randread-qd1)" ;;
    esac
}

# Set CMD to the command line of one run of fio or dfsbench.
# lat_percentiles: fio's percentiles of the whole latency (submission to completion; its
# default clat percentiles leave out the submission, which dfsbench's latency includes).
fio_cmd() { # rw bs depth workers engine out
    CMD=(fio --name=bench --directory="$DATA/fio" --size="$SIZE" --rw="$1" --bs="$2"
        --iodepth="$3" --numjobs="$4" --ioengine="$5" --thread --fallocate=none
        --time_based --runtime="$DURATION" --group_reporting --lat_percentiles=1
        --output-format=json --output="$6")
}

dfs_cmd() { # rw bs depth workers engine out
    CMD=("$BIN" run --target "$DATA/dfs" --workload io --rw "$1" --bs "$2" --size "$SIZE"
        --iodepth "$3" --workers "$4" --ioengine "$5" --duration "${DURATION}s"
        --quiet --out "$6")
}

show() { printf '%q ' "${CMD[@]}"; }

# CPU seconds (user + system) used by this shell's finished children so far: every thread of
# a tool, io_uring's io-wq workers included. `times` must run in this shell, not in a $(...).
child_cpu() { # variable
    times >"$WORK/times"
    printf -v "$1" '%s' "$(sed -n 2p "$WORK/times" |
        awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } print s }')"
}

# Print the measured value, iops (operations/s) or bw (bytes/s), the CPU time of the whole
# invocation per measured operation (layout of a read case included, which both tools do), and
# the p50, p99 and p99.9 latency in ns.
run_fio() { # rw bs depth workers metric engine out
    local dir="read" cpu0 cpu1 rc
    case $1 in *write) dir="write" ;; esac
    mkdir -p "$DATA/fio"
    fio_cmd "$1" "$2" "$3" "$4" "$6" "$7"
    child_cpu cpu0
    "${CMD[@]}" >"$WORK/fio.log" 2>&1 || {
        rc=$?
        cat "$WORK/fio.log" >&2
        die "fio failed ($(status "$rc")): $(show)"
    }
    child_cpu cpu1
    rm -rf "$DATA/fio"
    # group_reporting: one job holds every thread's figures and percentiles.
    jq -r --arg d "$dir" --arg m "$5" --argjson cpu "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')" \
        '([.jobs[][$d] | if $m == "iops" then .iops else .bw_bytes end] | add) as $v
        | ([.jobs[][$d].total_ios] | add) as $n | .jobs[0][$d].lat_ns.percentile as $p
        | "\($v) \($cpu / $n) \($p["50.000000"]) \($p["99.000000"]) \($p["99.900000"])"' "$7"
}

run_dfs() { # rw bs depth workers metric engine out
    local errors cpu0 cpu1 rc
    mkdir -p "$DATA/dfs"
    dfs_cmd "$1" "$2" "$3" "$4" "$6" "$7"
    child_cpu cpu0
    "${CMD[@]}" >"$WORK/dfs.log" 2>&1 || {
        rc=$?
        cat "$WORK/dfs.log" >&2
        die "dfsbench failed ($(status "$rc")): $(show)"
    }
    child_cpu cpu1
    rm -rf "$DATA/dfs"
    errors=$(jq '[.phases[] | select(.prepare | not) | .errors.total] | add' "$7")
    [ "$errors" = 0 ] || die "dfsbench reported $errors errors: $(show)"
    # Prepare phases (the unmeasured layout write of a read case) are skipped.
    jq -r --arg m "$5" --argjson cpu "$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')" \
        '[.phases[] | select(.prepare | not)] as $p
        | ([$p[] | if $m == "iops" then .ops_per_sec else .bytes_per_sec end] | add) as $v
        | ([$p[].ops] | add) as $n | $p[0].latency as $l
        | "\($v) \($cpu / $n) \($l.p50_ns) \($l.p99_ns) \($l.p99_9_ns)"' "$7"
}

us() { awk -v v="$1" 'BEGIN { printf "%.1f", v / 1000 }'; }

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
    read -r rw bs depth workers metric engine <<<"$(case_params "$c")"
    echo "== $c: $rw bs=$bs iodepth=$depth workers=$workers size=$SIZE ${DURATION}s, $engine"
    fio_cmd "$rw" "$bs" "$depth" "$workers" "$engine" "$WORK/fio-$c-N.json"
    echo "   fio:      $(show)"
    dfs_cmd "$rw" "$bs" "$depth" "$workers" "$engine" "$WORK/dfs-$c-N.json"
    echo "   dfsbench: $(show)"
    : >"$WORK/pairs"
    for r in $(seq 1 "$REPEATS"); do
        # Alternate which tool goes first (fio dfsbench, dfsbench fio, ...).
        if [ $((r % 2)) = 1 ]; then
            read -r f fc f50 f99 f999 < <(run_fio "$rw" "$bs" "$depth" "$workers" "$metric" "$engine" "$WORK/fio-$c-$r.json")
            read -r d dc d50 d99 d999 < <(run_dfs "$rw" "$bs" "$depth" "$workers" "$metric" "$engine" "$WORK/dfs-$c-$r.json")
        else
            read -r d dc d50 d99 d999 < <(run_dfs "$rw" "$bs" "$depth" "$workers" "$metric" "$engine" "$WORK/dfs-$c-$r.json")
            read -r f fc f50 f99 f999 < <(run_fio "$rw" "$bs" "$depth" "$workers" "$metric" "$engine" "$WORK/fio-$c-$r.json")
        fi
        if [ -z "$f999" ] || [ -z "$d999" ]; then die "no figures for $c"; fi
        echo "$f $d $fc $dc $f50 $d50 $f99 $d99 $f999 $d999" >>"$WORK/pairs"
        printf '   run %d: fio %s, dfsbench %s (%.3fx); CPU per op: fio %.2f us, dfsbench %.2f us; p50/p99/p99.9 us: fio %.1f/%.1f/%.1f, dfsbench %.1f/%.1f/%.1f\n' \
            "$r" "$(fmt "$metric" "$f")" "$(fmt "$metric" "$d")" \
            "$(awk -v a="$d" -v b="$f" 'BEGIN { print a / b }')" \
            "$(awk -v v="$fc" 'BEGIN { print v * 1e6 }')" "$(awk -v v="$dc" 'BEGIN { print v * 1e6 }')" \
            "$(us "$f50")" "$(us "$f99")" "$(us "$f999")" "$(us "$d50")" "$(us "$d99")" "$(us "$d999")"
    done
    fm=$(awk '{ print $1 }' "$WORK/pairs" | median)
    dm=$(awk '{ print $2 }' "$WORK/pairs" | median)
    ratio=$(awk '{ print $2 / $1 }' "$WORK/pairs" | median)
    cpu_ratio=$(awk '$4 > 0 { print $3 / $4 }' "$WORK/pairs" | median)
    p50=$(awk '$5 > 0 { print $6 / $5 }' "$WORK/pairs" | median)
    p99=$(awk '$7 > 0 { print $8 / $7 }' "$WORK/pairs" | median)
    p999=$(awk '$9 > 0 { print $10 / $9 }' "$WORK/pairs" | median)
    ok=$(awk -v r="$ratio" -v t="$TARGET_RATIO" 'BEGIN { print (r >= t) ? 1 : 0 }')
    [ "$ok" = 1 ] || all_ok=0
    rows+=("$(printf '%-16s %16s %16s %8.3f %8.3f %8.3f %8.3f %8.3f%s' "$c" "$(fmt "$metric" "$fm")" "$(fmt "$metric" "$dm")" \
        "$ratio" "$cpu_ratio" "$p50" "$p99" "$p999" "$([ "$ok" = 1 ] || echo '  <')")")
    echo
done

echo "median of $REPEATS interleaved runs of ${DURATION}s each (ratio: median of the per-pair dfsbench / fio;"
echo "cpu: median of the per-pair CPU time per operation, fio / dfsbench; p50, p99, p99.9: median of the"
echo "per-pair latency percentile dfsbench / fio, lower is better)${LOAD_PIDS:+, under LOAD=1}"
printf '%-16s %16s %16s %8s %8s %8s %8s %8s\n' case fio dfsbench ratio cpu p50 p99 p99.9
printf '%s\n' "${rows[@]}"
echo
if [ "$all_ok" = 1 ]; then
    echo "RESULT: PASS: dfsbench reached >= ${TARGET_RATIO}x fio in every case"
else
    echo "RESULT: FAIL: dfsbench stayed below ${TARGET_RATIO}x fio in a case marked '<'"
fi
