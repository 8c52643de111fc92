#!/usr/bin/env bash
# tools/gpu/check_bundle.sh [BUNDLE_DIR]: CI's check of the GPU bundle (tools/gpu/bundle.sh) on a
# machine without a GPU. Fails, naming what is wrong, unless:
#   1. the bundle folder is at most 60 MiB (its size is printed);
#   2. run.sh's list of allowed system libraries is exactly the agreed one, and ldd of every ELF file
#      in the payload, with only the bundle's lib/ on the library path, resolves to the bundle or to
#      one of those libraries;
#   3. run.sh, in a scrubbed environment (env -i with PATH alone), starts every binary, every test
#      binary skips its GPU cases with a reason and none fails, and the runner and benchmark steps
#      skip naming the missing GPU;
#   4. with a library deleted from a copy of the payload, run.sh stops before running anything and
#      names it: one that also exists on this machine outside the bundle (OpenBLAS, reachable through
#      the binaries' build-time RUNPATH) and one that exists only in the bundle (a kernel library);
#   5. tools/gpu/figures.sh runs a figure's smoke preset with the bundle's figure_cuda (on the CPU here:
#      --set device=cpu after the script's device=cuda) and packs its claims, without checkpoints;
#   6. tools/gpu/campaign.sh runs a one-item plan (Fig. 1 smoke) with the bundle's figure_cuda and
#      campaign_tool on the CPU and packs its points, each with the bundle's model digest (which must be
#      this checkout's, tools/gpu/model_digest.sh); nothing is merged into the checkout.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUNDLE="$(cd "${1:-$ROOT/gpu_bundle}" && pwd -P)" || exit 1
LIMIT_BYTES=$((60 * 1024 * 1024))
EXPECTED_ALLOWED="linux-vdso ld-linux-x86-64 libc libm libdl libpthread librt libstdc++ libgcc_s libcuda libcudart libcublas libcublasLt"
SCRUBBED_PATH=/usr/local/bin:/usr/bin:/bin

errors=0
fail() {
  echo "check_bundle: FAIL: $*"
  errors=$((errors + 1))
}

TMP="$(mktemp -d "${TMPDIR:-/tmp}/mimetic-check-bundle.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT

# 1. Size.
size=$(du -sb "$BUNDLE" | cut -f1)
echo "check_bundle: bundle size $(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MiB (limit 60 MiB): $BUNDLE"
((size <= LIMIT_BYTES)) || fail "the bundle is $size bytes, over 60 MiB"

# 2. The allowed list, and ldd of the unpacked payload with only the bundle's libraries on the path.
# shellcheck source=tools/gpu/run.sh
MIMETIC_RUN_SH_LIB=1 source "$BUNDLE/run.sh" || exit 1
[[ "${ALLOWED_SYSTEM_LIBS[*]}" == "$EXPECTED_ALLOWED" ]] ||
  fail "run.sh allows '${ALLOWED_SYSTEM_LIBS[*]}', expected exactly '$EXPECTED_ALLOWED'"
tar -xJf "$BUNDLE/payload.tar.xz" -C "$TMP" || exit 1
n_elf=0
while IFS= read -r -d '' f; do
  is_elf "$f" || continue
  n_elf=$((n_elf + 1))
  while IFS= read -r problem; do
    fail "ldd: $problem"
  done < <(env -i PATH="$SCRUBBED_PATH" LD_LIBRARY_PATH="$TMP/payload/lib" ldd "$f" 2>&1 |
    check_ldd_output "$TMP/payload/lib" "${f#"$TMP"/payload/}")
done < <(find "$TMP/payload" -type f -print0)
echo "check_bundle: ldd checked $n_elf ELF files against the bundle and the allowed list"
((n_elf > 0)) || fail "the payload holds no ELF files"

# 3. run.sh in a scrubbed environment.
env -i PATH="$SCRUBBED_PATH" bash "$BUNDLE/run.sh" "$TMP/out" --budget=400 >"$TMP/run.log" 2>&1
rc=$?
summary="$TMP/out/summary.txt"
sed -n '/^per step/,/^$/p' "$summary" 2>/dev/null | sed 's/^/check_bundle:   /'
if [[ $rc -ne 0 ]]; then
  fail "run.sh exited with code $rc:"
  cat "$TMP/run.log"
fi
counts="$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$summary" 2>/dev/null)"
echo "check_bundle: run.sh: ${counts:-no count line}"
[[ "$counts" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed,\ ([0-9]+)\ skipped ]] || fail "summary.txt has no count line"
[[ "${BASH_REMATCH[2]:-1}" == 0 ]] || fail "run.sh counted failures"
((${BASH_REMATCH[3]:-0} > 0)) || fail "nothing skipped on a machine without a GPU"
grep -q '^run.sh: libraries: all [0-9]* ELF files resolve' "$summary" || fail "run.sh did not report its ldd check"
while read -r kind label _; do
  if [[ "$kind" == test ]]; then
    line="$(grep -E "^(PASS|SKIP|FAIL) +$label " "$summary")"
    if [[ -z "$line" ]]; then
      fail "$label did not run"
    elif [[ ! "$line" =~ [1-9][0-9]*\ skipped ]] || [[ "$line" != *"skip reason: "?* ]]; then
      fail "$label skipped no GPU case with a reason: $line"
    fi
  fi
