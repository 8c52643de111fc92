#!/usr/bin/env bash
# tools/gpu/campaign.sh OUTDIR SECONDS [ITEM_ID...]: one slice of the campaign (docs/gpu.md, "The campaign"),
# run on the GPU machine from the repository root, with the bundle (tools/gpu/bundle.sh) beside it as
# gpu_bundle/. It walks the plan's FIGURE items (mimetic/experiments/campaign/plan.textproto) in order, or
# only the ITEM_IDs given, within SECONDS; for each:
#   1. makes the figure's run directory from the checkout: its kept results (finished points are skipped)
#      and the campaign's in-flight points (campaign/inflight/<figure>_<preset>/: config, progress and the
#      newest checkpoint each), so stopped points resume (`campaign_tool --prepare`);
#   2. trains the item's unfinished points (--points=<its regex>, --jobs, --step_budget) with the bundle's
#      figure_cuda under `timeout -s TERM`: at the limit every running point checkpoints and stops;
#   3. when stopped, draws the figure from what finished (--aggregate), so finished points get their
#      final_maps.pb.
# An item starts only when its unfinished points' share of its estimate (the plan's device_minutes) fits
# in the time left; otherwise the next items are tried. Then it packs what the slice made
# (`campaign_tool --pack`: new finished points with result.textproto, final_maps.pb, config.textproto;
# points in flight with config, progress and their newest checkpoint, unless that is larger than
# MIMETIC_CAMPAIGN_MAX_CHECKPOINT_MB (default 15) or would take a figure's packed checkpoints over
# MIMETIC_CAMPAIGN_MAX_INFLIGHT_MB (default 40, shared among the figures); each with provenance.textproto: GPU, date, commit, model
# digest) into OUTDIR/campaign.tgz (campaign/<figure>/<preset>/...; split into 15 MiB campaign.tgz.part*
# when larger), with the log OUTDIR/campaign.txt and the figures' output OUTDIR/figure_logs.txt. Bring
# OUTDIR back and merge it on the checkout:
#   tools/bazel run //mimetic/experiments:campaign_tool -- --merge=/path/to/OUTDIR
# CHECK items are printed (run them first, by hand); PENDING and FUTURE items are passed over.
#
# The environment may change: MIMETIC_BUNDLE_DIR (default gpu_bundle/), MIMETIC_PAYLOAD_DIR (where it is
# unpacked, default /tmp/mimetic-payload), MIMETIC_CAMPAIGN_RUNS (the run directories, default
# runs/campaign/), MIMETIC_CAMPAIGN_PLAN (the plan). For a test on a machine without a GPU:
# MIMETIC_FIGURE_BIN and MIMETIC_CAMPAIGN_BIN (the CPU binaries instead of the bundle's) and
# MIMETIC_DEVICE_FLAGS (default "--set device=cuda"; empty for the CPU).
# The model digest (tools/gpu/model_digest.sh) comes from the bundle (payload/model_digest.txt, recorded
# by bundle.sh where .git is) or, without a bundle, from this checkout's .git; the commit likewise.
set -uo pipefail
usage="usage: tools/gpu/campaign.sh OUTDIR SECONDS [ITEM_ID...]"
OUT="${1:?$usage}"
BUDGET="${2:?$usage}"
shift 2
ONLY=("$@")
START=$SECONDS
PACK_SECONDS=${MIMETIC_CAMPAIGN_PACK_SECONDS:-40}  # aggregate and pack, kept out of the training's time
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT" || exit 2
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
LOG="$OUT/campaign.txt"
: >"$LOG"
left() { echo $((BUDGET - PACK_SECONDS - (SECONDS - START))); }
say() { echo "campaign: $*" | tee -a "$LOG"; }

if [[ -n "${MIMETIC_FIGURE_BIN:-}" ]]; then
  FIGURE_BIN="$MIMETIC_FIGURE_BIN"
  TOOL_BIN="${MIMETIC_CAMPAIGN_BIN:?MIMETIC_FIGURE_BIN needs MIMETIC_CAMPAIGN_BIN beside it}"
  BUILD_INFO=""
