#!/usr/bin/env bash
# Compare dfsbench's io workload against fio, in one invocation.
#
# Two kinds of case:
# - matrix cases, named FS-CACHE-RW-BS-qdQD-jJOBS (e.g. ext4-direct-randread-4k-qd32-j2): FS is
#   tmpfs or ext4 (a file system on a loop device this script makes, mounts and removes), CACHE
#   is cached (buffered; read cases read the file from the page cache: fio invalidate=0
#   pre_read=1, dfsbench --invalidate 0 --pre-read; the loop device's reads during each run are printed) or direct (O_DIRECT: fio direct=1, dfsbench
#   --direct; ext4 only, tmpfs has none). fio runs once per engine of FIO_ENGINES and dfsbench
#   once with DFS_ENGINE (auto: what it picks itself); a pair compares dfsbench with the best
#   fio engine of that pair. Both write the same data: fio runs with scramble_buffers=0, so it
#   sends one buffer of random bytes again and again, as dfsbench does by default.
# - the named cases of before, each on tmpfs with the same engine for both tools: randread-1
#   randread-2 seqwrite seqread (io_uring), randread-psync, randread-libaio, randread-qd1.
#
# Runs are interleaved in pairs whose order alternates (fio then dfsbench, then dfsbench then
# fio) so that drift of this machine affects both alike. fio's reference engine of a case is the
# one with the highest median IOPS over the pairs (not each pair's best run: the best of three
# noisy runs is biased high when engines are close). The table prints the median of each tool's
# runs and the median of the per-pair ratios dfsbench / that engine; absolute numbers on a
# shared VM are noisy, the ratio is what matters. cpu is CPU time per operation, fio /
# dfsbench: the getrusage of each tool's whole invocation (every thread, io_uring's io-wq
# workers, the layout of a read case included) over its measured operations, less dfsbench's
# engine probe (its `probe` phases' own getrusage, printed apart: fio has no probe to charge);
# fio's own usr_cpu/sys_cpu leave io-wq out (per-thread getrusage), so they are not used. p50,
# p99 and p99.9 are latency ratios dfsbench / fio on the same job: fio's run in the same pair
# with the engine dfsbench ran (fio's lat_ns percentiles: submission to completion, as dfsbench
# times an operation); a latency at queue depth 32 compared with psync's at depth 1 would
# measure the queue. pick is fio's IOPS on dfsbench's engine over fio's on the reference engine
# (1.0: `auto` picked what fio found best). spread is fio's slowest run on its reference engine
# over its fastest: a case whose dfsbench median is below fio's median but not below fio's
# slowest run is marked iops~ (within fio's own spread) rather than iops. ahead is the pairs in
# which dfsbench moved at least the IOPS of fio's reference engine, out of all: a miss ahead in
# none of them is dfsbench's, one ahead in some is the machine's noise as much (on this VM a
# 1 MiB copy from memory moves 1.5x with where the pages land). The last lines list the cases
# below the goals.
#
# Settings (environment):
#   CASES=matrix        words, in order: a named case, "matrix" (every matrix case that
#                       MATRIX_* select), or a glob over matrix case names (tmpfs-*-4k-qd1-j1)
#   QUICK=0             1: CASES defaults to a dozen matrix cases (4k random and 1m
#                       sequential, QD 1 and 32, 1 job, each file system and cache)
#   MATRIX_FS="tmpfs ext4" MATRIX_CACHE="cached direct" MATRIX_RW="read write randread randwrite"
#   MATRIX_BS="4k 128k 1m" MATRIX_QD="1 32" MATRIX_JOBS="1 2"
#   FIO_ENGINES="psync libaio io_uring"   fio engines of a matrix case (psync ignores iodepth:
#                       at QD > 1 it reuses the QD 1 case's runs of the same shape if there were)
#   DFS_ENGINE=auto     dfsbench's --ioengine in matrix cases
#   DURATION=2          seconds per run (fio runtime, dfsbench --duration)
#   REPEATS=2           runs of each tool per case (the whole matrix: about 50 minutes; with
#                       DURATION=1 REPEATS=1, 18; QUICK=1, about 5)
#   SIZE=512m           file size per worker (fio size per job)
#   RAND_IODEPTH=32 SEQ_IODEPTH=1   queue depths of the named cases
#   LOAD=0              1: a busy loop per CPU at nice 0 runs beside both tools for the whole
#                       invocation (killed on exit), to see the latency tail under CPU load
#   TARGET_RATIO=1.0 TARGET_CPU=1.0 TARGET_P50=1.05 TARGET_P999=1.2
#                       the goals: IOPS and cpu ratios at least, p50 and p99.9 ratios at most
#   TMPFS_DIR=          a directory on tmpfs (default: /dev/shm, or a tmpfs this script mounts)
#   EXT4_DIR=           the loop device's image goes here (default: <repo>/.cache/fio-compare,
#                       or /var/tmp when the repository has no .cache); a directory on tmpfs
#                       (/dev/shm/fc) makes the device RAM-backed: O_DIRECT cases then measure
#                       the tools on the block path, not the host disk's mood
#   EXT4_SIZE=4g        size of that sparse image
#   CARGO_TARGET_DIR    where cargo builds dfsbench (default: <repo>/target)
#   DFSBENCH=           use this dfsbench binary instead of building one
set -euo pipefail

