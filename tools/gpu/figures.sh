#!/usr/bin/env bash
# tools/gpu/figures.sh OUTDIR SECONDS FIGURE... [-- FIGURE_FLAGS...]: runs figures' sweeps on the GPU
# machine, from the repository root, with the bundle's figure_cuda (tools/gpu/bundle.sh), the figures one
# after another in the order given, all within SECONDS, and packs what a figure's results are made of into
# OUTDIR/runs.tgz (every run file except checkpoints) with OUTDIR/figures.txt (the log). Back on a
# machine with the checkout, unpack runs.tgz into runs/ and judge and keep the results there:
#
#   tar -xzf runs.tgz -C runs && tools/bazel run //mimetic/experiments:figure -- \
#     --figure=scaling --preset=gpu --aggregate --save_results --results_note="trained on an H100 (tools/gpu/figures.sh)"
#
# A sweep's device is not part of its identity, so the CPU-side --aggregate accepts the GPU's points. A
# figure stopped by the time limit keeps its finished points (SIGTERM; each running point checkpoints), and
# runs.tgz holds them. FIGURE_FLAGS go to every figure (default --preset=cpu --jobs=4). The environment
# may move the bundle (MIMETIC_BUNDLE_DIR, default gpu_bundle/), its unpacked payload
# (MIMETIC_PAYLOAD_DIR, default /tmp/mimetic-payload) and the runs (MIMETIC_RUNS_DIR, default runs/).
set -uo pipefail
OUT="${1:?usage: tools/gpu/figures.sh OUTDIR SECONDS FIGURE... [-- FIGURE_FLAGS...]}"
BUDGET="${2:?usage: tools/gpu/figures.sh OUTDIR SECONDS FIGURE... [-- FIGURE_FLAGS...]}"
shift 2
FIGURES=()
while (($# > 0)) && [[ "$1" != "--" ]]; do
  FIGURES+=("$1")
  shift
done
[[ "${1:-}" == "--" ]] && shift
FLAGS=("$@")
((${#FLAGS[@]} > 0)) || FLAGS=(--preset=cpu --jobs=4)
((${#FIGURES[@]} > 0)) || { echo "figures.sh: name at least one figure" >&2; exit 2; }

START=$SECONDS
PACK_SECONDS=25  # tar of the runs, kept out of the figures' time
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 2
mkdir -p "$OUT"
LOG="$OUT/figures.txt"
: >"$LOG"
left() { echo $((BUDGET - PACK_SECONDS - (SECONDS - START))); }
say() { echo "figures: $*" | tee -a "$LOG"; }

BUNDLE="${MIMETIC_BUNDLE_DIR:-$ROOT/gpu_bundle}"
WORK="${MIMETIC_PAYLOAD_DIR:-/tmp/mimetic-payload}"
if [[ ! -x "$WORK/payload/runfiles/mimetic/mimetic/experiments/figure_cuda" ]]; then
  mkdir -p "$WORK"
  tar -xJf "$BUNDLE/payload.tar.xz" -C "$WORK" || { say "cannot unpack $BUNDLE/payload.tar.xz"; exit 2; }
fi
P="$WORK/payload"
BIN="$P/runfiles/mimetic/mimetic/experiments/figure_cuda"
[[ -x "$BIN" ]] || { say "the bundle has no figure_cuda (rebuild it with tools/gpu/bundle.sh)"; exit 2; }
export LD_LIBRARY_PATH="$P/lib:/usr/local/cuda/lib64"
export RUNFILES_DIR="$P/runfiles"
RUNS="${MIMETIC_RUNS_DIR:-$ROOT/runs}"
mkdir -p "$RUNS"
say "GPU: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1)"
say "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cores; flags: ${FLAGS[*]}"

for f in "${FIGURES[@]}"; do
  t=$(left)
  if ((t < 20)); then
    say "$f: not started, ${t}s left"
    continue
  fi
  t0=$SECONDS
  # SIGTERM first: the figure stops its points at their next step, each checkpointing, and says so.
  timeout -s TERM -k 20 "$t" "$BIN" --figure="$f" --set device=cuda --output_dir="$RUNS" "${FLAGS[@]}" \
    >"$OUT/$f.log" 2>&1
  rc=$?
  say "$f: exit code $rc after $((SECONDS - t0))s (limit ${t}s)"
  tail -n 5 "$OUT/$f.log" | sed 's/^/  /' | tee -a "$LOG"
done

# Every point's small files: results, metrics, configs, progress, final maps; no checkpoints.
tar -czf "$OUT/runs.tgz" -C "$RUNS" --exclude='*.safetensors' --exclude='*.lock' . 2>>"$LOG"
say "runs.tgz: $(du -h "$OUT/runs.tgz" | cut -f1), $(find "$RUNS" -name result.textproto | wc -l) finished points"
cat "$OUT"/*.log >"$OUT/figure_logs.txt" 2>/dev/null
rm -f "$OUT"/*.log
say "done after $((SECONDS - START))s of ${BUDGET}s"