else
  BUNDLE="${MIMETIC_BUNDLE_DIR:-$ROOT/gpu_bundle}"
  WORK="${MIMETIC_PAYLOAD_DIR:-/tmp/mimetic-payload}"
  BIN_DIR="$WORK/payload/runfiles/mimetic/mimetic/experiments"
  if [[ ! -x "$BIN_DIR/figure_cuda" || ! -x "$BIN_DIR/campaign_tool" ]]; then
    mkdir -p "$WORK"
    tar -xJf "$BUNDLE/payload.tar.xz" -C "$WORK" || { say "cannot unpack $BUNDLE/payload.tar.xz"; exit 2; }
  fi
  FIGURE_BIN="$BIN_DIR/figure_cuda"
  TOOL_BIN="$BIN_DIR/campaign_tool"
  [[ -x "$FIGURE_BIN" && -x "$TOOL_BIN" ]] || { say "the bundle has no figure_cuda or campaign_tool (rebuild it)"; exit 2; }
  export LD_LIBRARY_PATH="$WORK/payload/lib:/usr/local/cuda/lib64"
  export RUNFILES_DIR="$WORK/payload/runfiles"
  BUILD_INFO="$WORK/payload"
fi
read -r -a DEVICE_FLAGS <<<"${MIMETIC_DEVICE_FLAGS---set device=cuda}"
RUNS="${MIMETIC_CAMPAIGN_RUNS:-$ROOT/runs/campaign}"
# What a slice sends back stays small (docs/gpu.md, "What travels"): 15 MiB parts, 64 MiB in all: one checkpoint of at most
# 15 MB, and the checkpoints of the points in flight at most 40 MB in all, leave room for the rest.
MAX_CHECKPOINT_MB="${MIMETIC_CAMPAIGN_MAX_CHECKPOINT_MB:-15}"
MAX_INFLIGHT_MB="${MIMETIC_CAMPAIGN_MAX_INFLIGHT_MB:-40}"
PLAN="${MIMETIC_CAMPAIGN_PLAN:-$ROOT/mimetic/experiments/campaign/plan.textproto}"
mkdir -p "$RUNS"

# Where this slice trains, recorded with every point it packs.
DEVICE="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)"
[[ -n "$DEVICE" ]] || DEVICE=cpu
if [[ -n "$BUILD_INFO" && -s "$BUILD_INFO/model_digest.txt" ]]; then
  DIGEST="$(cat "$BUILD_INFO/model_digest.txt")"
  COMMIT="$(sed -n 's/.* from \([^;]*\);.*/\1/p' "$BUILD_INFO/build_info.txt" | head -n 1)"
else
  DIGEST="$(bash "$ROOT/tools/gpu/model_digest.sh" "$ROOT")" || {
    say "no model digest: the bundle has none (payload/model_digest.txt) and this is no git checkout"
    exit 2
  }
  COMMIT="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
fi
say "device: $DEVICE; commit $COMMIT; model digest $DIGEST; budget ${BUDGET}s"

PLAN_TSV="$(mktemp "${TMPDIR:-/tmp}/mimetic-plan.XXXXXX")"  # not in OUT: OUT holds only what goes back
trap 'rm -f "$PLAN_TSV"' EXIT
if ! "$TOOL_BIN" --root="$ROOT" --plan="$PLAN" --list >"$PLAN_TSV" 2>>"$LOG"; then
  say "the plan does not load (see above)"
  exit 2
