#!/usr/bin/env bash
# dfsbench's memory per client (issue 18): peak RSS of one run for 1, 16, 256 and 1024
# clients on mem://, a directory (file://) and a local MinIO; the same against the reference
# peer (bench/boto3_loop.py, one boto3 client per thread) on MinIO, in the same invocation; and,
# with SOAK, RSS sampled over a long run to see it stays flat.
#
# Runs:
#   clients table: dfsbench run -t T -w files --file-size SIZE --files FILES -j N (write,
#                  read, delete FILES objects per client), peak RSS from getrusage.
#   peer table:    dfsbench run -w files --file-size SIZE --phases write,read -j N --duration D
#                  against boto3_loop.py --size SIZE --clients N --duration D (PUT D s, GET D s)
#   soak:          dfsbench run -w mix --mix read=80,write=20 --files 16 --file-size SIZE
#                  -j SOAK_CLIENTS --duration SOAK on MinIO, VmRSS every SAMPLE seconds.
#
# Settings (environment):
#   CLIENTS="1 16 256 1024"   clients of the first table
#   TARGETS="mem file minio"  targets of the first table
#   SIZE=4k FILES=4           object size and objects per client
#   PEER_CLIENTS="16 256"     clients of the peer table (empty: no peer runs)
#   DURATION=5                seconds of each phase of the peer runs
#   SOAK=0 SOAK_CLIENTS=256 SAMPLE=10   seconds of the soak run (0: none), its clients, sampling
#   FILE_DIR=/var/tmp         where the file:// runs write (a directory on the disk)
#   DFSBENCH=                 use this binary instead of building a release one
set -euo pipefail

CLIENTS=${CLIENTS:-"1 16 256 1024"}
TARGETS=${TARGETS:-"mem file minio"}
SIZE=${SIZE:-4k}
FILES=${FILES:-4}
PEER_CLIENTS=${PEER_CLIENTS-"16 256"}
DURATION=${DURATION:-5}
SOAK=${SOAK:-0}
SOAK_CLIENTS=${SOAK_CLIENTS:-256}
SAMPLE=${SAMPLE:-10}
FILE_DIR=${FILE_DIR:-/var/tmp}
BOTO3_VERSION=1.44.5

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=$REPO/.cache/lab/rss.$$
VENV=$REPO/.cache/bench-venv
NAME=rss
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

WORK=$(mktemp -d "$FILE_DIR/rss.XXXXXX")
STARTED=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [ -n "$STARTED" ] && { "$BIN" lab down minio --dir "$STATE" >&2 || log "rss: could not stop MinIO in $STATE"; }
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

find_dfsbench

# Peak RSS (KiB) of a command, from getrusage of the child.
peak_kib() {
    python3 -c '
import resource, subprocess, sys
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
if r.returncode:
    sys.exit("failed (%d): %s\n%s" % (r.returncode, " ".join(sys.argv[1:]), r.stderr))
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

need_minio() {
    [ -n "$STARTED" ] && return 0
    [ -x "$REPO/.cache/bin/minio" ] || die "MinIO is not installed: dfsbench lab install minio"
    STARTED=1
    "$BIN" lab up minio --dir "$STATE" >&2
    eval "$("$BIN" lab env minio --dir "$STATE")"
    S3="s3://$DFSBENCH_S3_BUCKET/rss?endpoint=$DFSBENCH_S3_ENDPOINT"
}

uri_of() {
    case $1 in
        mem) echo "mem://" ;;
        file) echo "$WORK" ;;
        minio) echo "$S3" ;;
    esac
}

# MinIO starts here, not in the subshell of $(uri_of ...), so its variables stay set.
case " $TARGETS " in *" minio "*) need_minio ;; esac

