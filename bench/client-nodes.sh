#!/usr/bin/env bash
# What one shared FUSE client hides: the same ranks on 1, 2 and 4 lab client nodes (each its
# own FUSE client, page cache and connections, ranks started by the lab's mpirun line over
# TCP on the lab's subnet) against the same number of processes in the root namespace on one
# mount (`--procs N`), for `files` with 4 KiB and 1 MiB files and `meta`. Each run's link
# bytes (the client nodes' veths, or the bridge for the root namespace; the kernel's counters)
# are printed next to the payload, so a read served from a cache stands out.
#
#   bench/client-nodes.sh [SYSTEM...]      # default: gluster ceph; needs root and the lab
#   WORKLOADS=files-4k bench/client-nodes.sh gluster     # some of files-4k files-1m meta
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
NAME=client-nodes
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
[ "$(id -u)" -eq 0 ] || die "the lab needs root"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
BIN=${DFSBENCH:-$REPO/target/release/dfsbench}
[ -x "$BIN" ] || die "build first: cargo build --release --features dfsbench-cli/mpi"
"$BIN" --version | grep -q mpi || die "$BIN has no mpi feature: cargo build --release --features dfsbench-cli/mpi"
export DFSBENCH_LAB_DIR=${DFSBENCH_LAB_DIR:-/var/tmp/dfsbench-bench-labs}
OUT=$(mktemp -d "${TMPDIR:-/tmp}/client-nodes.XXXXXX")
trap 'rm -rf "$OUT"' EXIT
SYSTEMS=("$@")
[ ${#SYSTEMS[@]} -gt 0 ] || SYSTEMS=(gluster ceph)
WORKLOADS=${WORKLOADS:-files-4k files-1m meta}

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
# RX + TX bytes of the interfaces named.
link_bytes() { # IFACE...
    local total=0 i
    for i in "$@"; do
        total=$((total + $(cat "/sys/class/net/$i/statistics/rx_bytes") + $(cat "/sys/class/net/$i/statistics/tx_bytes")))
    done
    echo "$total"
}

printf '%-8s %-9s %5s %-6s %10s %10s %12s %12s %9s %9s %9s\n' system workload ranks where "write" "read" "delete/stat" "link" skew_ms clock_ms gather_ms
for sys in "${SYSTEMS[@]}"; do
    "$BIN" lab up "$sys" --clients 4 >/dev/null
    status=$("$BIN" lab status "$sys" --format json)
    mpirun_words=$(json 'd[0]["mpirun"]' <<<"$status")
    bridge=$(json 'd[0]["bridge"]' <<<"$status")
    id=$(json 'd[0]["id"]' <<<"$status")
    for wl in $WORKLOADS; do
        case $wl in
            files-4k) args=(-w files --files 400 --file-size 4k) ;;
            files-1m) args=(-w files --files 40 --file-size 1m) ;;
            meta) args=(-w meta --files 400 --phases "create,stat,delete") ;;
        esac
        for n in 1 2 4; do
            for where in nodes root; do
                result=$OUT/$sys-$wl-$n-$where.json
                if [ "$where" = nodes ]; then
                    hosts=$(seq -s, -f "client%g:1" 1 "$n")
                    # The lab's line for all four nodes, narrowed to the first n.
                    read -ra words <<<"$(sed -E "s/--host [^ ]+/--host $hosts/; s/-np [0-9]+/-np $n/" <<<"$mpirun_words")"
                    ifaces=()
                    # Client node k's veth on the bridge: dfsb<id><code>c<k>.
                    for k in $(seq 1 "$n"); do ifaces+=("dfsb$id${bridge#dfsb-"$id"}c$k"); done
                    launch=("${words[@]}" "$BIN")
                    extra=()
                else
                    ifaces=("$bridge")
                    launch=("$BIN")
                    extra=(); [ "$n" -gt 1 ] && extra=(--procs "$n")
                fi
                before=$(link_bytes "${ifaces[@]}")
                timeout -s KILL 600 "${launch[@]}" run -t "lab:$sys-fs" "${args[@]}" -j 1 -q -o "$result" \
                    ${extra[@]+"${extra[@]}"} >/dev/null 2>"$OUT/err" || die "$sys $wl $n $where: $(tail -1 "$OUT/err")"
                after=$(link_bytes "${ifaces[@]}")
                # Rates; the link bytes over the payload (files) or per operation (meta); the
                # largest start skew of a phase, clock-exchange round trip of a rank, and rank 0's wait for
                # the parts plus their merge at a phase's end.
                python3 - "$result" "$((after - before))" <<'PY' >"$OUT/line"
import json, sys
d = json.load(open(sys.argv[1])); link = int(sys.argv[2]); ph = d["phases"]
rates = ["%10.1f" % (p["bytes_per_sec"] / 2**20 if p["bytes"] else p["ops_per_sec"]) for p in ph]
payload = sum(p["bytes"] for p in ph)
over = "%9.2fx" % (link / payload) if payload else "%7.1fKiB/op" % (link / 1024 / sum(p["ops"] for p in ph))
skew = max((p.get("gather") or {}).get("start_skew_s", 0) for p in ph) * 1e3
members = (d.get("cluster") or {}).get("members", [])
clock = max([m.get("clock_rtt_s", 0) for m in members] or [0]) * 1e3
gather = max((p.get("gather") or {}).get("wait_s", 0) + (p.get("gather") or {}).get("merge_s", 0) for p in ph) * 1e3
print(" ".join(rates), "%12s %9.2f %9.3f %9.2f" % (over, skew, clock, gather))
PY
                printf '%-8s %-9s %5s %-6s %s\n' "$sys" "$wl" "$n" "$where" "$(cat "$OUT/line")"
            done
        done
    done
    "$BIN" lab down "$sys" >/dev/null
done
log "rates: MiB/s for files, ops/s for meta (create, stat, delete); link: bytes both ways over the client's links (kernel counters) over the bytes written and read, or per meta operation; skew_ms: the largest start skew of a phase; clock_ms: the longest of the ranks' shortest clock-exchange round trips; gather_ms: the longest wait for the parts plus their merge at a phase's end (rank 0)"