DURATION=${DURATION:-2}
REPEATS=${REPEATS:-2}
SIZE=${SIZE:-512m}
RAND_IODEPTH=${RAND_IODEPTH:-32}
SEQ_IODEPTH=${SEQ_IODEPTH:-1}
QUICK=${QUICK:-0}
QUICK_CASES="tmpfs-cached-randread-4k-qd1-j1 tmpfs-cached-randread-4k-qd32-j1 tmpfs-cached-read-1m-qd1-j1
tmpfs-cached-write-1m-qd1-j1 ext4-cached-randread-4k-qd1-j1 ext4-cached-randwrite-4k-qd1-j1
ext4-cached-read-1m-qd1-j1 ext4-direct-randread-4k-qd1-j1 ext4-direct-randread-4k-qd32-j1
ext4-direct-randwrite-4k-qd32-j1 ext4-direct-read-1m-qd1-j1 ext4-direct-write-1m-qd1-j1"
if [ "$QUICK" = 1 ]; then CASES=${CASES:-$QUICK_CASES}; else CASES=${CASES:-matrix}; fi
MATRIX_FS=${MATRIX_FS:-"tmpfs ext4"}
MATRIX_CACHE=${MATRIX_CACHE:-"cached direct"}
MATRIX_RW=${MATRIX_RW:-"read write randread randwrite"}
MATRIX_BS=${MATRIX_BS:-"4k 128k 1m"}
MATRIX_QD=${MATRIX_QD:-"1 32"}
MATRIX_JOBS=${MATRIX_JOBS:-"1 2"}
FIO_ENGINES=${FIO_ENGINES:-"psync libaio io_uring"}
DFS_ENGINE=${DFS_ENGINE:-auto}
LOAD=${LOAD:-0}
TARGET_RATIO=${TARGET_RATIO:-1.0}
TARGET_CPU=${TARGET_CPU:-1.0}
TARGET_P50=${TARGET_P50:-1.05}
TARGET_P999=${TARGET_P999:-1.2}
TMPFS_DIR=${TMPFS_DIR:-}
EXT4_SIZE=${EXT4_SIZE:-4g}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [ -z "${EXT4_DIR:-}" ]; then
    if [ -d "$REPO/.cache" ]; then EXT4_DIR=$REPO/.cache/fio-compare; else EXT4_DIR=/var/tmp; fi
fi

NAME=fio-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

# --- the cases ------------------------------------------------------------------------------
NAMED="randread-1 randread-2 seqwrite seqread randread-psync randread-libaio randread-qd1"

