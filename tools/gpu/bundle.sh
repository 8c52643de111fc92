#!/usr/bin/env bash
# tools/gpu/bundle.sh [OUTDIR]: builds every CUDA test, the CUDA experiment runner and the GPU
# benchmark, and packs them with their runfiles and every shared library a bare GPU machine lacks into
# OUTDIR (default gpu_bundle/, ignored by git), at most 60 MiB:
#
#   OUTDIR/run.sh           the entry point on the GPU machine: bash gpu_bundle/run.sh OUTDIR
#   OUTDIR/payload.tar.xz   payload/{lib/, runfiles/mimetic/..., targets.txt, cuda_libs.txt,
#                           cpu_flags.txt, build_info.txt, model_digest.txt}
#   OUTDIR/MANIFEST.txt     the payload's files and sizes
#
# Needs nvcc at /usr/local/cuda (the build only; no GPU). The CUDA tests are found with bazel query
# (tests tagged "cuda" or depending on //mimetic/ops:cuda_backend), so new or moved tests join without
# edits here. Binaries are stripped and the payload xz-compressed: unpacked it holds OpenBLAS (36 MB)
# and the kernels' fatbins three times over (in the test libraries and in each statically linked
# binary), which xz's 64 MiB window stores once.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
OUT="${1:-$ROOT/gpu_bundle}"
LIMIT_BYTES=$((60 * 1024 * 1024))
BINARIES=(//mimetic/experiments:run_cuda //mimetic/experiments:figure_cuda //mimetic/experiments:campaign_tool //mimetic/experiments:gpu_benchmark //mimetic/experiments:ssd_gpu_benchmark)
CONFIGS=//mimetic/experiments:configs

# shellcheck source=tools/gpu/run.sh
MIMETIC_RUN_SH_LIB=1 source "$ROOT/tools/gpu/run.sh"

if [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "bundle.sh: no nvcc at /usr/local/cuda/bin/nvcc: the CUDA targets cannot be built here" >&2
  exit 1
fi
cd "$ROOT"
BAZEL=("$ROOT/tools/bazel")

query() { "${BAZEL[@]}" query --noshow_progress "$1" 2>/dev/null </dev/null; }

mapfile -t TESTS < <(query 'kind("cc_test", attr(tags, "\bcuda\b", tests(//...)) + rdeps(//..., //mimetic/ops:cuda_backend)) except attr(tags, "\bmanual\b", //...)' | sort)
mapfile -t OTHER < <(query 'kind("sh_test|py_test", attr(tags, "\bcuda\b", tests(//...)))')
if [[ ${#TESTS[@]} -eq 0 ]]; then
  echo "bundle.sh: bazel query found no CUDA tests" >&2
  exit 1
fi
[[ ${#OTHER[@]} -gt 0 ]] && echo "bundle.sh: WARNING: not bundled (only cc_test runs without Bazel): ${OTHER[*]}" >&2
echo "bundle.sh: ${#TESTS[@]} CUDA tests and ${#BINARIES[@]} binaries: building"
"${BAZEL[@]}" build --noshow_progress "${TESTS[@]}" "${BINARIES[@]}" "$CONFIGS" </dev/null

STAGE="$(mktemp -d "${TMPDIR:-/tmp}/mimetic-bundle.XXXXXX")"
trap 'rm -rf "$STAGE"' EXIT
P="$STAGE/payload"
mkdir -p "$P/lib" "$P/runfiles/mimetic"

# label_path //pkg:name -> pkg/name
label_path() {
  local l="${1#//}"
  echo "${l%%:*}/${l#*:}"
}

# The binary's args attribute (the GPU benchmark's presets), read from its BUILD rule.
rule_args() {
  "${BAZEL[@]}" query --noshow_progress --output=build "$1" 2>/dev/null </dev/null |
    sed -n '/^  args = \[/,/\]/p' | grep -o '"[^"]*"' | tr -d '"' | paste -sd ' ' -  || true
}

# stage_target KIND LABEL: the binary at runfiles/mimetic/PKG/NAME, its runfiles beside it (the
# libraries Bazel links from _solib_* come through ldd below).
stage_target() {
  local kind="$1" label="$2" rel bin manifest key src
  rel="$(label_path "$label")"
  bin="bazel-bin/$rel"
  manifest="bazel-bin/$rel.runfiles_manifest"
  [[ -x "$bin" ]] || { echo "bundle.sh: $label built no executable at $bin" >&2; exit 1; }
  mkdir -p "$(dirname "$P/runfiles/mimetic/$rel")"
  cp -L "$bin" "$P/runfiles/mimetic/$rel"
  echo "$bin" >>"$STAGE/elf_sources"
  if [[ -f "$manifest" ]]; then
    while read -r key src; do
      [[ "$key" == mimetic/_solib_* || "$key" == "mimetic/$rel" || -z "$src" ]] && continue
      mkdir -p "$(dirname "$P/runfiles/$key")"
      cp -L "$src" "$P/runfiles/$key"
      if is_elf "$src"; then echo "$src" >>"$STAGE/elf_sources"; fi
    done <"$manifest"
  fi
  local extra=""
  [[ "$kind" == binary ]] && extra=" $(rule_args "$label")"
  echo "$kind $label $rel$extra" >>"$P/targets.txt"
}

for t in "${TESTS[@]}"; do stage_target test "$t"; done
for b in "${BINARIES[@]}"; do stage_target binary "$b"; done
while read -r cfg; do
  rel="$(label_path "$cfg")"
  mkdir -p "$(dirname "$P/runfiles/mimetic/$rel")"
  cp -L "$rel" "$P/runfiles/mimetic/$rel"
done < <(query "labels(srcs, $CONFIGS)")

# Shared libraries: everything ldd resolves for any staged ELF file, except the allowed system ones.
# ldd runs on Bazel's copies, whose RUNPATH ($ORIGIN/../../_solib_k8) finds the project's libraries.
: >"$STAGE/cuda_libs"
while IFS= read -r f; do
  while read -r name arrow path _; do
    [[ "$arrow" == "=>" ]] || continue
    if allowed_system_lib "$name"; then
      [[ "$name" == libcud* || "$name" == libcublas* ]] && echo "$name" >>"$STAGE/cuda_libs"
      continue
    fi
    if [[ "$path" != /* ]]; then
      echo "bundle.sh: $f needs $name, which ldd does not find on this machine" >&2
      exit 1
    fi
    [[ -e "$P/lib/$name" ]] || cp -L "$path" "$P/lib/$name"
  done < <(ldd "$f")
done <"$STAGE/elf_sources"
sort -u "$STAGE/cuda_libs" >"$P/cuda_libs.txt"

unpacked_before=$(du -sb "$P" | cut -f1)
chmod -R u+w "$P"
find "$P" -type f -print0 | while IFS= read -r -d '' f; do
  if is_elf "$f"; then strip --strip-unneeded "$f"; fi
done
unpacked=$(du -sb "$P" | cut -f1)

# The build machine's instruction-set extensions (-march=native), for run.sh to compare.
ISA="sse4_1 sse4_2 ssse3 popcnt avx avx2 fma f16c bmi1 bmi2 movbe adx abm avx512f avx512dq avx512cd avx512bw
avx512vl avx512ifma avx512vbmi avx512_vbmi2 avx512_vnni avx512_bitalg avx512_vpopcntdq avx512_bf16 avx512_fp16
gfni vaes vpclmulqdq sha_ni"
have=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
for flag in $ISA; do [[ "$have" == *" $flag "* ]] && echo "$flag"; done | paste -sd ' ' - >"$P/cpu_flags.txt"

commit="$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
git -C "$ROOT" diff --quiet HEAD 2>/dev/null || commit="$commit+uncommitted changes"
{
  echo "built $(date -u '+%Y-%m-%d %H:%M UTC') from $commit;" \
    "$(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\).*/nvcc \1/p'), $(gcc -dumpfullversion 2>/dev/null | sed 's/^/gcc /')," \
    "$(ldd --version | head -n 1 | sed 's/.* //;s/^/glibc /'), CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
  echo "${#TESTS[@]} tests, ${#BINARIES[@]} binaries, $(ls "$P/lib" | wc -l) libraries"
} >"$P/build_info.txt"
# The model code the binaries were built from (tools/gpu/model_digest.sh), for tools/gpu/campaign.sh on a
# GPU machine without .git: every point it trains records it, and the merge compares it with the checkout's.
bash "$ROOT/tools/gpu/model_digest.sh" "$ROOT" >"$P/model_digest.txt"

rm -rf "$OUT"
mkdir -p "$OUT"
cp "$ROOT/tools/gpu/run.sh" "$OUT/run.sh"
chmod +x "$OUT/run.sh"
(cd "$STAGE" && find payload -type f -printf '%10s  %p\n' | sort -k2) >"$OUT/MANIFEST.txt"
echo "bundle.sh: compressing $((unpacked / 1024 / 1024)) MiB (xz -9)"
tar -C "$STAGE" -cf - payload | xz -9 -T1 >"$OUT/payload.tar.xz"

size=$(du -sb "$OUT" | cut -f1)
echo "bundle.sh: $OUT: $(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1048576 }') MiB" \
  "(limit 60 MiB; payload unpacked $((unpacked / 1024 / 1024)) MiB, $((unpacked_before / 1024 / 1024)) MiB before strip):" \
  "$(grep -c '^test ' "$P/targets.txt") tests, $(grep -c '^binary ' "$P/targets.txt") binaries," \
  "$(ls "$P/lib" | wc -l) libraries, $(find "$P/runfiles" -type f | wc -l) runfiles"
if ((size > LIMIT_BYTES)); then
  echo "bundle.sh: the bundle is over 60 MiB" >&2
  exit 1
fi
echo "bundle.sh: run it on a GPU machine with: bash $(basename "$OUT")/run.sh OUTDIR"
