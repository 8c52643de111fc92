#!/usr/bin/env bash
# gpu_bundle/run.sh: runs mimetic's whole CUDA backend check on a bare GPU machine (no Bazel, none of
# the project's system libraries) from the folder that tools/gpu/bundle.sh builds.
#
#   bash gpu_bundle/run.sh OUTDIR [--only=REGEX] [--no-bench] [--budget=SECONDS]
#
# In order: unpack the payload into a temporary folder, find the CUDA libraries (and say which ones it
# uses), check with ldd that every ELF file resolves to the bundle or to an allowed system library
# (stopping with the missing ones named), probe the device, then run the CUDA tests (probe, runtime /
# allocator / out-of-memory / CUDA-graph capture, op consistency, model parity, determinism, any other),
# the experiment runner on a smoke config and the GPU benchmark, each under a timeout, all within the
# budget (default 540 s). OUTDIR gets summary.txt ("N passed, N failed, N skipped", counted per gtest
# test case; the runner and each benchmark preset count one each), logs.txt (every step's output),
# benchmark.txt, env.txt and runner_summary.md (five files, so that little has to be copied back).
# Exit code: 0 when nothing failed, 1 when something failed, 2 when the bundle cannot run here
# (missing library, bad arguments).
#
# --only=REGEX runs the tests whose label matches, the runner if "runner" matches and the benchmark if
# "benchmark" matches (e.g. --only='ssd|parity'); --no-bench leaves the benchmark out. Without a GPU
# (the driver lists none) the runner and benchmark, which then exit naming the missing GPU, count as
# skipped; the CUDA libraries are searched in MIMETIC_CUDA_LIB_DIR first.
#
# This file is also sourced (MIMETIC_RUN_SH_LIB=1) by tools/gpu/bundle.sh and its tests, for the list of
# libraries a bare GPU machine provides and the ldd check.
set -uo pipefail

# Libraries a bare GPU machine provides: glibc's, the C++ runtime, the NVIDIA driver and the CUDA
# runtime and cuBLAS. Everything else an ELF file needs must come from the bundle's lib/.
ALLOWED_SYSTEM_LIBS=(linux-vdso ld-linux-x86-64 libc libm libdl libpthread librt libstdc++ libgcc_s
  libcuda libcudart libcublas libcublasLt)

# allowed_system_lib NAME_OR_PATH: true when the library is one a bare GPU machine provides.
allowed_system_lib() {
  local base="${1##*/}"
  local stem="${base%%.so*}"
  local a
  for a in "${ALLOWED_SYSTEM_LIBS[@]}"; do
    [[ "$stem" == "$a" ]] && return 0
  done
  return 1
}

# check_ldd_output LIB_DIR WHAT < ldd-output: prints one line per problem (a library not found, one
# resolved outside LIB_DIR that is not an allowed system library, a missing symbol version) and
# returns 1 if there was any. WHAT names the file in the messages.
check_ldd_output() {
  local lib_dir="$1" what="$2" line name path bad=0
  while IFS= read -r line; do
    line="${line#"${line%%[![:space:]]*}"}"
    case "$line" in
      "" | "statically linked" | "not a dynamic executable") continue ;;
      libcuda.so*"=> not found"*)
        # The driver's library exists only where a GPU does; cudart reports its absence at run time.
        continue
        ;;
      *"=> not found"*)
        echo "$what: needs ${line%% *}, which is neither in the bundle nor on this machine"
        bad=1
        continue
        ;;
      *": version "*"not found"*)
        echo "$what: ${line#*: }"
        bad=1
        continue
        ;;
      *" => "*)
        name="${line%% =>*}"
        path="${line#*=> }"
        path="${path%% (0x*}"
        ;;
      /*)
        name="${line%% (0x*}"
        path="$name"
        ;;
      *" (0x"*)
        name="${line%% (0x*}"
        path=""
        ;;
      *)
        echo "$what: ldd says: $line"
        bad=1
        continue
        ;;
    esac
    if [[ -n "$path" && "$path" == "$lib_dir/"* ]]; then continue; fi
    if allowed_system_lib "$name"; then continue; fi
    echo "$what: needs ${name##*/}, resolved to ${path:-nothing} outside the bundle; it is not an allowed" \
      "system library (${ALLOWED_SYSTEM_LIBS[*]}), so a bare GPU machine lacks it"
    bad=1
  done
  return "$bad"
}