matrix_names() {
    local fs cache rw bs jobs qd
    for fs in $MATRIX_FS; do for cache in $MATRIX_CACHE; do
        [ "$fs/$cache" = tmpfs/direct ] && continue
        for rw in $MATRIX_RW; do for bs in $MATRIX_BS; do for jobs in $MATRIX_JOBS; do for qd in $MATRIX_QD; do
            echo "$fs-$cache-$rw-$bs-qd$qd-j$jobs"
        done; done; done; done
    done; done
}

# CASES -> the case names, one a line; a glob must match a matrix case.
expand_cases() {
    local w n hit all
    all=$(matrix_names)
    for w in $CASES; do
        if [ "$w" = matrix ]; then echo "$all"; continue; fi
        if [[ " $NAMED " == *" $w "* ]]; then echo "$w"; continue; fi
        hit=0
        for n in $all; do
            # shellcheck disable=SC2053 # $w is a glob on purpose
            if [[ $n == $w ]]; then echo "$n"; hit=1; fi
        done
        [ "$hit" = 1 ] || die "case '$w' matches no case: give a named case ($NAMED), matrix, or a glob over FS-CACHE-RW-BS-qdN-jN names within MATRIX_*"
    done
}

# case -> "fs cache rw bs iodepth jobs dfsbench-engine fio-engine..."
case_params() {
    case $1 in
        randread-1) echo "tmpfs cached randread 4k $RAND_IODEPTH 1 io_uring io_uring" ;;
        randread-2) echo "tmpfs cached randread 4k $RAND_IODEPTH 2 io_uring io_uring" ;;
        seqwrite) echo "tmpfs cached write 1m $SEQ_IODEPTH 1 io_uring io_uring" ;;
        seqread) echo "tmpfs cached read 1m $SEQ_IODEPTH 1 io_uring io_uring" ;;
        randread-psync) echo "tmpfs cached randread 4k 1 1 psync psync" ;;
        randread-libaio) echo "tmpfs cached randread 4k $RAND_IODEPTH 1 libaio libaio" ;;
        randread-qd1) echo "tmpfs cached randread 4k 1 1 io_uring io_uring" ;;
        *)
            IFS=- read -r fs cache rw bs qd jobs <<<"$1"
            echo "$fs $cache $rw $bs ${qd#qd} ${jobs#j} $DFS_ENGINE $FIO_ENGINES"
            ;;
    esac
}

case_text=$(expand_cases)
mapfile -t CASE_LIST <<<"$case_text"
[ -n "$case_text" ] || die "no case selected: CASES='$CASES'"
need_ext4=0
for c in "${CASE_LIST[@]}"; do
    read -r fs _ <<<"$(case_params "$c")"
    [ "$fs" = ext4 ] && need_ext4=1
done

# --- tools ----------------------------------------------------------------------------------
need_commands fio jq
[ "$need_ext4" = 0 ] || need_commands losetup:util-linux mkfs.ext4:e2fsprogs

find_dfsbench

