#!/usr/bin/env bash
# The Slurm launcher against real Slurm daemons: brings up a single-node cluster on this machine
# (slurm_test_cluster.sh: munged, slurmctld, slurmd under a temporary directory), then
#   1. submits Fig. 1's smoke preset (4 grid points) with --launcher=slurm, waits for the array,
#      checks every element completed and every point has its result, and aggregates (figure, claims);
#   2. submits a longer version of the same grid, cancels one element mid-run (after its first
#      checkpoints), resubmits (only that point goes out again, and it resumes from its checkpoint),
#      and checks that every point's result equals that of an uninterrupted local run of the grid;
# and shuts the daemons down by their pid files. Prints SKIPPED with the reason, and passes, where
# Slurm is not installed or this is not root.
#
#   tools/bazel test //mimetic/experiments:slurm_integration_test --test_output=streamed
set -euo pipefail

here="${TEST_SRCDIR:-$0.runfiles}/mimetic/mimetic/experiments"
cluster="$here/slurm_test_cluster.sh"
figure="$here/figure"

if ! reason="$(bash "$cluster" check)"; then
  echo "SKIPPED: $reason"
  exit 0
fi
export PATH="/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

# Short paths under /tmp: a unix socket's path (munge's) holds at most 107 characters.
tmp="$(mktemp -d /tmp/mimetic-slurm-test.XXXXXX)"
cleanup() {
  bash "$cluster" down "$tmp/cluster" || true
  if [[ "${KEEP_SLURM_TEST_DIR:-0}" == 1 ]]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  for f in "$tmp"/cluster/log/*.log; do
    echo "--- $f (last 20 lines)"
    tail -n 20 "$f"
  done
  exit 1
}

eval "$(bash "$cluster" up "$tmp/cluster")"
echo "cluster up: $(sinfo --noheader --format='%P %D node(s) %c cpus %t')"

# Submits with the figure binary; prints its output; sets `job` to the job id.
submit() {
  local out
  out="$("$figure" --figure=fig1 --preset=smoke --launcher=slurm "$@" 2>&1)" || fail "submission failed: $out"
  echo "$out"
  job="$(sed -n 's/.*submitted Slurm job \([0-9]*\),.*/\1/p' <<<"$out")"
  [[ -n "$job" ]] || fail "no job id in: $out"
}

# Waits until no element of job $1 is pending or running (at most $2 seconds).
wait_job() {
  local deadline=$((SECONDS + $2))
  while [[ -n "$(squeue --noheader --jobs="$1" 2>/dev/null)" ]]; do
    ((SECONDS < deadline)) || fail "job $1 still queued or running after $2 s: $(squeue --jobs="$1")"
    sleep 1
  done
}

# "K STATE EXITCODE" per array element of job $1 (slurmctld keeps finished jobs for MinJobAge).
element_states() {
  scontrol --oneliner show job "$1" |
    sed -n 's/.*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\).*/\1 \2 \3/p' | sort -n
}

# A result.textproto without its wall time, which differs from run to run.
result() { grep -v '^seconds:' "$1/result.textproto"; }