echo "machine:  $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "dfsbench: $BIN ($("$BIN" --version))"
echo
printf '%-6s %8s %14s %16s\n' target clients "peak RSS MiB" "KiB per client"
for t in $TARGETS; do
    uri=$(uri_of "$t")
    for n in $CLIENTS; do
        k=$(peak_kib "$BIN" run -t "$uri" -w files --file-size "$SIZE" --files "$FILES" -j "$n" -q -o "$WORK/r.json")
        printf '%-6s %8s %14s %16.0f\n' "$t" "$n" "$(mib "$k")" "$(awk -v k="$k" -v n="$n" 'BEGIN { print k / n }')"
    done
done

if [ -n "$PEER_CLIENTS" ]; then
    need_minio
    if ! "$VENV/bin/python" -c "import boto3, sys; sys.exit(boto3.__version__ != '$BOTO3_VERSION')" 2>/dev/null; then
        log "installing boto3==$BOTO3_VERSION into $VENV"
        [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
        "$VENV/bin/pip" install --quiet --disable-pip-version-check "boto3==$BOTO3_VERSION" >&2
    fi
    bytes=$(python3 -c "import sys; s=sys.argv[1].lower(); m={'k':1<<10,'m':1<<20}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$SIZE")
    echo
    echo "peer: PUT ${DURATION}s then GET ${DURATION}s of $SIZE objects on MinIO, same clients"
    printf '%8s %14s %14s %8s\n' clients "dfsbench MiB" "boto3 MiB" ratio
    for n in $PEER_CLIENTS; do
        d=$(peak_kib "$BIN" run -t "$S3" -w files --file-size "$SIZE" --phases write,read -j "$n" --duration "${DURATION}s" -q -o "$WORK/p.json")
        b=$(peak_kib "$VENV/bin/python" "$REPO/bench/boto3_loop.py" --endpoint "$DFSBENCH_S3_ENDPOINT" --bucket "$DFSBENCH_S3_BUCKET" \
            --prefix "rss-$$-$n" --size "$bytes" --clients "$n" --duration "$DURATION")
        printf '%8s %14s %14s %8.2f\n' "$n" "$(mib "$d")" "$(mib "$b")" "$(awk -v d="$d" -v b="$b" 'BEGIN { print d / b }')"
    done
fi

if [ "$SOAK" -gt 0 ]; then
    need_minio
    echo
    echo "soak: mix read=80,write=20 of $SIZE objects, $SOAK_CLIENTS clients, ${SOAK}s on MinIO; VmRSS every ${SAMPLE}s"
    "$BIN" run -t "$S3" -w mix --mix read=80,write=20 --files 16 --file-size "$SIZE" -j "$SOAK_CLIENTS" \
        --duration "${SOAK}s" -q -o "$WORK/soak.json" >/dev/null &
    pid=$!
    samples=()
    while kill -0 "$pid" 2>/dev/null; do
        sleep "$SAMPLE"
        r=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null) || break
        [ -n "$r" ] || break
        samples+=("$r")
        printf '  %5ss %8s MiB\n' "$((${#samples[@]} * SAMPLE))" "$(mib "$r")"
    done
    # A run with failed operations exits non-zero: its RSS figures still stand, and its errors
    # are shown before the work folder goes.
    failed=""
    wait "$pid" || failed=1
    if [ "${#samples[@]}" -ge 2 ]; then
        printf '%s\n' "${samples[@]}" | awk -v n="${#samples[@]}" '
            NR == 2 { first = $1 } { last = $1; if ($1 > max) max = $1 }
            END { printf "soak: RSS from the 2nd sample %.1f MiB to the last %.1f MiB (max %.1f MiB, %d samples)\n", first/1024, last/1024, max/1024, n }'
    fi
    if [ -n "$failed" ]; then
        python3 -c 'import json, sys
for p in json.load(open(sys.argv[1])).get("phases", []):
    e = p.get("errors", {})
    print(f"soak: phase {p.get(\"label\")}: {e.get(\"total\", 0)} errors {e.get(\"by_kind\", {})}")' "$WORK/soak.json" || true
        die "the soak run failed"
    fi
fi