done <"$TMP/payload/targets.txt"
for step in "runner smoke" "benchmark"; do
  n=$(grep -cE "^SKIP +$step.*skip reason: .*(GPU|CUDA)" "$summary")
  ((n > 0)) || fail "no '$step' step skipped naming the missing GPU"
  grep -E "^(PASS|FAIL) +$step" "$summary" && fail "the $step step should skip without a GPU"
done

# 4. A library missing from the bundle must stop run.sh, named.
check_missing() {
  local lib="$1" copy="$TMP/missing"
  rm -rf "$copy"
  mkdir -p "$copy"
  cp -a "$TMP/payload" "$copy/payload"
  cp "$BUNDLE/run.sh" "$copy/run.sh"
  rm -f "$copy/payload/lib/$lib"
  env -i PATH="$SCRUBBED_PATH" bash "$copy/run.sh" "$TMP/missing-out" >"$TMP/missing.log" 2>&1
  local code=$?
  if [[ $code -ne 2 ]] || ! grep -q "needs $lib" "$TMP/missing.log"; then
    fail "with $lib deleted, run.sh exited $code without naming it:"
    tail -n 20 "$TMP/missing.log"
  else
    echo "check_bundle: with $lib deleted, run.sh stops: $(grep -m1 "needs $lib" "$TMP/missing.log")"
  fi
}
check_missing libopenblas.so.0
check_missing "$(cd "$TMP/payload/lib" && ls | grep -m1 'kernels_Ucuda\.so$')"

# 5. figures.sh: a figure from the bundle, its runs packed.
env MIMETIC_BUNDLE_DIR="$BUNDLE" MIMETIC_PAYLOAD_DIR="$TMP" MIMETIC_RUNS_DIR="$TMP/fig_runs" \
  bash "$ROOT/tools/gpu/figures.sh" "$TMP/fig_out" 120 scaling -- --preset=smoke --jobs=2 --set device=cpu \
  >"$TMP/figures.log" 2>&1 || fail "figures.sh exited with code $?: $(tail -n 5 "$TMP/figures.log")"
packed="$(tar -tzf "$TMP/fig_out/runs.tgz" 2>/dev/null)"
if ! grep -q 'scaling_smoke/claims.md$' <<<"$packed"; then
  fail "figures.sh packed no scaling_smoke/claims.md: $(tail -n 5 "$TMP/fig_out/figures.txt" 2>/dev/null)"
elif grep -q '\.safetensors$' <<<"$packed"; then
  fail "figures.sh packed checkpoints"
else
  echo "check_bundle: figures.sh: $(grep -m1 'runs.tgz' "$TMP/fig_out/figures.txt")"
fi

# 6. campaign.sh: a slice from the bundle, its points packed with their provenance.
cat >"$TMP/plan.textproto" <<'PLAN'
items { id: "fig1_smoke" kind: FIGURE figure: "fig1" preset: "smoke" points: "^points/" device_minutes: 0.1 speed: "seconds" why: "check_bundle" }
PLAN
env MIMETIC_BUNDLE_DIR="$BUNDLE" MIMETIC_PAYLOAD_DIR="$TMP" MIMETIC_CAMPAIGN_RUNS="$TMP/campaign_runs" \
  MIMETIC_CAMPAIGN_PLAN="$TMP/plan.textproto" MIMETIC_DEVICE_FLAGS="--set device=cpu" \
  bash "$ROOT/tools/gpu/campaign.sh" "$TMP/campaign_out" 120 >"$TMP/campaign.log" 2>&1 ||
  fail "campaign.sh exited with code $?: $(tail -n 5 "$TMP/campaign.log")"
mkdir -p "$TMP/campaign_look"
tar -xzf "$TMP/campaign_out/campaign.tgz" -C "$TMP/campaign_look" 2>/dev/null
digest="$(bash "$ROOT/tools/gpu/model_digest.sh" "$ROOT" 2>/dev/null)"
provenance="$TMP/campaign_look/campaign/fig1/smoke/points/mimetic/seed1/provenance.textproto"
if ! grep -q "model_digest: \"$digest\"" "$provenance" 2>/dev/null; then
  fail "campaign.sh packed no provenance with the checkout's model digest $digest: $(tail -n 5 "$TMP/campaign.log")"
else
  echo "check_bundle: campaign.sh: $(grep -m1 'packed:' "$TMP/campaign_out/campaign.txt")"
fi

if ((errors > 0)); then
  echo "check_bundle: $errors problems"
  exit 1
fi
echo "check_bundle: OK"