# is_elf FILE: true for ELF binaries and shared libraries.
is_elf() {
  [[ -f "$1" && "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" == '177ELF' ]]
}

if [[ "${MIMETIC_RUN_SH_LIB:-0}" == 1 ]]; then
  return 0 2>/dev/null || exit 0
fi

# ---------------------------------------------------------------------------------------------------
# Arguments and layout.

usage() {
  echo "usage: bash gpu_bundle/run.sh OUTDIR [--only=REGEX] [--no-bench] [--budget=SECONDS]" >&2
  exit 2
}
[[ $# -ge 1 ]] || usage
OUTDIR="$1"
shift
ONLY=""
BENCH=1
BUDGET=540
for arg in "$@"; do
  case "$arg" in
    --only=*) ONLY="${arg#--only=}" ;;
    --no-bench) BENCH=0 ;;
    --budget=*) BUDGET="${arg#--budget=}" ;;
    *) usage ;;
  esac
done
[[ "$BUDGET" =~ ^[0-9]+$ ]] || usage
START=$SECONDS
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
mkdir -p "$OUTDIR" || exit 2
OUTDIR="$(cd "$OUTDIR" && pwd -P)"
SUMMARY="$OUTDIR/summary.txt"
LOGS="$OUTDIR/logs.txt"
BENCH_OUT="$OUTDIR/benchmark.txt"
ENVTXT="$OUTDIR/env.txt"
: >"$LOGS"
: >"$ENVTXT"
rm -f "$BENCH_OUT"

