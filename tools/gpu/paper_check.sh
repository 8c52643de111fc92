#!/usr/bin/env bash
# tools/gpu/paper_check.sh OUTDIR [SECONDS]: the GPU check's second part, run from the repository root on
# the GPU machine after `bash gpu_bundle/run.sh` (which tests every kernel): the speed and file checks
# at the paper's sizes, within SECONDS (default 540), writing OUTDIR/paper_check.txt (every step's
# output; the table at its end).
#
#   1. our SSD op against mamba_ssm's Triton `mamba_chunk_scan_combined`, forward and forward+backward,
#      at the Fig. 1 and Fig. 9 shapes: time and error against a float64 reference
#      (//mimetic/experiments:ssd_gpu_benchmark, tools/bench/triton_ssd.py). Needs mamba_ssm's Triton
#      sources in .mamba_triton/mamba_ssm/ (public; fetched, never committed; see docs/gpu.md).
#   2. the paper-size run: configs/gpu_check.textproto (Fig. 1's paper model and 5000-step schedule, its first 300 steps
#      by --step_budget=300, both inits) on
#      the GPU, then tools/gpu/check_readers.py (TensorBoard's EventAccumulator, safetensors.torch,
#      load_state_dict under mamba_ssm's names, an independent PyTorch forward of the trained weights),
#      and the same run again, whose checkpoints must be identical (run-to-run determinism).
#   3. the training-step benchmark (gpu_benchmark) at Figs. 1, 9 and 3 against PyTorch eager and
#      torch.compile (the peer's fast scan cores only), with what is left of the time.
set -uo pipefail
OUT="${1:?usage: tools/gpu/paper_check.sh OUTDIR [SECONDS]}"
BUDGET="${2:-540}"
START=$SECONDS
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 2
mkdir -p "$OUT"
LOG="$OUT/paper_check.txt"
: >"$LOG"
left() { echo $((BUDGET - (SECONDS - START))); }
say() { echo "paper_check: $*" | tee -a "$LOG"; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
tar -xJf gpu_bundle/payload.tar.xz -C "$WORK" || { say "cannot unpack gpu_bundle/payload.tar.xz"; exit 2; }
P="$WORK/payload"
BIN="$P/runfiles/mimetic/mimetic/experiments"
export LD_LIBRARY_PATH="$P/lib:/usr/local/cuda/lib64"
export RUNFILES_DIR="$P/runfiles"
PY=python3
say "GPU: $(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader 2>&1)"
say "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cores"

# A Python that does not see the bundle's libraries (PyTorch brings its own CUDA).
py() { env -u LD_LIBRARY_PATH "$PY" "$@"; }

# 1. SSD op against Triton.
if [[ -x "$BIN/ssd_gpu_benchmark" && -d .mamba_triton/mamba_ssm ]]; then
  say "== SSD op vs mamba_chunk_scan_combined (budget left $(left)s)"
  mkdir -p "$WORK/ssd"
  timeout -k 5 120 "$BIN/ssd_gpu_benchmark" --preset=fig1,fig9 --out="$WORK/ssd" 2>&1 | tee "$WORK/ssd.log" >>"$LOG"
  timeout -k 5 170 env -u LD_LIBRARY_PATH "$PY" tools/bench/triton_ssd.py --mamba_path .mamba_triton --max_configs 4 \
    --mimetic_log "$WORK/ssd.log" "$WORK"/ssd/ssd_*.safetensors >>"$LOG" 2>&1
  say "SSD comparison exit code $?"
else
  say "== SSD comparison skipped: $BIN/ssd_gpu_benchmark or .mamba_triton/mamba_ssm missing"
fi

# 2. The paper-size run and the readers.
say "== paper-size run, configs/gpu_check.textproto (budget left $(left)s)"
RUNS="$WORK/runs"
t=$(($(left) - 150))
((t > 240)) && t=240
t0=$SECONDS
timeout -k 10 "$t" "$BIN/run_cuda" mimetic/experiments/configs/gpu_check.textproto --jobs=2 --plots=false \
  --step_budget=300 --set "output_dir=$RUNS" >>"$LOG" 2>&1
say "paper-size run exit code $? after $((SECONDS - t0))s (limit ${t}s)"
for m in "$RUNS"/gpu_check/points/*/seed1/metrics.jsonl; do
  [[ -f "$m" ]] || continue
  say "$m: $(wc -l <"$m") lines; last: $(tail -n 1 "$m")"
  grep '"eval/' "$m" >>"$LOG"
done
cat "$RUNS"/gpu_check/summary.md >>"$LOG" 2>/dev/null
cat "$RUNS"/gpu_check/points/*/seed1/progress.textproto >>"$LOG" 2>/dev/null
timeout -k 5 90 env -u LD_LIBRARY_PATH "$PY" tools/gpu/check_readers.py "$RUNS" >>"$LOG" 2>&1
say "readers exit code $?"
# Run-to-run determinism at the paper's size: the same run again must write the same checkpoints.
if (($(left) > 200)); then
  t0=$SECONDS
  timeout -k 10 120 "$BIN/run_cuda" mimetic/experiments/configs/gpu_check.textproto --jobs=2 --plots=false \
    --step_budget=300 --set "output_dir=$WORK/again" >>"$WORK/again.log" 2>&1
  say "paper-size run again: exit code $? after $((SECONDS - t0))s"
  for c in "$RUNS"/gpu_check/points/*/seed1/checkpoints/step_*.safetensors; do
    twin="$WORK/again/${c#"$RUNS"/}"
    if cmp -s "$c" "$twin"; then say "determinism: ${c#"$RUNS"/} identical in the second run"; else
      say "determinism: ${c#"$RUNS"/} DIFFERS in the second run"; fi
  done
fi

# 3. The training-step benchmark with what is left: Fig. 1 and Fig. 9 (Mamba 2) against the peer's
# chunked and quadratic SSD cores, Fig. 3 (Mamba 1) against its parallel scan, eager and torch.compile
# (the peer's reference cores, ssd_minimal and the step loop, are far slower on a GPU).
WRAP="$WORK/py"
printf '#!/bin/sh\nunset LD_LIBRARY_PATH\nexec %s "$@"\n' "$(command -v "$PY")" >"$WRAP"
chmod +x "$WRAP"
n=3
for spec in fig1:ssd_chunked,quadratic fig9:ssd_chunked,quadratic fig3:pscan; do
  b=$((($(left) - 10) / n))
  n=$((n - 1))
  if ((b < 30)); then
    say "== benchmark ${spec%%:*} skipped: ${b}s left"
    continue
  fi
  say "== training-step benchmark ${spec%%:*} (limit ${b}s)"
  (cd "$P/runfiles/mimetic" && timeout -k 5 "$b" "$BIN/gpu_benchmark" --device=cuda --preset="${spec%%:*}" \
    --scans="${spec#*:}" --python="$WRAP") >>"$LOG" 2>&1
  say "benchmark ${spec%%:*} exit code $?"
done
say "done in $((SECONDS - START))s"
grep -E '^\[(ssd|ssd_peer|readers|[a-z0-9_]+)\] |^paper_check:' "$LOG" | tail -n 60
