#!/usr/bin/env bash
# The campaign's whole loop on the CPU (docs/gpu.md, "The campaign"), at Fig. 1's smoke preset: two slices
# of tools/gpu/campaign.sh on two fresh clones of a minimal checkout, each merged with
# `campaign_tool --merge`, with the CPU binaries standing in for the bundle's.
#   slice 1 (clone A): trains seed 1 of both inits to the end and stops mimetic seed 2 after 3 of its 6
#     steps (a plan item's step_budget: a deterministic stop; the SIGTERM stop is the runner's own,
#     runner_test and the resume guarantee); merged into A: 2 of 4 points kept, claims provisional, 1 in
#     flight, README coverage "2 of 4 points, 1 in flight"; committed.
#   slice 2 (clone B of A): resumes mimetic seed 2 from its step-3 checkpoint, trains default seed 2, and
#     trains nothing else (each point is trained once: the logs say so); merged into B: 4 of 4, no point in
#     flight, and claims.json equal to a single uninterrupted `figure --figure=fig1 --preset=smoke` run's.
#   refusals (clone C): a returned point whose config differs, and a checkout whose model code differs,
#     are refused naming both values, and the checkout is left as it was.
set -euo pipefail

RUNFILES="${RUNFILES_DIR:-$TEST_SRCDIR}"
SRC="$RUNFILES/mimetic"
FIGURE="$SRC/mimetic/experiments/figure"
TOOL="$SRC/mimetic/experiments/campaign_tool"
T="${TEST_TMPDIR:-$(mktemp -d)}/loop"
rm -rf "$T"
mkdir -p "$T"
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
expect_in() {  # expect_in FILE TEXT
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$1' lacks: $2"; }
}

# A minimal checkout: the scripts, a plan, a README with the coverage markers, model code for the digest.
ORIGIN="$T/origin"
mkdir -p "$ORIGIN/tools/gpu" "$ORIGIN/mimetic/experiments/campaign" "$ORIGIN/mimetic/models"
cp "$SRC/tools/gpu/campaign.sh" "$SRC/tools/gpu/model_digest.sh" "$ORIGIN/tools/gpu/"
echo "// the model code" >"$ORIGIN/mimetic/models/model.cc"
cat >"$ORIGIN/mimetic/experiments/campaign/plan.textproto" <<'PLAN'
items { id: "seed1" kind: FIGURE figure: "fig1" preset: "smoke" points: "/seed1$" device_minutes: 0.1 speed: "seconds on a CPU" why: "slice 1 trains these to the end" }
items { id: "mimetic_seed2_half" kind: FIGURE figure: "fig1" preset: "smoke" points: "^points/mimetic/seed2$" step_budget: 3 device_minutes: 0.1 speed: "seconds on a CPU" why: "3 of its 6 steps per slice: stopped mid-way by slice 1, finished by slice 2" }
items { id: "rest" kind: FIGURE figure: "fig1" preset: "smoke" points: "^points/" device_minutes: 0.1 speed: "seconds on a CPU" why: "the rest of the grid" }
PLAN
printf '# test checkout\n\n<!-- campaign coverage: written by `campaign_tool --merge` and `campaign_tool --coverage` (mimetic/experiments/campaign/readme_coverage.h); do not edit by hand -->\n<!-- end of campaign coverage -->\n' >"$ORIGIN/README.md"
git_quiet() { git -c user.name=test -c user.email=test@example.com "$@" >/dev/null; }
git_quiet -C "$ORIGIN" init -q
git_quiet -C "$ORIGIN" add -A
git_quiet -C "$ORIGIN" commit -q -m "minimal checkout"

export MIMETIC_FIGURE_BIN="$FIGURE" MIMETIC_CAMPAIGN_BIN="$TOOL" MIMETIC_DEVICE_FLAGS=""
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
slice() {  # slice CHECKOUT OUT [ITEM...]
  local checkout="$1" out="$2"
  shift 2
  MIMETIC_CAMPAIGN_RUNS="$T/runs_$(basename "$out")" bash "$checkout/tools/gpu/campaign.sh" "$out" 600 "$@" \
    >"$out.stdout" 2>&1 || { cat "$out.stdout" >&2; fail "campaign.sh $out"; }
}
merge() {  # merge CHECKOUT OUT
  "$TOOL" --root="$1" --merge="$2" >"$2.merge" 2>&1
}
KEPT=mimetic/experiments/figures/fig1/results/smoke
INFLIGHT=mimetic/experiments/campaign/inflight/fig1_smoke

