#!/usr/bin/env bash
# Compare dfsbench's S3 client (OpenDAL) against a bare boto3 loop on a local MinIO.
#
# Starts its own MinIO (`dfsbench lab up minio --dir`, own state dir), then runs, per case, dfsbench
# (`-w files --phases write,read --duration`) and bench/boto3_loop.py (same object size, same
# number of concurrent clients, same seconds per phase), interleaved in pairs whose order
# alternates (dfsbench boto3, boto3 dfsbench, ...) so that drift of this machine hits both.
# For every phase (PUT, GET) it records the rate, the client's CPU per request (dfsbench: the
# result's phases[].cpu; boto3: getrusage(RUSAGE_SELF) deltas) and the server's CPU (MinIO's
# /proc/PID/stat utime+stime, sampled every 50 ms and cut to the phase's time window), and
# prints a table, the ratio of client CPU per request boto3 / dfsbench, and whether dfsbench
# leaves the server as the bottleneck. Every object and process it makes is removed at exit.
#
# Settings (environment):
#   DURATION=5             seconds of each PUT and GET phase (both tools)
#   REPEATS=2              runs of each tool per case (A B A B)
#   SIZES="4k 1m"          object sizes (dfsbench --file-size; k/m = KiB/MiB)
#   CLIENTS="1 8"          concurrent clients (dfsbench -j, boto3 threads)
#   DFS_THREADS=           dfsbench --threads (default: dfsbench's own)
#   BOTO3_STOCK=0          1: boto3 with its default CRC32 checksums (see boto3_loop.py)
#   SERVER_SHARE=0.25      dfsbench "leaves the server as the bottleneck" when its CPU per
#                          request is at most this share of client + server CPU per request
#   S3_COMPARE_DIR=        MinIO's state dir (default .cache/lab/s3-compare.PID; removed)
#   CARGO_TARGET_DIR       where cargo builds dfsbench (default: <repo>/target)
#   DFSBENCH=              use this dfsbench binary instead of building one
#   KEEP_RAW=              a directory to copy every result file into
set -euo pipefail

DURATION=${DURATION:-5}
REPEATS=${REPEATS:-2}
SIZES=${SIZES:-"4k 1m"}
CLIENTS=${CLIENTS:-"1 8"}
DFS_THREADS=${DFS_THREADS:-}
BOTO3_STOCK=${BOTO3_STOCK:-0}
SERVER_SHARE=${SERVER_SHARE:-0.25}
BOTO3_VERSION=1.44.5

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
STATE=${S3_COMPARE_DIR:-$REPO/.cache/lab/s3-compare.$$}
VENV=$REPO/.cache/bench-venv

NAME=s3-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

# --- cleanup: the sampler, MinIO (with everything in it), scratch files ---------------------
WORK=$(mktemp -d "${TMPDIR:-/tmp}/s3-compare.XXXXXX")
SAMPLER_PID=""
STARTED=""
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    if [ -n "$SAMPLER_PID" ]; then
        kill "$SAMPLER_PID" 2>/dev/null || true
        wait "$SAMPLER_PID" 2>/dev/null || true
    fi
    if [ -n "$STARTED" ]; then
        "$BIN" lab down minio --dir "$STATE" >&2 || log "s3-compare: could not stop MinIO in $STATE"
    fi
    if [ -n "${KEEP_RAW:-}" ]; then mkdir -p "$KEEP_RAW" && cp -r "$WORK"/. "$KEEP_RAW"/; fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- tools ----------------------------------------------------------------------------------
command -v jq >/dev/null || die "jq is missing (apt-get install jq)"
[ -x "$REPO/.cache/bin/minio" ] || die "MinIO is not installed: dfsbench lab install minio"

if ! "$VENV/bin/python" -c "import boto3, sys; sys.exit(boto3.__version__ != '$BOTO3_VERSION')" 2>/dev/null; then
    log "installing boto3==$BOTO3_VERSION into $VENV"
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "boto3==$BOTO3_VERSION" >&2
fi
PY=$VENV/bin/python

