#!/usr/bin/env bash
# Compare dfsbench's train workload with DLIO itself (argonne-lcf/dlio_benchmark, PyPI
# dlio-benchmark) on one MLPerf Storage profile, the same dataset layout, a local directory.
#
# DLIO installs into a venv without NVIDIA DALI (nvidia-dali-cuda110 is only on pypi.nvidia.com)
# and without torch: the resnet50 and cosmoflow profiles run on TensorFlow (tensorflow-cpu from
# PyPI), and DLIO imports DALI only in its DALI readers. Its TFRecord generator calls DALI's
# `tfrecord2idx` (an index only DALI readers use): this script puts a small stand-in of it in the
# venv's bin/ (one "offset length" line per record, as DALI writes it).
#
# Each tool generates its own dataset once (DLIO's TFRecord files, dfsbench's kept dataset with
# --dataset: the same files, samples per file and sample size), then the training runs alternate
# in pairs whose order flips (DLIO then dfsbench, dfsbench then DLIO). Before every training run
# the pages of both datasets are dropped (posix_fadvise DONTNEED per file, no global drop_caches),
# and dfsbench runs with --invalidate 0 as DLIO does not drop caches between epochs: in both,
# epoch 1 reads from the disk and later epochs from whatever the page cache kept. Client CPU is
# each training process's user + system time (/usr/bin/time -v), the tool's start-up included:
# DLIO's (Python, TensorFlow, Hydra) is printed apart, measured as the CPU of a run with
# train disabled (workflow.train=False).
#
# Settings (environment):
#   PROFILE=resnet50 ACCEL=h100   DLIO's workload file <profile>_<accel>.yaml; the same preset
#   FILES=8                       num_files_train (resnet50: 1251 samples of 112 KB per file)
#   EPOCHS=2 REPEATS=2            epochs per training run, pairs of runs
#   DIR=/var/tmp/dlio-compare     where both datasets and DLIO's outputs go
#   VENV=/var/tmp/dlio-venv       DLIO's venv (made when missing)
#   DFSBENCH=<repo>/target/release/dfsbench (built when missing)
set -euo pipefail
REPO=$(cd "$(dirname "$0")/.." && pwd)
NAME=dlio-compare
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"

PROFILE=${PROFILE:-resnet50} ACCEL=${ACCEL:-h100} FILES=${FILES:-8}
EPOCHS=${EPOCHS:-2} REPEATS=${REPEATS:-2}
DIR=${DIR:-/var/tmp/dlio-compare} VENV=${VENV:-/var/tmp/dlio-venv}
DFSBENCH=${DFSBENCH:-$REPO/target/release/dfsbench}
PY=$VENV/bin/python

need_commands /usr/bin/time:time
if [ ! -x "$DFSBENCH" ]; then
    (cd "$REPO" && cargo build --release --locked -p dfsbench-cli >&2)
fi

install_dlio() {
    [ -x "$VENV/bin/dlio_benchmark" ] && [ -x "$VENV/bin/tfrecord2idx" ] && return 0
    log "installing dlio-benchmark into $VENV (without DALI and torch)"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --no-deps dlio-benchmark==2.0.0 >&2
    # Its requirements (pip show dlio-benchmark) less nvidia-dali-cuda110, torch, torchaudio and
    # torchvision; tensorflow-cpu for the TensorFlow profiles.
    "$VENV/bin/pip" install -q "Pillow>=9.3.0" "PyYAML>=6.0.0" "h5py>=3.11.0" "mpi4py>=3.1.4" \
        "numpy>=1.23.5" "omegaconf>=2.2.0" "pandas>=1.5.1" "psutil>=5.9.8" "pydftracer==1.0.2" \
        "hydra-core>=1.3.2" tensorflow-cpu >&2
    cat >"$VENV/bin/tfrecord2idx" <<EOF
#!$PY
# Stand-in for NVIDIA DALI's tfrecord2idx: one "offset length" line per record of a TFRecord file.
import struct, sys
with open(sys.argv[1], "rb") as f, open(sys.argv[2], "w") as out:
    while True:
        at = f.tell()
        head = f.read(8)
        if len(head) < 8:
            break
        (n,) = struct.unpack("<Q", head)
        f.seek(4 + n + 4, 1)
        out.write(f"{at} {f.tell() - at}\n")
EOF
    chmod +x "$VENV/bin/tfrecord2idx"
}
install_dlio
export PATH=$VENV/bin:$PATH

mkdir -p "$DIR"
DATA=$DIR/dlio-data
DATASET=$PROFILE-$FILES-files
# The dfsbench preset's files at this count, and DLIO's overrides for the same layout.
DFS_ARGS=(-w train --preset "$PROFILE" --accelerator "$ACCEL" --files "$FILES" --accelerators 1 --dataset "$DATASET")
DLIO_ARGS=("workload=${PROFILE}_$ACCEL" "++workload.dataset.num_files_train=$FILES"
    "++workload.dataset.data_folder=$DATA" "++workload.train.epochs=$EPOCHS")