# Slice 1 on clone A.
git clone -q "$ORIGIN" "$T/a"
slice "$T/a" "$T/out1" seed1 mimetic_seed2_half
unpack() {  # unpack OUT DIR: a slice's archive, for the test to look into (the merge unpacks its own)
  mkdir -p "$2" && tar -xzf "$1/campaign.tgz" -C "$2"
}
unpack "$T/out1" "$T/look1"
R1="$T/look1/campaign/fig1/smoke/points"
for p in default/seed1 mimetic/seed1; do
  for f in result.textproto final_maps.pb config.textproto provenance.textproto; do
    [[ -f "$R1/$p/$f" ]] || fail "slice 1 did not pack $p/$f"
  done
done
[[ -f "$R1/mimetic/seed2/checkpoints/step_00000003.safetensors" ]] || fail "slice 1 did not stop mimetic seed 2 at step 3"
[[ ! -e "$R1/mimetic/seed2/result.textproto" && ! -e "$R1/default/seed2" ]] || fail "slice 1 packed more than it made"
expect_in "$R1/mimetic/seed2/provenance.textproto" 'device: "cpu"'
expect_in "$R1/mimetic/seed2/provenance.textproto" "model_digest: \"$(bash "$T/a/tools/gpu/model_digest.sh" "$T/a")\""

# Merged into A: a partial grid, judged provisionally; the in-flight point kept with its checkpoint.
merge "$T/a" "$T/out1" || { cat "$T/out1.merge" >&2; fail "merge of slice 1"; }
expect_in "$T/out1.merge" "fig1 \`smoke\`: 2 new points, 2 of 4 kept, 1 in flight"
expect_in "$T/a/$KEPT/claims.md" "Points judged: 2 of 4 grid points"
expect_in "$T/a/$KEPT/claims.md" "provisional"
[[ -f "$T/a/$KEPT/points/mimetic/seed1/provenance.textproto" ]] || fail "no provenance kept"
[[ -f "$T/a/$INFLIGHT/points/mimetic/seed2/checkpoints/step_00000003.safetensors" ]] || fail "no in-flight checkpoint"
expect_in "$T/a/README.md" "Fig. 1 \`smoke\`: 2 of 4 points, 1 in flight; provisional: "
git_quiet -C "$T/a" add -A
git_quiet -C "$T/a" commit -q -m "slice 1 merged"

# Slice 2 on a fresh clone of A: every item, in order.
git clone -q "$T/a" "$T/b"
slice "$T/b" "$T/out2"
LOGS="$T/out2/figure_logs.txt"
expect_in "$LOGS" "resuming from step 3"
[[ $(grep -c "resuming from step" "$LOGS") == 1 ]] || fail "slice 2 resumed more than mimetic seed 2"
unpack "$T/out2" "$T/look2"
R2="$T/look2/campaign/fig1/smoke/points"
[[ -f "$R2/mimetic/seed2/result.textproto" && -f "$R2/default/seed2/result.textproto" ]] || fail "slice 2 did not finish seed 2"
[[ ! -e "$R2/default/seed1" && ! -e "$R2/mimetic/seed1" ]] || fail "slice 2 packed points it did not train"
# Nothing trained twice: seed 1's kept results are the ones slice 1 made, and each point trained its 6
# steps once in all (3 + 3 for the resumed one: its metrics log of slice 2 starts after step 3).
cmp -s "$T/a/$KEPT/points/mimetic/seed1/result.textproto" "$T/runs_out2/fig1_smoke/points/mimetic/seed1/result.textproto" ||
  fail "mimetic seed 1 changed in slice 2"
first_step=$(grep -o '"step": *[0-9]*' "$T/runs_out2/fig1_smoke/points/mimetic/seed2/metrics.jsonl" | head -n 1 | grep -o '[0-9]*$')
((first_step > 3)) || fail "mimetic seed 2's slice-2 log starts at step $first_step, not after 3"
merge "$T/b" "$T/out2" || { cat "$T/out2.merge" >&2; fail "merge of slice 2"; }
expect_in "$T/out2.merge" "fig1 \`smoke\`: 2 new points, 4 of 4 kept, 0 in flight"
[[ ! -e "$T/b/$INFLIGHT" ]] || fail "the in-flight folder outlived its last point"
expect_in "$T/b/$KEPT/claims.md" "Points judged: all 4 grid points"
expect_in "$T/b/README.md" "Fig. 1 \`smoke\`: 4 of 4 points; "

