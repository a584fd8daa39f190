#!/usr/bin/env bash
# Multi-process against multi-thread clients (DFS-Perf's comparison), in one invocation: for
# N = 1, 2, 4, 8 clients, `dfsbench run --procs N -j 1` (N processes of one worker) and
# `dfsbench run -j N` (one process, N worker threads) write, read and delete small files on
# tmpfs and on a local MinIO (`dfsbench lab up minio --dir`). Runs of the two modes alternate, REPEATS times
# each; per target, phase and N the table prints the median ops/s of each mode and its speedup
# against the single-client baseline (N = 1, one process, one worker) of the same target.
#
# Settings (environment):
#   FILES=10000      files per client on tmpfs       S3_FILES=300   per client on MinIO
#   SIZE=4k          file size
#   CLIENTS="1 2 4 8"
#   REPEATS=3
#   TARGETS="tmpfs minio"
#   DFSBENCH=        use this binary instead of building one (release)
set -euo pipefail

FILES=${FILES:-10000}
S3_FILES=${S3_FILES:-300}
SIZE=${SIZE:-4k}
CLIENTS=${CLIENTS:-"1 2 4 8"}
REPEATS=${REPEATS:-3}
TARGETS=${TARGETS:-"tmpfs minio"}

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NAME=scale-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/scale-compare.XXXXXX")
STATE=$WORK/minio
STARTED=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -n "$STARTED" ]; then
        "$BIN" lab down minio --dir "$STATE" >&2 || log "scale-compare: could not stop MinIO in $STATE"
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
find_dfsbench

# Sets URI for a target (MinIO's credentials come into this shell's environment).
set_uri() { # target
    case $1 in
        tmpfs)
            [ "$(stat -f -c %T /dev/shm)" = tmpfs ] || die "/dev/shm is not tmpfs"
            URI=/dev/shm ;;
        minio)
            [ -x "$REPO/.cache/bin/minio" ] || die "MinIO is not installed: dfsbench lab install minio"
            STARTED=1
            "$BIN" lab up minio --dir "$STATE" >&2
            eval "$("$BIN" lab env minio --dir "$STATE")"
            URI="s3://$DFSBENCH_S3_BUCKET/scale?endpoint=$DFSBENCH_S3_ENDPOINT" ;;
        *) die "unknown target '$1': tmpfs or minio" ;;
    esac
}

# One run; appends {target, mode, clients, op, ops_per_sec} per measured phase to runs.jsonl.
run_one() { # target uri mode clients files
    local out="$WORK/r.json" cmd
    cmd=("$BIN" run -t "$2" -w files --files "$5" --file-size "$SIZE" --quiet --format json -o "$out")
    if [ "$3" = procs ]; then cmd+=(--procs "$4" -j 1); else cmd+=(-j "$4"); fi
    "${cmd[@]}" >/dev/null || die "dfsbench failed: ${cmd[*]}"
    jq -c --arg t "$1" --arg m "$3" --argjson n "$4" \
        '.phases[] | select(.prepare | not) | {target: $t, mode: $m, clients: $n, op: .name, ops_per_sec}' \
        "$out" >>"$WORK/runs.jsonl"
}

for target in $TARGETS; do
    set_uri "$target"
    uri=$URI
    files=$FILES
    [ "$target" = minio ] && files=$S3_FILES
    log "== $target ($uri): $files x $SIZE files per client"
    log "   e.g. $BIN run -t $uri -w files --files $files --file-size $SIZE --procs 4 -j 1"
    for n in $CLIENTS; do
        for r in $(seq "$REPEATS"); do
            # Alternate the order so that drift affects both modes alike.
            if [ $((r % 2)) = 1 ]; then order="procs threads"; else order="threads procs"; fi
            for mode in $order; do
                [ "$n" = 1 ] && [ "$mode" = procs ] && continue # N = 1: the same single client
                run_one "$target" "$uri" "$mode" "$n" "$files"
            done
        done
    done
done

# Median per (target, op, mode, clients); speedup against threads with 1 client (the baseline).
jq -rs '
    def median: sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
    group_by([.target, .op, .mode, .clients])
    | map({target: .[0].target, op: .[0].op, mode: .[0].mode, clients: .[0].clients,
           ops: (map(.ops_per_sec) | median)})
    | group_by([.target, .op]) | .[]
    | (map(select(.mode == "threads" and .clients == 1)) | .[0].ops) as $base
    | (group_by(.clients) | .[]
       | (map(select(.mode == "threads")) | .[0].ops) as $t
       | (map(select(.mode == "procs")) | .[0].ops // $t) as $p
       | [.[0].target, .[0].op, .[0].clients, ($t | floor), ($t / $base * 100 | floor / 100),
          ($p | floor), ($p / $base * 100 | floor / 100), ($p / $t * 100 | floor / 100)])
    | @tsv' "$WORK/runs.jsonl" \
    | awk 'BEGIN { printf "%-6s %-7s %7s %12s %8s %12s %8s %11s\n", "target", "phase", "clients",
                   "threads/s", "speedup", "procs/s", "speedup", "procs/thr" }
           { printf "%-6s %-7s %7d %12d %8.2f %12d %8.2f %11.2f\n", $1, $2, $3, $4, $5, $6, $7, $8 }'