# --- scratch space: everything this script creates lives under $WORK, $TMPFS_DATA, $EXT4_* ---
WORK=$(mktemp -d "${TMPDIR:-/tmp}/fio-compare.XXXXXX")
MOUNTED=""
EXT4_IMAGE=""
EXT4_DEV=""
EXT4_MNT=""
LOAD_PIDS=()
cleanup() {
    local rc=$?
    if [ "${#LOAD_PIDS[@]}" -gt 0 ]; then kill "${LOAD_PIDS[@]}" 2>/dev/null || true; fi
    rm -rf "${TMPFS_DATA:-}" "$WORK"
    if [ -n "$MOUNTED" ]; then
        as_root umount "$MOUNTED" || true
        rmdir "$MOUNTED" || true
    fi
    if [ -n "$EXT4_MNT" ]; then
        as_root umount "$EXT4_MNT" || true
        rmdir "$EXT4_MNT" || true
    fi
    if [ -n "$EXT4_DEV" ]; then as_root losetup -d "$EXT4_DEV" || true; fi
    if [ -n "$EXT4_IMAGE" ]; then rm -f "$EXT4_IMAGE"; fi
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
TMPFS_DATA=$(mktemp -d "$TMPFS_DIR/fio-compare.XXXXXX")

if [ "$need_ext4" = 1 ]; then
    # A loop device with direct I/O to its image: O_DIRECT runs reach the host's disk, not the
    # host's page cache of the image. The image is sparse; lazy init off, so no background
    # zeroing of inode tables runs beside the measurements.
    mkdir -p "$EXT4_DIR"
    EXT4_IMAGE=$(mktemp "$EXT4_DIR/ext4.XXXXXX.img")
    truncate -s "$EXT4_SIZE" "$EXT4_IMAGE"
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$EXT4_IMAGE" ||
        die "mkfs.ext4 failed on $EXT4_IMAGE: is EXT4_DIR=$EXT4_DIR writable with $EXT4_SIZE free?"
    EXT4_DEV=$(as_root losetup --find --show --direct-io=on "$EXT4_IMAGE") ||
        die "losetup failed: no free loop device, or no loop support in this container (give CASES without ext4)"
    EXT4_MNT=$(mktemp -d "${TMPDIR:-/tmp}/fio-compare-ext4.XXXXXX")
    as_root mount -t ext4 "$EXT4_DEV" "$EXT4_MNT"
fi

data_dir() { # fs
    if [ "$1" = ext4 ]; then echo "$EXT4_MNT"; else echo "$TMPFS_DATA"; fi
}

# Sectors the loop device read so far (0 without one): shows that a cached read case read
# from the page cache.
disk_read_sectors() {
    if [ -n "$EXT4_DEV" ]; then awk '{ print $3 }' "/sys/block/${EXT4_DEV#/dev/}/stat"; else echo 0; fi
}

# --- machine --------------------------------------------------------------------------------
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "machine:  $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM"
echo "kernel:   $(uname -srm)"
echo "fio:      $(fio --version)"
echo "dfsbench: $("$BIN" --version 2>/dev/null || echo "$BIN")"
echo "commit:   $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "targets:  tmpfs $TMPFS_DATA${EXT4_DEV:+, ext4 $EXT4_MNT ($EXT4_DEV on $EXT4_IMAGE, direct-io)}"
echo "settings: DURATION=${DURATION}s REPEATS=$REPEATS SIZE=$SIZE LOAD=$LOAD DFS_ENGINE=$DFS_ENGINE FIO_ENGINES='$FIO_ENGINES'"
echo "cases:    ${#CASE_LIST[@]}"
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
# Set CMD to the command line of one run of fio or dfsbench.
# lat_percentiles: fio's percentiles of the whole latency (submission to completion; its
# default clat percentiles leave out the submission, which dfsbench's latency includes).
fio_cmd() { # dir cache rw bs depth jobs engine out
    local cache=(--invalidate=0) depth=$5
    [ "$2" = direct ] && cache=(--direct=1)
    # A sync engine runs at depth 1 whatever the iodepth (fio caps it, with a note that would
    # precede the JSON in its output file).
    [ "$7" = psync ] && depth=1
    # fio drops what its layout wrote from the page cache: pre_read brings the file back in.
    if [ "$2" = cached ] && [[ $3 == *read* ]]; then cache+=(--pre_read=1); fi
    # scramble_buffers=0: fio writes what dfsbench writes by default, one buffer of random bytes
    # again and again. fio's default rewrites the start of every 512-byte segment before each
    # write (offset and time): work dfsbench does not do, and data that compresses.
    CMD=(fio --name=bench --directory="$1" --size="$SIZE" --rw="$3" --bs="$4"
        --iodepth="$depth" --numjobs="$6" --ioengine="$7" --thread --fallocate=none "${cache[@]}"
        --scramble_buffers=0
        --time_based --runtime="$DURATION" --group_reporting --lat_percentiles=1
        --output-format=json --output="$8")
}

dfs_cmd() { # dir cache rw bs depth jobs engine out
    local cache=(--invalidate 0)
    [ "$2" = direct ] && cache=(--direct)
    # As fio's: the timed reads start from pages read once since the layout, not freshly written
    # ones (the kernel's first read of a page it wrote moves it on its LRU lists: measurably
    # slower, in about 1 % of a first pass's reads).
    if [ "$2" = cached ] && [[ $3 == *read* ]]; then cache+=(--pre-read); fi
    CMD=("$BIN" run --target "$1" --workload io --rw "$3" --bs "$4" --size "$SIZE"
        --iodepth "$5" --workers "$6" --ioengine "$7" "${cache[@]}" --duration "${DURATION}s"
        --quiet --out "$8")
}

show() { printf '%q ' "${CMD[@]}"; }

# CPU seconds (user + system) used by this shell's finished children so far: every thread of
# a tool, io_uring's io-wq workers included. `times` must run in this shell, not in a $(...).
child_cpu() { # variable
    times >"$WORK/times"
    printf -v "$1" '%s' "$(sed -n 2p "$WORK/times" |
        awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, t, "m"); s += t[1] * 60 + t[2] } print s }')"
}