fi
wanted() {
  ((${#ONLY[@]} == 0)) && return 0
  local id
  for id in "${ONLY[@]}"; do [[ "$id" == "$1" ]] && return 0; done
  return 1
}

TOUCHED=()  # "figure preset" of every run directory this slice prepared
stopped=0
while IFS=$'\t' read -r kind id figure preset points jobs step_budget minutes command; do
  wanted "$id" || continue
  case "$kind" in
    CHECK) say "check $id (run it by hand, first): $command"; continue ;;
    PENDING) say "$id: pending (its points are chosen from an earlier item's results; see the plan)"; continue ;;
    FUTURE) say "$id: future (see the plan)"; continue ;;
  esac
  t=$(left)
  if ((stopped || t < 30)); then
    say "$id: not started, ${t}s left (about ${minutes} min of device time needed)"
    continue
  fi
  prepared="$("$TOOL_BIN" --root="$ROOT" --plan="$PLAN" --prepare --figure="$figure" --preset="$preset" \
    --runs="$RUNS" --model_digest="$DIGEST" --points="$points" 2>>"$LOG" </dev/null)" || {
    say "$id: cannot prepare its run directory (see $LOG)"
    continue
  }
  IFS=$'\t' read -r run_dir unfinished selected <<<"$prepared"
  [[ " ${TOUCHED[*]} " == *" $figure:$preset "* ]] || TOUCHED+=("$figure:$preset")
  if ((unfinished == 0)); then
    say "$id: all $selected of its points have finished"
    continue
  fi
  # Its share of the estimate must fit: a point stopped part-way costs its checkpoint's transfer, and one
  # too large to come back (MIMETIC_CAMPAIGN_MAX_*_MB) is lost. A later, smaller item may fit.
  need=$(awk -v m="$minutes" -v u="$unfinished" -v s="$selected" 'BEGIN { printf "%d", m * 60 * u / s }')
  if ((need > t)); then
    say "$id: $unfinished of $selected points left, about ${need}s of device time; only ${t}s left: next slice"
    continue
  fi
  flags=(--figure="$figure" --preset="$preset" --output_dir="$RUNS" --points="$points" --jobs="$jobs")
  ((step_budget > 0)) && flags+=(--step_budget="$step_budget")
  say "$id: training $unfinished of $selected points (about ${need}s estimated, limit ${t}s)"
  t0=$SECONDS
  # </dev/null: nothing a binary reads may take the plan's lines from this loop.
  timeout -s TERM -k 60 "$t" "$FIGURE_BIN" "${flags[@]}" "${DEVICE_FLAGS[@]}" >>"$OUT/$id.log" 2>&1 </dev/null
  rc=$?
  say "$id: $figure --preset=$preset --points='$points': exit code $rc after $((SECONDS - t0))s (limit ${t}s; $run_dir)"
  tail -n 4 "$OUT/$id.log" | sed 's/^/  /' | tee -a "$LOG"
  if ((rc != 0)); then
    # Stopped at the limit (or failed): draw from what finished, so finished points get final_maps.pb.
    "$FIGURE_BIN" --figure="$figure" --preset="$preset" --output_dir="$RUNS" --aggregate "${DEVICE_FLAGS[@]}" \
      >>"$OUT/$id.log" 2>&1 </dev/null
    say "$id: --aggregate exit code $?"
    ((rc == 124 || rc == 143)) && stopped=1
  fi
done <"$PLAN_TSV"

rm -rf "$OUT/campaign" "$OUT"/campaign.tgz*
# The in-flight allowance is shared among the figures this slice touched.
per_figure_mb=$(awk -v m="$MAX_INFLIGHT_MB" -v n="${#TOUCHED[@]}" 'BEGIN { printf "%.1f", (n > 0 ? m / n : m) }')
for fp in "${TOUCHED[@]}"; do
  "$TOOL_BIN" --root="$ROOT" --plan="$PLAN" --pack --figure="${fp%%:*}" --preset="${fp#*:}" --runs="$RUNS" \
    --out="$OUT/campaign" --device="$DEVICE" --commit="$COMMIT" --model_digest="$DIGEST" \
    --max_checkpoint_mb="$MAX_CHECKPOINT_MB" --max_inflight_mb="$per_figure_mb" 2>&1 | tee -a "$LOG"
done
# One archive (few files go back, each at most 15 MiB): split into 15 MiB parts when larger;
# the merge joins campaign.tgz.part* in order.
if [[ -d "$OUT/campaign" ]]; then
  tar -czf "$OUT/campaign.tgz" -C "$OUT" campaign && rm -rf "$OUT/campaign"
  if (($(stat -c %s "$OUT/campaign.tgz") > 15 * 1024 * 1024)); then
    split -b 15M -d "$OUT/campaign.tgz" "$OUT/campaign.tgz.part" && rm -f "$OUT/campaign.tgz"
  fi
  say "packed: $(ls "$OUT" | grep '^campaign.tgz' | tr '\n' ' ')($(du -ch "$OUT"/campaign.tgz* | tail -n 1 | cut -f1))"
else
  say "nothing to pack: no point was trained"
fi
cat "$OUT"/*.log >"$OUT/figure_logs.txt" 2>/dev/null
rm -f "$OUT"/*.log
say "done after $((SECONDS - START))s of ${BUDGET}s; merge on the checkout with:" \
  "tools/bazel run //mimetic/experiments:campaign_tool -- --merge=/path/to/$(basename "$OUT")"