echo "== 1. a 4-point sweep as one job array"
runs="$tmp/runs"
submit --output_dir="$runs"
[[ "$(grep -c '^#SBATCH --array=0-3$' "$runs/fig1_smoke/slurm.sbatch")" == 1 ]] || fail "script without --array=0-3"
wait_job "$job" 300
states="$(element_states "$job")"
echo "$states"
[[ "$(grep -c ' COMPLETED 0:0$' <<<"$states")" == 4 ]] || fail "not every element completed: $states"
points=("$runs"/fig1_smoke/points/*/seed*)
[[ ${#points[@]} == 4 ]] || fail "expected 4 point directories, found ${#points[@]}"
for p in "${points[@]}"; do
  [[ -f "$p/result.textproto" ]] || fail "$p has no result: $(tail -n 5 "$p/progress.log")"
  grep -q '^final_loss: ' "$p/result.textproto" || fail "$p/result.textproto has no final_loss"
done
agg="$("$figure" --figure=fig1 --preset=smoke --aggregate --output_dir="$runs" 2>&1)" || fail "aggregate: $agg"
echo "$agg"
grep -q '4 claims' <<<"$agg" || fail "the aggregate judged no claims"
for f in figure.png claims.md summary.csv summary.md runs.csv; do
  [[ -s "$runs/fig1_smoke/$f" ]] || fail "aggregate wrote no $f"
done
if grep -q 'Not finished' "$runs/fig1_smoke/summary.md"; then fail "summary lists unfinished points"; fi
# Submitting again finds nothing to do.
again="$("$figure" --figure=fig1 --preset=smoke --launcher=slurm --output_dir="$runs" 2>&1)"
grep -q 'every grid point has finished; nothing was submitted' <<<"$again" || fail "resubmission: $again"

echo "== 2. an element cancelled mid-run, then resubmitted"
long=(--noplots --set train.steps=3000 --set train.checkpoint_every=100 --set train.eval_every=1000
  --set train.log_every=100)
killed="$tmp/killed"
submit --output_dir="$killed" "${long[@]}"
victim="$killed/fig1_smoke/points/mimetic/seed1"  # grid point 1
# Cancelled past its evaluation at step 1000, so the resumed run must also keep the curve it had.
newest_step() { ls "$victim/checkpoints" 2>/dev/null | sed -n 's/^step_0*\([0-9][0-9]*\)\.safetensors$/\1/p' | sort -n | tail -n 1; }
deadline=$((SECONDS + 300))
until (($(newest_step || true) + 0 >= 1100)); do
  ((SECONDS < deadline)) || fail "grid point 1 reached no checkpoint at step >= 1100 in 300 s"
  sleep 0.1
done
[[ ! -f "$victim/result.textproto" ]] || fail "grid point 1 finished before it could be cancelled; lengthen it"
# A second submission while this array runs would give its points a second writer: refused.
if twice="$("$figure" --figure=fig1 --preset=smoke --launcher=slurm --output_dir="$killed" "${long[@]}" 2>&1)"; then
  fail "a second submission while job $job runs was accepted: $twice"
fi
grep -q "Slurm job $job of this sweep is still queued or running" <<<"$twice" || fail "unexpected refusal: $twice"
scancel "${job}_1"
echo "cancelled element ${job}_1 after its checkpoint at step $(newest_step)"
wait_job "$job" 300
echo "$(element_states "$job")"
[[ ! -f "$victim/result.textproto" ]] || fail "the cancelled point has a result"
agg="$("$figure" --figure=fig1 --preset=smoke --aggregate --output_dir="$killed" "${long[@]}" 2>&1)" ||
  fail "aggregate: $agg"
grep -q 'Not finished (1): points/mimetic/seed1' "$killed/fig1_smoke/summary.md" ||
  fail "the aggregate does not list the cancelled point: $(cat "$killed/fig1_smoke/summary.md")"
submit --output_dir="$killed" "${long[@]}"
grep -q '^#SBATCH --array=1$' "$killed/fig1_smoke/slurm.sbatch" || fail "the resubmission is not --array=1"
wait_job "$job" 300
grep -q 'resuming from step' "$victim/progress.log" || fail "point 1 did not resume: $(tail "$victim/progress.log")"
grep 'resuming from step' "$victim/progress.log"
"$figure" --figure=fig1 --preset=smoke --aggregate --output_dir="$killed" "${long[@]}" >/dev/null 2>&1 ||
  fail "aggregate after the resubmission"

echo "== the same grid run locally without interruption (one thread, as each element had)"
local_dir="$tmp/local"
"$figure" --figure=fig1 --preset=smoke --output_dir="$local_dir" --threads=1 "${long[@]}" >/dev/null 2>&1 ||
  fail "the local run failed"
for p in "$local_dir"/fig1_smoke/points/*/seed*; do
  rel="${p#"$local_dir/"}"
  diff <(result "$p") <(result "$killed/$rel") >/dev/null || fail "$rel differs: $(diff <(result "$p") <(result "$killed/$rel"))"
  echo "identical: $rel ($(grep '^final_loss' "$p/result.textproto"))"
done
cmp "$local_dir/fig1_smoke/summary.csv" "$killed/fig1_smoke/summary.csv" || fail "summary.csv differs"
echo "PASSED"
