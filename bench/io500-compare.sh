#!/usr/bin/env bash
# Compare `dfsbench study io500` with IO500's own programs, IOR and mdtest, phase by phase, on
# one directory at the same ranks and write time. IOR and mdtest are built by hand from
# github.com/hpc/ior (not in CI):
#
#   git clone https://github.com/hpc/ior && cd ior && ./bootstrap && ./configure && make
#   IOR=$PWD/src bench/io500-compare.sh
#
# Both run 4 ranks on this machine: dfsbench's point io500-procs (4 single-client processes)
# and `mpirun -np 4` of IO500's command lines (io500-isc24, as a submission's result.txt
# records them: ior -C -Q 1 -g -k -e ... -D T -O stoneWallingWearOut=1, mdtest -N 1 -C -Y -W T
# ...), write phases of WRITE_S seconds each, in IO500's order. IOR's reads run after a drop of
# the kernel's caches (on one node IOR's -C and mdtest's -N 1 read another rank's files from
# the same page cache; dfsbench drops the pages of the files it reads), so the script needs
# root. The find is GNU find over the tree (pfind is not in IOR's repository): 1 process,
# a stat per entry, rate = entries / s. Figures and differences: bench/README.md.
#
# Settings (environment):
#   IOR=                 the src/ directory of a built IOR (ior and mdtest in it)
#   WRITE_S=2            seconds of each write phase (IO500: 300; IOR writes GBs a second
#                        into the page cache here: mind the free space of DIR)
#   DIR=/var/tmp/io500-compare   where both write (removed first)
#   REPEATS=1            runs of each tool, interleaved (dfsbench, IOR, dfsbench, ...)
#   DFSBENCH=            use this dfsbench binary instead of building one
#   CARGO_TARGET_DIR     where cargo builds dfsbench (default: <repo>/target)
set -euo pipefail

REPO=$(cd "$(dirname "$0")/.." && pwd)
NAME=io500-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

IOR=${IOR:-}
WRITE_S=${WRITE_S:-2}
DIR=${DIR:-/var/tmp/io500-compare}
REPEATS=${REPEATS:-1}
[ -x "$IOR/ior" ] && [ -x "$IOR/mdtest" ] || die "set IOR to the src/ directory of a built IOR (ior and mdtest in it)"
[ "$(id -u)" -eq 0 ] || die "run as root: the kernel's caches are dropped before IOR's reads"
command -v mpirun >/dev/null || die "needs mpirun (Open MPI)"
if [ -z "${DFSBENCH:-}" ]; then
    (cd "$REPO" && cargo build --release -q -p dfsbench-cli) || die "cargo build failed"
    DFSBENCH=${CARGO_TARGET_DIR:-$REPO/target}/release/dfsbench
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
MPI=(mpirun --oversubscribe --mca btl self,vader --mca btl_vader_single_copy_mechanism none -np 4)
SCALE=$(python3 -c "print($WRITE_S / 300)")

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# Before each tool's run: the other's files written back and freed, so neither starts beside
# the other's writeback (on this VM the same write phase moves 0.9 to 3.1 GiB/s by what the
# disk is still doing).
settle() { drop; sleep 10; }

# One dfsbench study; prints "phase value" lines (GiB/s or kIOPS, the table's figures).
run_dfsbench() { # OUT
    rm -rf "$DIR/dfsbench" "$1"
    mkdir -p "$DIR/dfsbench"
    "$DFSBENCH" study io500 -t "$DIR/dfsbench" --scale "$SCALE" --points io500-procs --out "$1" --quiet >/dev/null
    python3 - "$1/tables.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tables"][0]
col = t["columns"].index("4 processes")
for r in t["rows"]:
    print(r["labels"][0], r["cells"][col][0].get("value", "nan"))
PY
}