say() { echo "run.sh: $*" | tee -a "$ENVTXT"; }
fatal() {
  {
    echo "run.sh: cannot run the bundle here: $1"
    [[ $# -gt 1 ]] && printf '%s\n' "${@:2}"
    echo "0 passed, 1 failed, 0 skipped (the bundle did not run; see above)"
  } | tee "$SUMMARY" >&2
  exit 2
}

# The payload: an unpacked payload/ folder beside this script, or payload.tar.xz unpacked into a
# temporary folder that is removed at exit (the bundle folder stays small enough to carry).
if [[ -d "$HERE/payload" ]]; then
  ROOT="$HERE/payload"
elif [[ -f "$HERE/payload.tar.xz" ]]; then
  WORK="$(mktemp -d "${TMPDIR:-/tmp}/mimetic-gpu-bundle.XXXXXX")" || fatal "mktemp failed"
  trap 'rm -rf "$WORK"' EXIT
  if command -v xz >/dev/null 2>&1; then
    tar -xJf "$HERE/payload.tar.xz" -C "$WORK" || fatal "unpacking payload.tar.xz with tar/xz failed"
  elif command -v python3 >/dev/null 2>&1; then
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$HERE/payload.tar.xz" "$WORK" || fatal "unpacking payload.tar.xz with python3 failed"
  else
    fatal "payload.tar.xz needs xz or python3 to unpack, and this machine has neither"
  fi
  ROOT="$WORK/payload"
else
  fatal "neither $HERE/payload/ nor $HERE/payload.tar.xz exists (build it with tools/gpu/bundle.sh)"
fi
LIB="$ROOT/lib"
RUNFILES="$ROOT/runfiles"
[[ -f "$ROOT/targets.txt" && -d "$LIB" && -d "$RUNFILES/mimetic" ]] || fatal "$ROOT is not a bundle payload"
say "bundle: $(head -n 1 "$ROOT/build_info.txt" 2>/dev/null)"
say "machine: $(uname -srm), $(ldd --version 2>/dev/null | head -n 1)"

# ---------------------------------------------------------------------------------------------------
# CUDA libraries: the first of the usual places that holds each soname the binaries need.

# ldconfig lives in /sbin, which a scrubbed PATH may lack.
LDCONFIG="$(command -v ldconfig || ls /sbin/ldconfig /usr/sbin/ldconfig 2>/dev/null | head -n 1)"
ldconfig_p() { [[ -n "$LDCONFIG" ]] && "$LDCONFIG" -p 2>/dev/null; }

site_packages_dirs() {
  local py
  for py in python3 /opt/torch/.venv/bin/python3 /usr/bin/python3; do
    command -v "$py" >/dev/null 2>&1 || continue
    "$py" -c 'import site, sysconfig; print("\n".join(site.getsitepackages() + [sysconfig.get_paths()["purelib"]]))' \
      2>/dev/null
  done
  ls -d /opt/*/.venv/lib/python3*/site-packages /usr/local/lib/python3*/dist-packages 2>/dev/null
}

cuda_search_dirs() {
  [[ -n "${MIMETIC_CUDA_LIB_DIR:-}" ]] && echo "$MIMETIC_CUDA_LIB_DIR"
  echo /usr/local/cuda/lib64
  ls -d /usr/local/cuda/targets/*/lib /usr/local/cuda-*/lib64 2>/dev/null
  ldconfig_p | sed -n 's/.*lib\(cudart\|cublas\|cublasLt\)\.so.* => \(.*\)\/[^/]*$/\2/p'
  echo /usr/lib/x86_64-linux-gnu /usr/lib64
  local sp
  while read -r sp; do
    ls -d "$sp"/nvidia/*/lib 2>/dev/null
  done < <(site_packages_dirs | sort -u)
}

mapfile -t SEARCH < <(cuda_search_dirs | awk 'NF && !seen[$0]++')
CUDA_DIRS=()
cuda_missing=()
while read -r soname; do
  [[ -z "$soname" ]] && continue
  found=""
  for d in "${SEARCH[@]}"; do
    if [[ -e "$d/$soname" ]]; then
      found="$d"
      break
    fi
  done
  if [[ -n "$found" ]]; then
    say "CUDA library $soname: using $found/$soname"
    [[ " ${CUDA_DIRS[*]:-} " == *" $found "* ]] || CUDA_DIRS+=("$found")
  else
    cuda_missing+=("$soname")
  fi
done <"$ROOT/cuda_libs.txt"

# The driver's libcuda.so.1 is loaded by cudart at run time (no ldd entry): say where it is.
driver=""
for d in $(ldconfig_p | sed -n 's/.*libcuda\.so\.1 .*=> \(.*\)\/[^/]*$/\1/p') \
  /usr/lib/x86_64-linux-gnu /usr/local/nvidia/lib64 /usr/local/nvidia/lib /usr/lib64; do
  if [[ -e "$d/libcuda.so.1" ]]; then
    driver="$d"
    break
  fi
done
if [[ -n "$driver" ]]; then
  say "NVIDIA driver library: $driver/libcuda.so.1"
  ldconfig_p | grep -q "libcuda\.so\.1 .*=> $driver/" || CUDA_DIRS+=("$driver")
else
  say "NVIDIA driver library libcuda.so.1: not found (no driver): every GPU test will skip"
fi
LD_PATH="$LIB"
for d in "${CUDA_DIRS[@]:-}"; do [[ -n "$d" ]] && LD_PATH="$LD_PATH:$d"; done
say "LD_LIBRARY_PATH for the binaries: $LD_PATH"

# ---------------------------------------------------------------------------------------------------
# Every ELF file must resolve to the bundle or to an allowed system library: stop here, naming the
# missing ones, rather than fail test by test.
problems=()
n_elf=0
while IFS= read -r -d '' f; do
  is_elf "$f" || continue
  n_elf=$((n_elf + 1))
  rel="${f#"$ROOT"/}"
  mapfile -t -O "${#problems[@]}" problems < <(LD_LIBRARY_PATH="$LD_PATH" ldd "$f" 2>&1 | check_ldd_output "$LIB" "$rel")
done < <(find "$ROOT/lib" "$RUNFILES" -type f -print0)
if [[ ${#problems[@]} -gt 0 ]]; then
  hint=()
  if [[ ${#cuda_missing[@]} -gt 0 ]]; then
    hint=("CUDA libraries not found in: ${SEARCH[*]}" "(set MIMETIC_CUDA_LIB_DIR to the folder that holds ${cuda_missing[*]})")
  fi
  fatal "libraries are missing (checked $n_elf ELF files with ldd):" "${problems[@]}" "${hint[@]}"
fi
say "libraries: all $n_elf ELF files resolve to the bundle or to allowed system libraries (${ALLOWED_SYSTEM_LIBS[*]})"

# The binaries were compiled with -march=native on the build machine: name any instruction-set
# extension of that machine that this CPU lacks (a binary using one dies with SIGILL).
if [[ -f "$ROOT/cpu_flags.txt" && -r /proc/cpuinfo ]]; then
  have=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  lacking=()
  for flag in $(cat "$ROOT/cpu_flags.txt"); do
    [[ "$have" == *" $flag "* ]] || lacking+=("$flag")
  done
  if [[ ${#lacking[@]} -gt 0 ]]; then
    say "WARNING: this CPU lacks ${lacking[*]}, which the build machine had (-march=native): a crash with" \
      "SIGILL means rebuilding the bundle for this CPU"
  else
    say "CPU: has every instruction-set extension the build machine had"
  fi
fi

# The device, as the driver sees it.
GPU_LISTED=0
if command -v nvidia-smi >/dev/null 2>&1; then
  smi="$(nvidia-smi -L 2>&1)"
  say "nvidia-smi -L: ${smi//$'\n'/; }"
  [[ "$smi" == *"GPU 0"* ]] && GPU_LISTED=1
  say "nvidia-smi: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -n 1)"
else
  say "nvidia-smi: not on PATH"
  [[ -e /dev/nvidia0 ]] && GPU_LISTED=1
fi

# ---------------------------------------------------------------------------------------------------
# Steps. Each appends to logs.txt and records one line in RESULTS; failures keep their output.

PASSED=0
FAILED=0
SKIPPED=0
RESULTS=()
FAILURES=()

remaining() { echo $((BUDGET - (SECONDS - START))); }

# step_timeout CAP [RESERVE]: the step's limit: CAP, or what is left of the budget minus RESERVE.
step_timeout() {
  local cap="$1" reserve="${2:-0}" left
  left=$(($(remaining) - reserve))
  ((left < cap)) && cap=$left
  echo "$cap"
}

# record NAME STATUS DETAIL LOGFILE: one result line; a FAIL keeps the log's tail for the summary.
record() {
  local name="$1" status="$2" detail="$3" log="$4"
  RESULTS+=("$(printf '%-4s %-44s %s' "$status" "$name" "$detail")")
  {
    echo "===== $name: $status $detail"
    cat "$log"
    echo
  } >>"$LOGS"
  if [[ "$status" == FAIL ]]; then
    FAILURES+=("----- $name: $detail"$'\n'"$(tail -n 80 "$log")")
  fi
}

# Line-buffered output where coreutils' stdbuf exists, so that a step killed at its timeout keeps what
# it printed (a benchmark's finished rows, a test's last case).
LINEBUF=()
command -v stdbuf >/dev/null 2>&1 && LINEBUF=(stdbuf -oL -eL)

# run_in_env SECONDS CMD...: CMD in the runfiles tree, as Bazel would run it, under a timeout.
run_in_env() {
  local t="$1" tmp rc
  shift
  tmp="$(mktemp -d)"
  (cd "$RUNFILES/mimetic" && env LD_LIBRARY_PATH="$LD_PATH" TEST_SRCDIR="$RUNFILES" RUNFILES_DIR="$RUNFILES" \
    TEST_WORKSPACE=mimetic TEST_TMPDIR="$tmp" TEST_UNDECLARED_OUTPUTS_DIR="$tmp" \
    OMP_WAIT_POLICY=passive timeout -k 10 "$t" "${LINEBUF[@]}" "$@")
  rc=$?
  rm -rf "$tmp"
  return "$rc"
}

# begin_step NAME CAP RESERVE: sets STEP_T (the step's time limit) and STEP_LOG (a fresh file), or,
# when the budget is spent, records the step as not run (a failure) and returns 1.
begin_step() {
  STEP_T="$(step_timeout "$2" "$3")"
  STEP_LOG="$(mktemp)"
  if ((STEP_T < 5)); then
    echo "not run: the ${BUDGET}s budget is spent" >"$STEP_LOG"
    FAILED=$((FAILED + 1))
    record "$1" FAIL "not run: time budget spent" "$STEP_LOG"
    rm -f "$STEP_LOG"
    return 1
  fi
}

# run_gtest NAME REL CAP: a gtest binary, counted per test case.
run_gtest() {
  local name="$1" rel="$2" cap="$3" t log rc pass fail skip reasons detail status t0=$SECONDS
  begin_step "$name" "$cap" 20 || return
  t="$STEP_T"
  log="$STEP_LOG"
  run_in_env "$t" "./$rel" --gtest_color=no >"$log" 2>&1
  rc=$?
  pass=$(grep -cE '^\[       OK \] [^ ]+ \([0-9]+ ms\)$' "$log")
  fail=$(grep -cE '^\[  FAILED  \] [^ ]+ \([0-9]+ ms\)$' "$log")
  skip=$(grep -cE '^\[  SKIPPED \] [^ ]+ \([0-9]+ ms\)$' "$log")
  reasons="$(grep -A1 -E ': Skipped$' "$log" | grep -vE ': Skipped$|^--$' | sort | uniq -c | sort -rn |
    head -n 3 | sed 's/^ *[0-9]* *//' | paste -sd '|' -)"
  detail="$pass passed, $fail failed, $skip skipped in $((SECONDS - t0))s"
  if ((rc == 124 || rc == 137)); then
    fail=$((fail + 1))
    detail="$detail; TIMED OUT after ${t}s"
  elif ((rc != 0 && fail == 0)); then
    fail=$((fail + 1))
    detail="$detail; exited with code $rc"
  elif ! grep -q '^\[==========\] .* ran\.' "$log"; then
    fail=$((fail + 1))
    detail="$detail; gtest never finished (no '[==========] ... ran.' line)"
  fi
  PASSED=$((PASSED + pass))
  FAILED=$((FAILED + fail))
  SKIPPED=$((SKIPPED + skip))
  if ((fail > 0)); then
    status=FAIL
  elif ((pass == 0 && skip > 0)); then
    status=SKIP
  else
    status=PASS
  fi
  [[ -n "$reasons" ]] && detail="$detail; skip reason: $reasons"
  record "$name" "$status" "$detail" "$log"
  rm -f "$log"
}

# run_program NAME CAP RESERVE OUTFILE CMD...: a program that needs a GPU, counted as one case. Where
# the driver lists no GPU, exiting nonzero with a message naming the missing GPU is a skip.
run_program() {
  local name="$1" cap="$2" reserve="$3" out="$4" t log rc detail t0=$SECONDS
  shift 4
  begin_step "$name" "$cap" "$reserve" || return
  t="$STEP_T"
  log="$STEP_LOG"
  run_in_env "$t" "$@" >"$log" 2>&1
  rc=$?
  [[ -n "$out" ]] && cat "$log" >>"$out"
  detail="exit code $rc in $((SECONDS - t0))s"
  if ((rc == 0)); then
    PASSED=$((PASSED + 1))
    record "$name" PASS "$detail" "$log"
  elif ((rc == 124 || rc == 137)); then
    FAILED=$((FAILED + 1))
    record "$name" FAIL "$detail; TIMED OUT after ${t}s" "$log"
  elif [[ "$GPU_LISTED" == 0 ]] && grep -qiE 'no usable GPU|no CUDA|no GPU' "$log"; then
    SKIPPED=$((SKIPPED + 1))
    record "$name" SKIP "$detail; skip reason: $(grep -m1 -iE 'no usable GPU|no CUDA|no GPU' "$log")" "$log"
  else
    FAILED=$((FAILED + 1))
    record "$name" FAIL "$detail" "$log"
  fi
  rm -f "$log"
}

selected() { [[ -z "$ONLY" || "$1" =~ $ONLY ]]; }

# Tests in order: the device probe, the runtime (allocator, out-of-memory, CUDA-graph capture), op
# consistency, model parity, determinism, then any other CUDA test the bundle holds.
declare -A REL
TESTS=()
while read -r kind label rel; do
  [[ "$kind" == test ]] || continue
  TESTS+=("$label")
  REL[$label]="$rel"
done <"$ROOT/targets.txt"
rank() {
  case "$1" in
    *smoke*) echo 0 ;;
    *cuda_runtime*) echo 1 ;;
    *consistency*) echo 2 ;;
    *parity*) echo 3 ;;
    *determinism*) echo 4 ;;
    *) echo 5 ;;
  esac
}
mapfile -t ORDERED < <(for l in "${TESTS[@]}"; do echo "$(rank "$l") $l"; done | sort -k1,1n -k2 | cut -d' ' -f2)

