#!/usr/bin/env bash
# How fast `dfsbench report` is on a big result: a synthetic but schema-valid result of a one-hour
# run with 256 workers (time-based phases of 3600 one-second intervals, 256 workers_detail entries
# per phase with a few stragglers, error seconds, log-normal latency histograms with a slow tail,
# a mixed randrw phase with per-kind histograms, and an unmeasured layout phase). Prints the wall
# time and peak RSS (/usr/bin/time -v) of each report format.
#
#   bench/report-speed.sh [SECONDS] [WORKERS]       defaults: 3600 256
#
# Builds the release binary in $CARGO_TARGET_DIR (default: target/).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3600}
workers=${2:-256}
target=${CARGO_TARGET_DIR:-target}
if [ ! -x /usr/bin/time ]; then
    echo "report-speed.sh: /usr/bin/time is missing: apt-get install time" >&2
    exit 1
fi
cargo build --release --quiet -p dfsbench-cli --bin dfsbench
cargo build --release --quiet -p dfsbench-report --features fixtures --example synthetic_result
bin="$target/release/dfsbench"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$target/release/examples/synthetic_result" "$work/long.json" "$seconds" "$workers"
echo "input: synthetic result, ${seconds} s phases, ${workers} workers, $(du -h "$work/long.json" | cut -f1) of JSON"

measure() { # FORMAT OUTPUT
    /usr/bin/time -v -o "$work/time.txt" "$bin" report "$work/long.json" --format "$1" -o "$2" >/dev/null
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
    printf '%-5s  wall %8s  peak RSS %6.1f MiB  output %s\n' "$1" "$wall" "$(awk "BEGIN { print $rss / 1024 }")" \
        "$(du -h "$2" | cut -f1)"
}
for _ in 1 2 3; do
    measure html "$work/report.html"
done
measure md "$work/report.md"
measure csv "$work/report.csv"
measure json "$work/report.json"