# The merged claims equal a single uninterrupted run's.
"$FIGURE" --figure=fig1 --preset=smoke --output_dir="$T/whole" >"$T/whole.log" 2>&1 || { cat "$T/whole.log" >&2; fail "whole run"; }
cmp "$T/b/$KEPT/claims.json" "$T/whole/fig1_smoke/claims.json" || {
  diff "$T/b/$KEPT/claims.json" "$T/whole/fig1_smoke/claims.json" >&2
  fail "merged claims.json differs from the uninterrupted run's"
}

# Refusals, on a fresh clone C of A; the checkout must be left as it was.
git clone -q "$T/a" "$T/c"
unpack "$T/out2" "$T/bad_config"
sed -i 's/lr: 0.002/lr: 0.005/' "$T/bad_config/campaign/fig1/smoke/points/default/seed2/config.textproto"
if merge "$T/c" "$T/bad_config"; then fail "a point trained from another config was merged"; fi
expect_in "$T/bad_config.merge" "points/default/seed2 was trained from another config than the checkout's preset"
expect_in "$T/bad_config.merge" "0.002 -> 0.005"
echo "// changed" >>"$T/c/mimetic/models/model.cc"
git_quiet -C "$T/c" commit -q -am "other model code"
if merge "$T/c" "$T/out2"; then fail "a point trained with other model code was merged"; fi
expect_in "$T/out2.merge" "was trained with other model code: its provenance says model digest '$(bash "$T/a/tools/gpu/model_digest.sh" "$T/a")'"
expect_in "$T/out2.merge" "the checkout's is '$(bash "$T/c/tools/gpu/model_digest.sh" "$T/c")'"
[[ -z "$(git -C "$T/c" status --porcelain)" ]] || fail "a refused merge changed the checkout: $(git -C "$T/c" status --porcelain)"

# A point in flight whose checkpoint is over the pack limit is named and not packed.
git clone -q "$ORIGIN" "$T/f"
MIMETIC_CAMPAIGN_MAX_CHECKPOINT_MB=0.001 slice "$T/f" "$T/small" mimetic_seed2_half
expect_in "$T/small/campaign.txt" "not packed (the next slice starts it afresh)"
expect_in "$T/small/campaign.txt" "points/mimetic/seed2 ("
expect_in "$T/small/campaign.txt" "nothing to pack"

# What comes back is copied only by the safe routine: an archive is unpacked outside the checkout (whole,
# or joined from the parts campaign.sh splits a large one into) and then copied like a folder; a link
# where a returned file is, or an impossible result, refuses the merge.
git clone -q "$ORIGIN" "$T/d"
mkdir -p "$T/parts"
split -b 2k -d "$T/out1/campaign.tgz" "$T/parts/campaign.tgz.part"
(($(ls "$T/parts" | wc -l) > 1)) || fail "the archive was not split"
merge "$T/d" "$T/parts" || { cat "$T/parts.merge" >&2; fail "merge of slice 1 from parts"; }
expect_in "$T/parts.merge" "fig1 \`smoke\`: 2 new points, 2 of 4 kept, 1 in flight"
cmp "$T/d/$KEPT/claims.json" "$T/a/$KEPT/claims.json" || fail "merging from parts judged differently"
git clone -q "$ORIGIN" "$T/e"
unpack "$T/out1" "$T/linked"
ln -sf /etc/passwd "$T/linked/campaign/fig1/smoke/points/default/seed1/result.textproto"
if merge "$T/e" "$T/linked"; then fail "a returned link was merged"; fi
expect_in "$T/linked.merge" "points/default/seed1/result.textproto' is a symbolic link"
mkdir -p "$T/linked_tgz"
tar -czf "$T/linked_tgz/campaign.tgz" -C "$T/linked" campaign
if merge "$T/e" "$T/linked_tgz"; then fail "an archive holding a link was merged"; fi
expect_in "$T/linked_tgz.merge" "is not a plain file or folder with a relative name"
unpack "$T/out1" "$T/impossible"
sed -i '0,/exact: [0-9.e-]*/s//exact: 7/' "$T/impossible/campaign/fig1/smoke/points/default/seed1/result.textproto"
if merge "$T/e" "$T/impossible"; then fail "an impossible result was merged"; fi
expect_in "$T/impossible.merge" "points/default/seed1: "
expect_in "$T/impossible.merge" "exact is 7"
[[ -z "$(git -C "$T/e" status --porcelain)" ]] || fail "a refused merge changed the checkout"
echo "PASS: two slices, resumed once, merged claims equal the uninterrupted run's; refusals named"
