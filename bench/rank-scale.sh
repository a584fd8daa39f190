#!/usr/bin/env bash
# dfsbench's own cost as the ranks grow (issue 18, part 4): N = 1, 2, 4, ... 256 processes on
# this machine, oversubscribed, each with one worker and tiny work (FILES files of 4 KiB on a
# tmpfs: write, read, delete), started by `--procs N` and by `mpirun -np N` (when mpirun is
# here and the binary has the mpi feature). Per launcher and N it prints, from the result's
# per-phase `gather` records (the largest over the three phases; docs/results.md): the
# start-barrier skew, rank 0's wait for the parts, its merge of them (wall and CPU time), the
# bytes it received and answered each rank, then the result file's size, rank 0's peak RSS and the run's wall
# time. docs/scaling.md fits and extrapolates these figures.
#
# Settings (environment):
#   RANKS="1 2 4 8 16 32 64 128 256"
#   LAUNCHERS="procs mpi"   mpi is left out, with a note, without mpirun or the mpi feature
#   FILES=10                files per process
#   REPEATS=1               runs per launcher and N (the table has one line per run)
#   DIR=/dev/shm            a tmpfs under which the runs write
#   DFSBENCH=               use this binary instead of building one (release, with the mpi
#                           feature when mpirun is here)
set -euo pipefail

RANKS=${RANKS:-"1 2 4 8 16 32 64 128 256"}
LAUNCHERS=${LAUNCHERS:-"procs mpi"}
FILES=${FILES:-10}
REPEATS=${REPEATS:-1}
DIR=${DIR:-/dev/shm}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=rank-scale
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

[ "$(stat -f -c %T "$DIR")" = tmpfs ] || die "$DIR is not a tmpfs (set DIR)"
WORK=$(mktemp -d "$DIR/rank-scale.XXXXXX")
mkdir "$WORK/t"
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
# A Ctrl-C reaches every process of the run (one process group); dfsbench stops its ranks.
trap 'exit 130' INT
trap 'exit 143' TERM

need_commands jq python3
if command -v mpirun >/dev/null; then find_dfsbench --features mpi; else find_dfsbench; fi

# As the tests run mpirun on one machine (docs/cluster.md), as root too.
MPIRUN=(mpirun --oversubscribe --mca btl "self,vader" --mca btl_vader_single_copy_mechanism none)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launchers=""
for l in $LAUNCHERS; do
    case $l in
        procs) launchers+=" procs" ;;
        mpi)
            if ! command -v mpirun >/dev/null; then
                log "rank-scale: no mpirun here: mpi left out (scripts/deps.sh installs Open MPI)"
            elif ! "$BIN" --version | grep -q 'mpi'; then
                log "rank-scale: $BIN has no mpi feature: mpi left out"
            else
                launchers+=" mpi"
            fi ;;
        *) die "unknown launcher '$l': procs or mpi" ;;
    esac
done

# The command of one run, in CMD.
command_of() { # launcher ranks out
    local run=(run -t "$WORK/t" -w files --files "$FILES" --file-size 4k -j 1 --rank-timeout 10m
        --quiet --format json -o "$3")
    case $1 in
        procs) CMD=("$BIN" "${run[@]}"); [ "$2" = 1 ] || CMD+=(--procs "$2") ;;
        mpi) CMD=("${MPIRUN[@]}" -np "$2" "$BIN" "${run[@]}") ;;
    esac
}

# Wall seconds and the peak RSS (KiB) of the largest process the command started.
timed() {
    python3 -c '
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
if r.returncode:
    sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(sys.argv[1:]), r.stderr))
print("%.2f %d" % (time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))' "$@"
}

echo "machine: $(nproc) CPUs, $(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo), $(uname -sr), $(free -g | awk '/Mem:/ {print $2}') GiB"
echo "dfsbench: $("$BIN" --version)"
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for l in $launchers; do
    command_of "$l" 4 "$WORK/r.json"
    echo "e.g. ($l, N = 4): ${CMD[*]}"
done
echo
printf '%-6s %5s %8s %8s %9s %8s %9s %9s %7s %10s %8s %7s %6s\n' launch ranks skew_ms wait_ms merge_ms \
    mcpu_ms recv_KiB part_KiB reply_B result_KiB rss_MiB wall_s load
for l in $launchers; do
    for n in $RANKS; do
        for _ in $(seq "$REPEATS"); do
            out="$WORK/r.json"
            rm -f "$out"
            command_of "$l" "$n" "$out"
            read -r wall kib < <(timed "${CMD[@]}") || die "run failed: ${CMD[*]}"
            # Rank 0's own peak RSS when it merged (gather); with one process, the process's.
            jq -r --argjson kib "$kib" --argjson wall "$wall" --arg l "$l" --argjson n "$n" \
                --argjson size "$(stat -c %s "$out")" --arg load "$(cut -d' ' -f1 /proc/loadavg)" '
                [.phases[] | select(.prepare | not) | .gather // empty] as $g
                | def most(f): if $g == [] then "-" else ($g | map(f) | max) end;
                  def ms(f): most(f) | if . == "-" or . == null then "-" else (. * 1000 * 100 | round / 100) end;
                [$l, $n, ms(.start_skew_s), ms(.wait_s), ms(.merge_s), ms(.merge_cpu_s),
                 (most(.bytes_received) | if . == "-" then . else (. / 1024 * 10 | round / 10) end),
                 (most(.largest_part_bytes) | if . == "-" then . else (. / 1024 * 10 | round / 10) end),
                 most(.reply_bytes), ($size / 1024 * 10 | round / 10),
                 ((most(.peak_rss_bytes) | if . == "-" then $kib * 1024 else . end) / 1048576 * 10 | round / 10),
                 $wall, $load] | @tsv' "$out" |
                awk -F'\t' '{ printf "%-6s %5s %8s %8s %9s %8s %9s %9s %7s %10s %8s %7s %6s\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 }' |
                tee -a "$WORK/table.txt"
        done
    done
done

# Least squares cost = a + b*N per launcher and column over the runs of 2 ranks or more (one
# process gathers nothing), and what it gives for 10,000 ranks (docs/scaling.md).
echo
echo "fit over N >= 2: cost = a + b*N, and at N = 10000"
awk '$2 >= 2 { l = $1; launch[l] = 1; n[l]++; x = $2; sx[l] += x; sxx[l] += x * x
               for (c = 3; c <= 12; c++) { sy[l, c] += $c; sxy[l, c] += x * $c } }
     END { split("skew_ms wait_ms merge_ms mcpu_ms recv_KiB part_KiB reply_B result_KiB rss_MiB wall_s", name, " ")
           for (l in launch) for (c = 3; c <= 12; c++) {
               d = n[l] * sxx[l] - sx[l] * sx[l]; if (d == 0) continue
               b = (n[l] * sxy[l, c] - sx[l] * sy[l, c]) / d; a = (sy[l, c] - b * sx[l]) / n[l]
               printf "%-6s %-10s a = %10.3f  b = %9.4f /rank  -> %12.1f\n", l, name[c - 2], a, b, a + b * 10000 } }' \
    "$WORK/table.txt" | sort