find_dfsbench

# --- server ---------------------------------------------------------------------------------
log "starting MinIO in $STATE"
STARTED=1
"$BIN" lab up minio --dir "$STATE" >&2
eval "$("$BIN" lab env minio --dir "$STATE")"
EP=$DFSBENCH_S3_ENDPOINT
BUCKET=$DFSBENCH_S3_BUCKET
MINIO_PID=${DFSBENCH_SERVER_PIDS%%,*}
[ -r "/proc/$MINIO_PID/stat" ] || die "MinIO (pid $MINIO_PID) is not running"

# MinIO's CPU seconds (utime + stime, all threads) every 50 ms, with the wall clock.
"$PY" -c '
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the script, which stops this
pid, tck = sys.argv[1], os.sysconf("SC_CLK_TCK")
while True:
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read().rsplit(")", 1)[1].split()
    except OSError:
        break
    print(f"{time.time():.4f} {(int(s[11]) + int(s[12])) / tck:.2f}", flush=True)
    time.sleep(0.05)
' "$MINIO_PID" >"$WORK/server-cpu.txt" &
SAMPLER_PID=$!

# --- machine --------------------------------------------------------------------------------
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "machine:  $(nproc) CPUs ($cpu), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo) RAM, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kernel:   $(uname -srm)"
echo "dfsbench: $("$BIN" --version 2>/dev/null || echo "$BIN")"
echo "boto3:    $("$PY" -c 'import boto3, botocore, sys; print(boto3.__version__, "(botocore", botocore.__version__ + ", Python", sys.version.split()[0] + ")")')"
echo "server:   MinIO pid $MINIO_PID at $EP, data in $STATE (fs: $(stat -f -c %T "$STATE"))"
echo "settings: DURATION=${DURATION}s REPEATS=$REPEATS SIZES=\"$SIZES\" CLIENTS=\"$CLIENTS\" BOTO3_STOCK=$BOTO3_STOCK"
echo

bytes_of() { # 4k -> 4096, 1m -> 1048576
    case $1 in
        *[kK]) echo $((${1%[kK]} * 1024)) ;;
        *[mM]) echo $((${1%[mM]} * 1048576)) ;;
        *) echo "$1" ;;
    esac
}

show() { printf '%q ' "$@"; }

# Each run appends one JSON line per phase to $WORK/runs.jsonl:
# {size, clients, pair, tool, op, ops, bytes, errors, seconds, cpu_s, t0, t1 [, server_cpu_s]}
run_dfsbench() { # size clients pair
    local out="$WORK/dfs-$1-$2-$3.json" t_launch
    local cmd=("$BIN" run --target "s3://$BUCKET/bench?endpoint=$EP" --workload files
        --file-size "$1" --phases "write,read" --workers "$2" --duration "${DURATION}s"
        --quiet --format json --out "$out")
    [ -n "$DFS_THREADS" ] && cmd+=(--threads "$DFS_THREADS")
    [ "$3" = 1 ] && log "   dfsbench: $(show "${cmd[@]}")"
    t_launch=$EPOCHREALTIME
    "${cmd[@]}" >/dev/null || die "dfsbench failed ($(show "${cmd[@]}"))"
    # start_s counts from the run's start, a few ms after the launch (the run prefix is made
    # first): the window is placed from the launch, which is close enough for 50 ms samples.
    jq -c --arg size "$1" --argjson clients "$2" --argjson pair "$3" --argjson t "$t_launch" '
        .phases[] | select(.prepare | not) | {
            size: $size, clients: $clients, pair: $pair, tool: "dfsbench",
            op: (if .name == "write" then "PUT" else "GET" end), threads,
            ops, bytes, errors: .errors.total, seconds: .duration_s,
            cpu_s: (.cpu.user_s + .cpu.sys_s),
            t0: ($t + .start_s + .ramp_s), t1: ($t + .start_s + .ramp_s + .duration_s)
        }' "$out" >>"$WORK/runs.jsonl"
}