# IO500's command lines; prints "phase value" lines in the same units.
run_ior() { # RESULTS
    local D=$DIR/ior R=$1
    rm -rf "$D" "$R"
    mkdir -p "$D/ior-easy" "$D/ior-hard" "$D/mdtest-easy" "$D/mdtest-hard" "$R"
    local easy=(--dataPacketType=timestamp -G -312789882 -C -Q 1 -g -k -e -o "$D/ior-easy/ior_file_easy"
        -O "stoneWallingStatusFile=$R/ior-easy.stonewall" -t 2m -b 9920000m -F -a POSIX)
    local hard=(--dataPacketType=timestamp -G=-312779194 -C -Q 1 -g -k -e -o "$D/ior-hard/file"
        -O "stoneWallingStatusFile=$R/ior-hard.stonewall" -t 47008 -b 47008 -s 10000000 -a POSIX)
    local mde=(--dataPacketType=timestamp -n 1000000 -u -L -F -P -G 573387913 -N 1 -d "$D/mdtest-easy"
        -x "$R/mdtest-easy.stonewall" -a POSIX)
    local mdh=(--dataPacketType=timestamp -n 1000000 -t -w 3901 -e 3901 -P -G=573398601 -N 1 -F
        -d "$D/mdtest-hard" -x "$R/mdtest-hard.stonewall" -a POSIX)
    "${MPI[@]}" "$IOR/ior" "${easy[@]}" -w -D "$WRITE_S" -O stoneWallingWearOut=1 >"$R/ior-easy-write.txt"
    "${MPI[@]}" "$IOR/mdtest" "${mde[@]}" -C -Y -W "$WRITE_S" >"$R/mdtest-easy-write.txt"
    "${MPI[@]}" "$IOR/ior" "${hard[@]}" -w -D "$WRITE_S" -O stoneWallingWearOut=1 >"$R/ior-hard-write.txt"
    "${MPI[@]}" "$IOR/mdtest" "${mdh[@]}" -C -Y -W "$WRITE_S" >"$R/mdtest-hard-write.txt"
    local s e
    s=$(date +%s.%N)
    find "$D" -size 3901c -name '*01*' >/dev/null
    e=$(date +%s.%N)
    echo "$(find "$D" | wc -l) $s $e" >"$R/find.txt"
    drop
    "${MPI[@]}" "$IOR/ior" "${easy[@]}" -r -R >"$R/ior-easy-read.txt"
    "${MPI[@]}" "$IOR/mdtest" "${mde[@]}" -T >"$R/mdtest-easy-stat.txt"
    drop
    "${MPI[@]}" "$IOR/ior" "${hard[@]}" -r -R >"$R/ior-hard-read.txt"
    "${MPI[@]}" "$IOR/mdtest" "${mdh[@]}" -T >"$R/mdtest-hard-stat.txt"
    "${MPI[@]}" "$IOR/mdtest" "${mde[@]}" -r >"$R/mdtest-easy-delete.txt"
    drop
    "${MPI[@]}" "$IOR/mdtest" "${mdh[@]}" -E -X >"$R/mdtest-hard-read.txt"
    "${MPI[@]}" "$IOR/mdtest" "${mdh[@]}" -r >"$R/mdtest-hard-delete.txt"
    # IO500's ior-rnd4K-easy-read: ior-easy's command with 4 KiB random reads (-z -z -z: at
    # random offsets of the whole file) for the stonewall time. IO500 gives -s -1, which this
    # IOR refuses ("segment count must be positive"); with -z -z -z the segment count only
    # bounds the reads, so IO500's ior-hard count stands in, and -D ends the phase.
    drop
    "${MPI[@]}" "$IOR/ior" "${easy[@]}" -r -D "$WRITE_S" -z -z -z -t 4096 -b 4096 -s 10000000 \
        -O stoneWallingWearOut=1 -C -Q 2 >"$R/ior-rnd4K-easy-read.txt"
    rm -rf "$D"
    # IOR's bandwidth of the phase (with its wear-out), mdtest's rate of the phase.
    local p k
    for p in ior-easy-write mdtest-easy-write:creation ior-hard-write mdtest-hard-write:creation \
        find ior-easy-read mdtest-easy-stat:stat ior-hard-read mdtest-hard-stat:stat \
        mdtest-easy-delete:removal mdtest-hard-read:read mdtest-hard-delete:removal ior-rnd4K-easy-read; do
        k=${p#*:}
        p=${p%%:*}
        case $p in
        ior-*) awk -v p="$p" '/^(write|read) / {print p, $2 / 1024; exit}' "$R/$p.txt" ;;
        find) awk '{print "find", $1 / ($3 - $2) / 1000}' "$R/find.txt" ;;
        *) awk -v p="$p" -v k="File $k" '/SUMMARY rate/ {on = 1} on && index($0, k) {print p, $4 / 1000; exit}' "$R/$p.txt" ;;
        esac
    done
}

OUT=$(mktemp -d)
trap 'rm -rf "$OUT" "$DIR"' EXIT
for i in $(seq "$REPEATS"); do
    settle
    log "run $i of $REPEATS: dfsbench"
    run_dfsbench "$OUT/study-$i" >"$OUT/dfsbench-$i.txt"
    log "$(cat "$OUT/dfsbench-$i.txt")"
    settle
    log "run $i of $REPEATS: IOR and mdtest"
    run_ior "$OUT/ior-$i" >"$OUT/ior-$i.txt"
    log "$(cat "$OUT/ior-$i.txt")"
done
python3 - "$OUT" "$REPEATS" <<'PY'
import math, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
def load(name):
    runs = []
    for i in range(1, n + 1):
        runs.append({k: float(v) for k, v in (l.split() for l in open(f"{out}/{name}-{i}.txt"))})
    return runs
d, r = load("dfsbench"), load("ior")
print(f"{'phase':<20}{'unit':>7}{'dfsbench':>11}{'IO500 tools':>13}{'ratio':>8}")
# ior-rnd4K-easy-read is reported, unscored, as in IO500.
UNSCORED = {"ior-rnd4K-easy-read"}
for phase in d[0]:
    unit = "GiB/s" if phase.startswith("ior") else "kIOPS"
    a = statistics.median(x[phase] for x in d)
    if phase not in r[0]:
        print(f"{phase:<20}{unit:>7}{a:>11.3f}{'-':>13}{'-':>8}")
        continue
    b = statistics.median(x[phase] for x in r)
    ratio = statistics.median(x[phase] / y[phase] for x, y in zip(d, r))
    print(f"{phase:<20}{unit:>7}{a:>11.3f}{b:>13.3f}{ratio:>8.2f}")
def score(x):
    x = {k: v for k, v in x.items() if k not in UNSCORED}
    bw = [v for k, v in x.items() if k.startswith("ior")]
    md = [v for k, v in x.items() if not k.startswith("ior")]
    g = lambda v: math.exp(sum(map(math.log, v)) / len(v))
    return math.sqrt(g(bw) * g(md))
a, b = statistics.median(map(score, d)), statistics.median(map(score, r))
print(f"{'score':<20}{'':>7}{a:>11.3f}{b:>13.3f}{a / b:>8.2f}")
PY