# Run CMD (tool $1) in directory $2, from that (new, empty) directory, leaving its CPU seconds
# in RUN_CPU and the sectors the loop device read meanwhile in RUN_SECTORS. The working
# directory matters to fio: when a path named as the job exists there and is not a regular file
# (the repository's bench/ for job "bench"), every job of the run does its I/O on that one file
# (fio's add_job: exists_and_not_regfile), so numjobs=2 shared a file and, writing, its lock.
# With $3 (the jobs), checks that fio made one file per job.
run_timed() { # tool dir [jobs]
    local cpu0 cpu1 s0 rc files
    mkdir -p "$2"
    s0=$(disk_read_sectors)
    child_cpu cpu0
    (cd "$2" && exec "${CMD[@]}") >"$WORK/$1.log" 2>&1 || {
        rc=$?
        cat "$WORK/$1.log" >&2
        die "$1 failed ($(status "$rc")): $(show)"
    }
    child_cpu cpu1
    if [ -n "${3:-}" ]; then
        files=$(find "$2" -maxdepth 1 -type f -name 'bench.*' | wc -l)
        [ "$files" = "$3" ] || die "fio made $files files for $3 jobs: $(show)"
    fi
    rm -rf "$2"
    RUN_CPU=$(awk -v a="$cpu0" -v b="$cpu1" 'BEGIN { print b - a }')
    RUN_SECTORS=$(($(disk_read_sectors) - s0))
}

# Each prints: IOPS, CPU seconds per measured operation, p50, p99, p99.9 in ns, MiB the disk read.
run_fio() { # fs cache rw bs depth jobs engine out
    local dir="read" path
    case $3 in *write) dir="write" ;; esac
    path="$(data_dir "$1")/fio"
    fio_cmd "$path" "$2" "$3" "$4" "$5" "$6" "$7" "$8"
    run_timed fio "$path" "$6"
    # group_reporting: one job holds every thread's figures and percentiles.
    jq -r --arg d "$dir" --argjson cpu "$RUN_CPU" --argjson mib "$((RUN_SECTORS / 2048))" \
        '([.jobs[][$d].iops] | add) as $v | ([.jobs[][$d].total_ios] | add) as $n
        | .jobs[0][$d].lat_ns.percentile as $p
        | "\($v) \($cpu / $n) \($p["50.000000"]) \($p["99.000000"]) \($p["99.900000"]) \($mib)"' "$8"
}