run_boto3() { # size clients pair
    local out="$WORK/boto3-$1-$2-$3.json"
    local cmd=("$PY" "$REPO/bench/boto3_loop.py" --endpoint "$EP" --bucket "$BUCKET"
        --prefix "boto3-$$-$1-$2-$3" --size "$(bytes_of "$1")" --clients "$2"
        --duration "$DURATION" --server-pid "$MINIO_PID")
    [ "$BOTO3_STOCK" = 1 ] && cmd+=(--stock)
    [ "$3" = 1 ] && log "   boto3:    $(show "${cmd[@]}")"
    "${cmd[@]}" >"$out" || die "boto3_loop failed ($(show "${cmd[@]}"))"
    jq -c --arg size "$1" --argjson clients "$2" --argjson pair "$3" '
        .phases | to_entries[] | .key as $op | .value | . + {
            size: $size, clients: $clients, pair: $pair, tool: "boto3", threads: $clients,
            op: ($op | ascii_upcase), cpu_s: (.cpu_user_s + .cpu_sys_s)
        } | del(.cpu_user_s, .cpu_sys_s, .p50_ms, .p99_ms, .ops_per_sec, .bytes_per_sec)
        ' "$out" >>"$WORK/runs.jsonl"
}

: >"$WORK/runs.jsonl"
for size in $SIZES; do
    for c in $CLIENTS; do
        log "== ${size} objects, $c client(s): PUT ${DURATION}s then GET ${DURATION}s, $REPEATS pairs"
        for ((pair = 1; pair <= REPEATS; pair++)); do
            if ((pair % 2)); then
                run_dfsbench "$size" "$c" "$pair"
                run_boto3 "$size" "$c" "$pair"
            else
                run_boto3 "$size" "$c" "$pair"
                run_dfsbench "$size" "$c" "$pair"
            fi
        done
    done
done