for label in "${ORDERED[@]}"; do
  selected "$label" || continue
  case "$(rank "$label")" in
    0) cap=60 ;; 1) cap=120 ;; 2) cap=90 ;; 3) cap=180 ;; 4) cap=240 ;; *) cap=120 ;;
  esac
  run_gtest "$label" "${REL[$label]}" "$cap"
  [[ "$(rank "$label")" == 0 ]] && say "device probe ($label): ${RESULTS[-1]}"
done

# The experiment runner on a smoke config (the copy config, a few steps, one seed, on the GPU).
HAS_BENCH=0
if [[ $BENCH == 1 ]] && grep -q '^binary //mimetic/experiments:gpu_benchmark ' "$ROOT/targets.txt" && selected benchmark; then
  HAS_BENCH=1
fi
if grep -q '^binary //mimetic/experiments:run_cuda ' "$ROOT/targets.txt" && selected runner; then
  runs="$(mktemp -d)"
  run_program "runner smoke (copy config, device cuda)" 150 $((HAS_BENCH * 60)) "" \
    "./$(grep '^binary //mimetic/experiments:run_cuda ' "$ROOT/targets.txt" | cut -d' ' -f3)" \
    mimetic/experiments/configs/copy.textproto --set device=cuda --set train.steps=40 --set seeds=[1] \
    --set train.warmup_steps=5 --set train.eval_every=20 --set train.checkpoint_every=40 --set train.log_every=10 \
    --set eval.final_batches=1 --set "output_dir=$runs"
  cp "$runs"/*/summary.md "$OUTDIR/runner_summary.md" 2>/dev/null
  rm -rf "$runs"
fi

# The GPU benchmark, one preset per invocation so that a slow one leaves the others their table. Its
# PyTorch peer runs under a python3 that does not inherit the bundle's library path.
if [[ $HAS_BENCH == 1 ]]; then
  read -r _ _ bench_rel bench_args < <(grep '^binary //mimetic/experiments:gpu_benchmark ' "$ROOT/targets.txt")
  python="$(command -v python3 || echo /usr/bin/python3)"
  wrapper="$(mktemp)"
  printf '#!/bin/sh\nunset LD_LIBRARY_PATH\nexec %s "$@"\n' "$python" >"$wrapper"
  chmod +x "$wrapper"
  say "benchmark: PyTorch peer runs with $python ($("$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -n 1))"
  presets=()
  others=()
  for a in $bench_args; do
    # --preset=fig1,fig9,fig3 (one flag, comma-separated) runs as one invocation per preset.
    case "$a" in --preset=*) IFS=, read -ra list <<<"${a#--preset=}"; for x in "${list[@]}"; do presets+=("--preset=$x"); done ;; *) others+=("$a") ;; esac
  done
  [[ ${#presets[@]} -gt 0 ]] || presets=("")
  : >"$BENCH_OUT"
  n_left=${#presets[@]}
  for p in "${presets[@]}"; do
    # Share what is left of the budget among the presets still to run.
    share=$((($(remaining) - 5) / n_left))
    n_left=$((n_left - 1))
    run_program "benchmark ${p#--preset=}" "$share" 0 "$BENCH_OUT" "./$bench_rel" "${others[@]}" $p "--python=$wrapper"
  done
  rm -f "$wrapper"
fi

# ---------------------------------------------------------------------------------------------------
# Summary.
{
  echo "mimetic GPU bundle run, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(($SECONDS - START))s"
  cat "$ENVTXT"
  echo
  echo "$PASSED passed, $FAILED failed, $SKIPPED skipped (counted per gtest test case; the runner and each benchmark preset count one each)"
  echo
  echo "per step (PASS: some cases passed and none failed; SKIP: every case skipped):"
  printf '%s\n' "${RESULTS[@]}"
  if [[ $GPU_LISTED == 1 && $SKIPPED -gt 0 ]]; then
    echo
    echo "WARNING: the driver lists a GPU but $SKIPPED cases skipped: read their reasons above"
  fi
  if [[ -s "$BENCH_OUT" ]]; then
    echo
    echo "benchmark table (full output in benchmark.txt):"
    grep -E '^\[[a-z0-9_]+\] ' "$BENCH_OUT" || echo "(no rows: see the benchmark steps above)"
  fi
  if [[ ${#FAILURES[@]} -gt 0 ]]; then
    echo
    echo "failures (last 80 lines of each; full output in logs.txt):"
    printf '%s\n\n' "${FAILURES[@]}"
  fi
} >"$SUMMARY"
cat "$SUMMARY"
[[ $FAILED -eq 0 ]]