# CPU seconds (user + system), wall seconds and peak RSS of a `/usr/bin/time -v` log.
cpu_of() { awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {printf "%.2f", u+s}' "$1"; }
wall_of() { awk -F': ' '/Elapsed/ {n=split($2,t,":"); w=0; for(i=1;i<=n;i++) w=w*60+t[i]} END {printf "%.1f", w}' "$1"; }
rss_of() { awk -F': ' '/Maximum resident/ {printf "%d", $2/1024}' "$1"; }

drop_pages() { # drop the cached pages of both datasets' files
    "$PY" - "$DATA" "$DIR/dfsbench-dataset-$DATASET" <<'EOF'
import os, sys
for root in sys.argv[1:]:
    for d, _, files in os.walk(root):
        for f in files:
            fd = os.open(os.path.join(d, f), os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)
EOF
}

if [ ! -d "$DATA/train" ]; then
    log "DLIO generates $FILES files of $PROFILE into $DATA"
    dlio_benchmark "${DLIO_ARGS[@]}" ++workload.workflow.generate_data=True ++workload.workflow.train=False \
        "++hydra.run.dir=$DIR/dlio-gen" >"$DIR/dlio-gen.log" 2>&1 || die "DLIO's generate failed: see $DIR/dlio-gen.log"
fi
if [ ! -d "$DIR/dfsbench-dataset-$DATASET" ]; then
    log "dfsbench generates $FILES files of $PROFILE into $DIR/dfsbench-dataset-$DATASET"
    "$DFSBENCH" run -q -t "$DIR" "${DFS_ARGS[@]}" --phases generate -o "$DIR/dfs-gen.json" >&2
fi

log "DLIO's start-up alone (train disabled)"
/usr/bin/time -v -o "$DIR/dlio-startup.time" dlio_benchmark "${DLIO_ARGS[@]}" ++workload.workflow.train=False \
    "++hydra.run.dir=$DIR/dlio-startup" >"$DIR/dlio-startup.log" 2>&1 || die "DLIO failed: see $DIR/dlio-startup.log"
STARTUP=$(cpu_of "$DIR/dlio-startup.time")

run_dlio() { # N
    local out=$DIR/dlio-run-$1
    rm -rf "$out"
    drop_pages
    /usr/bin/time -v -o "$out.time" dlio_benchmark "${DLIO_ARGS[@]}" "++hydra.run.dir=$out" >"$out.log" 2>&1 ||
        die "DLIO failed: see $out.log"
    "$PY" - "$out/summary.json" "$out.time" "$1" <<EOF
import json, sys
m = json.load(open(sys.argv[1]))["metric"]
print(f"dlio {sys.argv[3]} {m['train_throughput_mean_samples_per_second']:.0f} {m['train_au_mean_percentage']:.1f} " +
      " ".join(f"{a:.1f}" for a in m['train_au_percentage']) + " $(cpu_of "$out.time") $(wall_of "$out.time") $(rss_of "$out.time")")
EOF
}

run_dfsbench() { # N
    local out=$DIR/dfs-run-$1
    drop_pages
    /usr/bin/time -v -o "$out.time" "$DFSBENCH" run -q -t "$DIR" "${DFS_ARGS[@]}" --epochs "$EPOCHS" --invalidate 0 \
        -o "$out.json" >/dev/null 2>"$out.err" || die "dfsbench failed: see $out.err"
    "$PY" - "$out.json" "$1" <<EOF
import json, sys
r = json.load(open(sys.argv[1]))
t = [p["train"] for p in r["phases"] if p["name"] == "train"]
# As DLIO's train_throughput_mean_samples_per_second and train_au_mean_percentage: epochs' means.
sps = sum(x["samples_per_sec"] for x in t) / len(t)
aus = [100 * x["au"] for x in t]
print(f"dfsbench {sys.argv[2]} {sps:.0f} {sum(aus) / len(aus):.1f} " + " ".join(f"{a:.1f}" for a in aus) +
      " $(cpu_of "$out.time") $(wall_of "$out.time") $(rss_of "$out.time")")
EOF
}

ROWS=$DIR/rows.txt
: >"$ROWS"
for i in $(seq 1 "$REPEATS"); do
    if [ $((i % 2)) -eq 1 ]; then run_dlio "$i" >>"$ROWS"; run_dfsbench "$i" >>"$ROWS"; else
        run_dfsbench "$i" >>"$ROWS"; run_dlio "$i" >>"$ROWS"; fi
done

echo "$PROFILE $ACCEL, $FILES files, $EPOCHS epochs, 1 accelerator; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "DLIO start-up CPU (train disabled): $STARTUP s"
printf '%-9s %4s %10s %7s %-12s %8s %7s %8s\n' tool run samples/s "AU %" "AU/epoch" "cpu s" "wall s" "RSS MiB"
while read -r tool run sps au rest; do
    read -ra r <<<"$rest"
    n=${#r[@]}
    epochs=$(IFS=/; echo "${r[*]:0:n-3}")
    printf '%-9s %4s %10s %7s %-12s %8s %7s %8s\n' "$tool" "$run" "$sps" "$au" "$epochs" "${r[n-3]}" "${r[n-2]}" "${r[n-1]}"
done <"$ROWS"