# Both tools removed what they wrote: the bucket must be empty again.
left=$("$PY" -c '
import sys, boto3
s3 = boto3.client("s3", endpoint_url=sys.argv[1])
print(s3.list_objects_v2(Bucket=sys.argv[2], MaxKeys=100).get("KeyCount", 0))
' "$EP" "$BUCKET")
[ "$left" = 0 ] || log "s3-compare: WARNING: $left+ objects left in bucket $BUCKET (removed with MinIO's state dir)"
echo "cleanup:  bucket $BUCKET holds $left objects after all runs"
echo

# --- table ----------------------------------------------------------------------------------
"$PY" - "$WORK/runs.jsonl" "$WORK/server-cpu.txt" "$SERVER_SHARE" "$(nproc)" <<'PY'
import bisect, json, statistics, sys

runs = [json.loads(l) for l in open(sys.argv[1])]
samples = [tuple(map(float, l.split())) for l in open(sys.argv[2]) if len(l.split()) == 2]
share_max, ncpu = float(sys.argv[3]), int(sys.argv[4])
ts = [s[0] for s in samples]

def server_cpu_at(t):  # MinIO's CPU seconds at wall time t, interpolated
    i = bisect.bisect_left(ts, t)
    if i == 0 or i >= len(samples):
        raise SystemExit(f"no server CPU sample around {t}")
    (t0, c0), (t1, c1) = samples[i - 1], samples[i]
    return c0 + (c1 - c0) * (t - t0) / (t1 - t0) if t1 > t0 else c1

for r in runs:
    r["server_sampled_s"] = server_cpu_at(r["t1"]) - server_cpu_at(r["t0"])
    if r["tool"] == "dfsbench":
        r["server_cpu_s"] = r["server_sampled_s"]
    ops = max(r["ops"], 1)
    r["mbps"] = r["bytes"] / r["seconds"] / 1e6
    r["rate"] = r["ops"] / r["seconds"]
    r["client_us"] = r["cpu_s"] / ops * 1e6
    r["server_us"] = r["server_cpu_s"] / ops * 1e6
    r["client_cores"] = r["cpu_s"] / r["seconds"]
    r["server_cores"] = r["server_cpu_s"] / r["seconds"]

errors = sum(r["errors"] for r in runs)
med = statistics.median
cases = []
for r in runs:
    k = (r["size"], r["clients"], r["op"])
    if k not in cases:
        cases.append(k)

print(f"{'case':<16} {'tool':<9} {'rate':>14} {'client µs/op':>13} {'client cores':>13} "
      f"{'server µs/op':>13} {'server cores':>13} {'client share':>13}")
summary = []
for size, c, op in cases:
    sel = [r for r in runs if (r["size"], r["clients"], r["op"]) == (size, c, op)]
    big = not size.lower().endswith("k")
    name = f"{size} {op} c={c}"
    row = {}
    for tool in ("dfsbench", "boto3"):
        t = [r for r in sel if r["tool"] == tool]
        m = {k: med(r[k] for r in t) for k in ("rate", "mbps", "client_us", "server_us", "client_cores", "server_cores")}
        m["share"] = m["client_us"] / (m["client_us"] + m["server_us"])
        row[tool] = m
        rate = f"{m['mbps']:.1f} MB/s" if big else f"{m['rate']:.0f} ops/s"
        print(f"{name:<16} {tool:<9} {rate:>14} {m['client_us']:>13.0f} {m['client_cores']:>13.2f} "
              f"{m['server_us']:>13.0f} {m['server_cores']:>13.2f} {m['share']:>12.0%}")
    # ratios over the runs of the same pair (back to back)
    pairs = sorted({r["pair"] for r in sel})
    by = {(r["tool"], r["pair"]): r for r in sel}
    cpu_ratio = med(by[("boto3", p)]["client_us"] / by[("dfsbench", p)]["client_us"] for p in pairs)
    rate_ratio = med(by[("dfsbench", p)]["rate"] / by[("boto3", p)]["rate"] for p in pairs)
    print(f"{'':<16} {'ratio':<9} {rate_ratio:>12.2f}x {cpu_ratio:>12.1f}x   (rate dfsbench/boto3, client CPU per request boto3/dfsbench)")
    summary.append((name, c, cpu_ratio, rate_ratio, row["dfsbench"]))

print()
# the sampled server CPU of boto3's runs against the exact figure boto3_loop read itself
drift = [abs(r["server_sampled_s"] - r["server_cpu_s"]) / max(r["server_cpu_s"], 1e-9)
         for r in runs if r["tool"] == "boto3" and r["server_cpu_s"] > 0.2]
if drift:
    print(f"server CPU check: the 50 ms samples differ from boto3_loop's own /proc readings by "
          f"{100 * med(drift):.1f} % (median), {100 * max(drift):.1f} % (max)")
ratios = [s[2] for s in summary]
gm = statistics.geometric_mean(ratios)
print(f"SUMMARY: client CPU per request boto3 / dfsbench = {min(ratios):.1f}x .. {max(ratios):.1f}x "
      f"(geometric mean {gm:.1f}x) over {len(summary)} cases; {errors} errors")
conc = [s for s in summary if s[1] > 1]
bound = [s for s in conc if s[4]["share"] <= share_max]
for name, c, _, _, d in conc:
    verdict = "server-bound" if d["share"] <= share_max else "NOT server-bound"
    print(f"  dfsbench {name}: client {d['client_us']:.0f} µs/op = {d['share']:.0%} of the CPU per request, "
          f"server {d['server_cores']:.2f} cores + client {d['client_cores']:.2f} cores of {ncpu}: {verdict}")
if conc:
    if len(bound) == len(conc):
        print(f"SUMMARY: with {conc[0][1]}+ clients dfsbench leaves the server as the bottleneck in every case "
              f"(its client CPU is <= {share_max:.0%} of the CPU per request)")
    else:
        print(f"SUMMARY: dfsbench does NOT leave the server as the bottleneck in {len(conc) - len(bound)} of "
              f"{len(conc)} concurrent cases (client CPU share > {share_max:.0%})")
PY