run_dfs() { # fs cache rw bs depth jobs engine out
    local errors path
    path="$(data_dir "$1")/dfs"
    dfs_cmd "$path" "$2" "$3" "$4" "$5" "$6" "$7" "$8"
    run_timed dfsbench "$path"
    errors=$(jq '[.phases[] | select(.prepare | not) | .errors.total] | add' "$8")
    [ "$errors" = 0 ] || die "dfsbench reported $errors errors: $(show)"
    # Prepare phases (the layout of a read case, the engine probe) are skipped; the probe's CPU
    # is charged apart (its own phases' getrusage).
    jq -r --argjson cpu "$RUN_CPU" --argjson mib "$((RUN_SECTORS / 2048))" \
        '[.phases[] | select(.prepare | not)] as $p
        | ([.phases[] | select(.name == "probe") | .cpu.user_s + .cpu.sys_s] | add // 0) as $probe
        | ([$p[].ops_per_sec] | add) as $v | ([$p[].ops] | add) as $n | $p[0].latency as $l
        | "\($v) \(($cpu - $probe) / $n) \($l.p50_ns) \($l.p99_ns) \($l.p99_9_ns) \($mib) \($p[0].params.ioengine) \($probe)"' "$8"
}

us() { awk -v v="$1" 'BEGIN { printf "%.1f", v / 1000 }'; }
usop() { awk -v v="$1" 'BEGIN { printf "%.2f", v * 1e6 }'; }

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The psync runs of a shape at QD 1, reused at a higher QD (fio's psync ignores iodepth).
psync_key() { echo "$WORK/psync-$1-$2-$3-$4-$6-$7"; } # fs cache rw bs depth jobs repeat

# --- the cases, interleaved -----------------------------------------------------------------
# The figures of one run of a tool in a case: "field" of $WORK/runs' line of pair $1, tool $2
# (columns: pair tool IOPS cpu/op p50 p99 p99.9 disk-MiB engine probe-cpu).
run_field() { # pair tool column
    awk -v r="$1" -v t="$2" -v c="$3" '$1 == r && $2 == t { print $c; exit }' "$WORK/runs"
}

rows=()
below=()
never=()
loads=()
for c in "${CASE_LIST[@]}"; do
    read -r fs cache rw bs depth jobs dengine fengines <<<"$(case_params "$c")"
    read -ra fengines <<<"$fengines"
    load=$(cut -d' ' -f1 /proc/loadavg)
    loads+=("$load")
    echo "== $c: $fs $cache $rw bs=$bs iodepth=$depth jobs=$jobs size=$SIZE ${DURATION}s, fio ${fengines[*]}, dfsbench $dengine (load $load)"
    fio_cmd "$(data_dir "$fs")/fio" "$cache" "$rw" "$bs" "$depth" "$jobs" "${fengines[0]}" "$WORK/fio.json"
    echo "   fio:      $(show)"
    dfs_cmd "$(data_dir "$fs")/dfs" "$cache" "$rw" "$bs" "$depth" "$jobs" "$dengine" "$WORK/dfs.json"
    echo "   dfsbench: $(show)"
    : >"$WORK/runs"
    for r in $(seq 1 "$REPEATS"); do
        order=("${fengines[@]}" dfsbench)
        if [ $((r % 2)) = 0 ]; then
            order=(dfsbench)
            for ((i = ${#fengines[@]} - 1; i >= 0; i--)); do order+=("${fengines[i]}"); done
        fi
        for tool in "${order[@]}"; do
            if [ "$tool" = dfsbench ]; then
                line=$(run_dfs "$fs" "$cache" "$rw" "$bs" "$depth" "$jobs" "$dengine" "$WORK/dfs-$c-$r.json")
                [ "$(wc -w <<<"$line")" = 8 ] || die "no figures from dfsbench for $c"
                echo "$r dfsbench $line" >>"$WORK/runs"
                continue
            fi
            key=$(psync_key "$fs" "$cache" "$rw" "$bs" "$depth" "$jobs" "$r")
            if [ "$tool" = psync ] && [ "$depth" -gt 1 ] && [ -s "$key" ]; then
                line=$(cat "$key")
            else
                line=$(run_fio "$fs" "$cache" "$rw" "$bs" "$depth" "$jobs" "$tool" "$WORK/fio-$c-$r-$tool.json")
                [ "$tool" != psync ] || [ "$depth" != 1 ] || echo "$line" >"$key"
            fi
            [ "$(wc -w <<<"$line")" = 6 ] || die "no figures from fio $tool for $c"
            echo "$r $tool $line $tool 0" >>"$WORK/runs"
        done
        read -r _ _ d dc d50 d99 d999 dmib dpick dprobe < <(awk -v r="$r" '$1 == r && $2 == "dfsbench"' "$WORK/runs")
        same=$dpick
        [ -n "$(run_field "$r" "$same" 3)" ] || same=${fengines[0]}
        printf '   run %d: fio %s; dfsbench (%s) %.0f IOPS, probe CPU %.0f ms; CPU/op us: dfsbench %s; p50/p99/p99.9 us: fio %s %s/%s/%s, dfsbench %s/%s/%s%s\n' \
            "$r" "$(awk -v r="$r" '$1 == r && $2 != "dfsbench" { printf "%s%s %.0f IOPS %.2f us/op", (n++ ? ", " : ""), $2, $3, $4 * 1e6 }' "$WORK/runs")" \
            "$dpick" "$d" "$(awk -v v="$dprobe" 'BEGIN { print v * 1000 }')" "$(usop "$dc")" "$same" \
            "$(us "$(run_field "$r" "$same" 5)")" "$(us "$(run_field "$r" "$same" 6)")" "$(us "$(run_field "$r" "$same" 7)")" \
            "$(us "$d50")" "$(us "$d99")" "$(us "$d999")" \
            "$([ "$fs" = ext4 ] && echo "; disk read MiB: fio $(run_field "$r" "$same" 8), dfsbench $dmib")"
    done
    # fio's reference engine: the best median IOPS over the pairs.
    fbest=""
    fbest_iops=-1
    for e in "${fengines[@]}"; do
        m=$(awk -v t="$e" '$2 == t { print $3 }' "$WORK/runs" | median)
        if awk -v m="$m" -v b="$fbest_iops" 'BEGIN { exit !(m > b) }'; then fbest=$e fbest_iops=$m; fi
    done
    # One line per pair: reference IOPS, dfsbench IOPS, their CPU/op, then p50/p99/p99.9 of fio
    # on dfsbench's engine and of dfsbench, fio's IOPS on dfsbench's engine, dfsbench's engine.
    : >"$WORK/pairs"
    for r in $(seq 1 "$REPEATS"); do
        read -r _ _ d dc d50 d99 d999 _ dpick _ < <(awk -v r="$r" '$1 == r && $2 == "dfsbench"' "$WORK/runs")
        same=$dpick
        [ -n "$(run_field "$r" "$same" 3)" ] || same=$fbest
        echo "$(run_field "$r" "$fbest" 3) $d $(run_field "$r" "$fbest" 4) $dc" \
            "$(run_field "$r" "$same" 5) $d50 $(run_field "$r" "$same" 6) $d99 $(run_field "$r" "$same" 7) $d999" \
            "$(run_field "$r" "$same" 3) $dpick" >>"$WORK/pairs"
    done
    # fio's own spread on that engine: its slowest run over its fastest. A dfsbench median
    # below fio's but not below fio's slowest run is within what fio itself varies by.
    fmin=$(awk '{ print $1 }' "$WORK/pairs" | sort -g | head -1)
    spread=$(awk '{ print $1 }' "$WORK/pairs" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo / hi }')
    fm=$(awk '{ print $1 }' "$WORK/pairs" | median)
    dm=$(awk '{ print $2 }' "$WORK/pairs" | median)
    ratio=$(awk '{ print $2 / $1 }' "$WORK/pairs" | median)
    cpu_ratio=$(awk '$4 > 0 { print $3 / $4 }' "$WORK/pairs" | median)
    fcpu=$(awk '{ print $3 }' "$WORK/pairs" | median)
    dcpu=$(awk '{ print $4 }' "$WORK/pairs" | median)
    p50=$(awk '$5 > 0 { print $6 / $5 }' "$WORK/pairs" | median)
    p99=$(awk '$7 > 0 { print $8 / $7 }' "$WORK/pairs" | median)
    p999=$(awk '$9 > 0 { print $10 / $9 }' "$WORK/pairs" | median)
    pick=$(awk '{ print $11 / $1 }' "$WORK/pairs" | median)
    ahead=$(awk '$2 >= $1 { n++ } END { printf "%d/%d", n, NR }' "$WORK/pairs")
    dpicks=$(awk '{ print $12 }' "$WORK/pairs" | sort -u | paste -sd/)
    missed=$(awk -v r="$ratio" -v c="$cpu_ratio" -v p="$p50" -v t="$p999" -v d="$dm" -v lo="$fmin" \
        -v tr="$TARGET_RATIO" -v tc="$TARGET_CPU" -v tp="$TARGET_P50" -v tt="$TARGET_P999" 'BEGIN {
        m = ""
        if (r < tr) m = m (d >= lo ? " iops~" : " iops")
        if (c < tc) m = m " cpu"
        if (p > tp) m = m " p50"
        if (t > tt) m = m " p99.9"
        print substr(m, 2) }')
    [ -z "$missed" ] || below+=("$c ($missed)")
    [ "${ahead%%/*}" != 0 ] || never+=("$c")
    rows+=("$(printf '%-34s %-9s %9.0f %6.3f %-9s %9.0f %7.3f %5s %6.3f %7.2f %7.2f %6.3f %6.3f %6.3f %5.2f  %s' "$c" "$fbest" "$fm" "$spread" "$dpicks" "$dm" \
        "$ratio" "$ahead" "$cpu_ratio" "$(usop "$fcpu")" "$(usop "$dcpu")" "$p50" "$p99" "$p999" "$pick" "${missed:+< $missed}")")
    echo
done

echo "median of $REPEATS interleaved runs of ${DURATION}s each${LOAD_PIDS:+, under LOAD=1}; fio: the engine with the"
echo "best median IOPS; ratio: dfsbench / that engine's IOPS; cpu: CPU per op, fio / dfsbench (also in"
echo "us, dfsbench's probe left out); p50, p99, p99.9: dfsbench / fio on dfsbench's engine, lower is"
echo "better; pick: fio's IOPS on dfsbench's engine / on the best (1.0: auto picked fio's best);"
echo "spread: fio's slowest run on its best engine / its fastest; iops~: below fio's median, not"
echo "below fio's slowest run (within fio's own spread); ahead: pairs in which dfsbench moved at least"
echo "fio's IOPS on its best engine"
printf '%-34s %-9s %9s %6s %-9s %9s %7s %5s %6s %7s %7s %6s %6s %6s %5s\n' case fio-best IOPS spread dfsbench IOPS ratio ahead cpu fio-us dfs-us p50 p99 p99.9 pick
printf '%s\n' "${rows[@]}"
echo
echo "load (1 min) at the start of each case: $(printf '%s\n' "${loads[@]}" | sort -g | sed -n '1p;$p' | paste -sd- ), now $(cut -d' ' -f1-3 /proc/loadavg)"
echo "goals: ratio >= $TARGET_RATIO, cpu >= $TARGET_CPU, p50 <= $TARGET_P50, p99.9 <= $TARGET_P999"
if [ "${#below[@]}" = 0 ]; then
    echo "RESULT: PASS: every case met every goal"
else
    within=$(printf '%s\n' "${below[@]}" | grep -c '(iops~)$' || true)
    echo "RESULT: FAIL: ${#below[@]} of ${#CASE_LIST[@]} cases below a goal ($within of them only by IOPS within fio's own spread): $(printf '%s; ' "${below[@]}")"
fi
echo "behind fio's best engine in every pair: ${#never[@]} of ${#CASE_LIST[@]}${never[*]:+: ${never[*]}}"
