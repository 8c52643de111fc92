#!/usr/bin/env bash
# Tests of tools/gpu/run.sh without a GPU or a built bundle: the allowed-library list and the ldd
# check on canned ldd output, then a whole run over a fake payload (shell scripts that print what
# gtest and the runner print) to check the counting, the skip/fail classification, the timeout and the
# failure output in summary.txt. CI's end-to-end check of the real bundle is tools/gpu/check_bundle.sh.
set -uo pipefail

RUN_SH="${TEST_SRCDIR:-$PWD/..}/mimetic/tools/gpu/run.sh"
[[ -f "$RUN_SH" ]] || RUN_SH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/run.sh"
failures=0
expect() {  # expect DESCRIPTION COMMAND...: the command must succeed.
  local what="$1"
  shift
  if "$@"; then echo "ok: $what"; else
    echo "FAILED: $what"
    failures=$((failures + 1))
  fi
}

# shellcheck source=tools/gpu/run.sh
MIMETIC_RUN_SH_LIB=1 source "$RUN_SH"

# The allowed list: glibc, the C++ runtime, the driver, cudart and cuBLAS, and nothing else.
for lib in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1 /lib64/ld-linux-x86-64.so.2 \
  linux-vdso.so.1 libstdc++.so.6 libgcc_s.so.1 libcuda.so.1 libcudart.so.13 libcublas.so.13 \
  /usr/local/cuda/lib64/libcublasLt.so.13; do
  expect "$lib is allowed" allowed_system_lib "$lib"
done
for lib in libgomp.so.1 libgfortran.so.5 libopenblas.so.0 libabsl_base.so.20220623 libprotobuf.so.32 \
  libpng16.so.16 libz.so.1 libatomic.so.1 libcudnn.so.9 libcufft.so.12 libcuda_stub.so libmimetic_Sops_Slibssd.so; do
  expect "$lib is not allowed" bash -c "MIMETIC_RUN_SH_LIB=1 source '$RUN_SH'; ! allowed_system_lib $lib"
done

LIB=/opt/bundle/payload/lib
good=$'\tlinux-vdso.so.1 (0x00007ffd)\n\tlibabsl_base.so.20220623 => /opt/bundle/payload/lib/libabsl_base.so.20220623 (0x7f)\n\tlibcudart.so.13 => /usr/local/cuda/lib64/libcudart.so.13 (0x7f)\n\tlibstdc++.so.6 => /lib/x86_64-linux-gnu/libstdc++.so.6 (0x7f)\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)\n\t/lib64/ld-linux-x86-64.so.2 (0x7f)'
out="$(check_ldd_output "$LIB" bin <<<"$good")"
rc=$?
expect "bundle and allowed libraries pass" test "$rc" -eq 0
expect "a clean ldd prints nothing" test -z "$out"

out="$(check_ldd_output "$LIB" bin/t <<<$'\tlibfoo.so.1 => not found\n\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x7f)')"
rc=$?
expect "a missing library fails" test "$rc" -eq 1
expect "a missing library is named" grep -q 'bin/t: needs libfoo.so.1, which is neither in the bundle' <<<"$out"

out="$(check_ldd_output "$LIB" bin/t <<<$'\tlibgomp.so.1 => /usr/lib/x86_64-linux-gnu/libgomp.so.1 (0x7f)')"
rc=$?
expect "a system library outside the allowed list fails" test "$rc" -eq 1
expect "it is named with where it resolved" grep -q 'needs libgomp.so.1, resolved to /usr/lib/x86_64-linux-gnu/libgomp.so.1 outside' <<<"$out"

out="$(check_ldd_output "$LIB" bin/t <<<"bin/t: /lib/x86_64-linux-gnu/libstdc++.so.6: version \`GLIBCXX_3.4.32' not found (required by bin/t)")"
rc=$?
expect "a missing symbol version fails" test "$rc" -eq 1
expect "it is named" grep -q "GLIBCXX_3.4.32' not found" <<<"$out"

out="$(check_ldd_output "$LIB" bin/t <<<$'\tlibcudart.so.13 => not found')"
expect "a missing CUDA runtime fails too (the GPU machine must provide it)" test -n "$out"
expect "a missing driver library (no GPU here) passes" check_ldd_output "$LIB" bin <<<$'\tlibcuda.so.1 => not found'
expect "a static binary passes" check_ldd_output "$LIB" bin <<<$'\tnot a dynamic executable'

# A whole run over a fake payload.
TMP="$(mktemp -d "${TEST_TMPDIR:-/tmp}/run_sh_test.XXXXXX")"
B="$TMP/bundle"
mkdir -p "$B/payload/lib" "$B/payload/runfiles/mimetic/fake"
cp "$RUN_SH" "$B/run.sh"
fake_test() {  # fake_test NAME BODY: a script printing gtest-style output.
  printf '#!/bin/sh\n%s\n' "$2" >"$B/payload/runfiles/mimetic/fake/$1"
  chmod +x "$B/payload/runfiles/mimetic/fake/$1"
}
fake_test skipping_test 'echo "[ RUN      ] A.cpu"; echo "[       OK ] A.cpu (1 ms)"
echo "[ RUN      ] A.gpu"; echo "x.cc:3: Skipped"; echo "no CUDA device: none here"; echo
echo "[  SKIPPED ] A.gpu (0 ms)"; echo "[ RUN      ] A.gpu2"; echo "x.cc:3: Skipped"; echo "no CUDA device: none here"
echo "[  SKIPPED ] A.gpu2 (0 ms)"; echo "[==========] 3 tests from 1 test suite ran. (1 ms total)"'
fake_test all_skip_test 'echo "[ RUN      ] B.gpu"; echo "y.cc:9: Skipped"; echo "no usable GPU"
echo "[  SKIPPED ] B.gpu (0 ms)"; echo "[==========] 1 test from 1 test suite ran. (0 ms total)"'
fake_test failing_test 'echo "[ RUN      ] C.ok"; echo "[       OK ] C.ok (0 ms)"; echo "[ RUN      ] C.bad"
echo "z.cc:5: Failure"; echo "MARKER_wrong_value"; echo "[  FAILED  ] C.bad (0 ms)"
echo "[==========] 2 tests from 1 test suite ran. (0 ms total)"; echo "[  FAILED  ] C.bad"; exit 1'
fake_test crashing_test 'echo "[ RUN      ] D.crash"; echo MARKER_crashed; exit 134'
fake_test zz_hanging_test 'echo "[ RUN      ] E.hang"; exec sleep 100'
fake_test runner 'echo "error: device: \"cuda\" was requested but no usable GPU was found: no driver" >&2; exit 1'
cat >"$B/payload/targets.txt" <<'EOF'
test //fake:skipping_test fake/skipping_test
test //fake:all_skip_test fake/all_skip_test
test //fake:failing_test fake/failing_test
test //fake:crashing_test fake/crashing_test
test //fake:zz_hanging_test fake/zz_hanging_test
binary //mimetic/experiments:run_cuda fake/runner
EOF
: >"$B/payload/cuda_libs.txt"
echo "fake payload" >"$B/payload/build_info.txt"

env -i PATH=/usr/bin:/bin bash "$B/run.sh" "$TMP/out" --budget=28 >"$TMP/log" 2>&1
rc=$?
S="$TMP/out/summary.txt"
expect "the run exits 1 when something failed" test "$rc" -eq 1
expect "counts per test case" grep -q '^2 passed, 3 failed, 4 skipped (counted per gtest test case' "$S"
expect "a binary with passes and skips is PASS" grep -qE '^PASS //fake:skipping_test +1 passed, 0 failed, 2 skipped.*skip reason: no CUDA device: none here' "$S"
expect "a binary whose cases all skip is SKIP" grep -qE '^SKIP //fake:all_skip_test .*skip reason: no usable GPU' "$S"
expect "a failed case is FAIL" grep -qE '^FAIL //fake:failing_test +1 passed, 1 failed' "$S"
expect "a crash is a failure with its exit code" grep -qE '^FAIL //fake:crashing_test .*exited with code 134' "$S"
expect "a hang is a failure after the timeout" grep -qE '^FAIL //fake:zz_hanging_test .*TIMED OUT' "$S"
expect "the failure's output is in the summary" grep -q MARKER_wrong_value "$S"
expect "the crash's output is in the summary" grep -q MARKER_crashed "$S"
expect "the runner without a GPU skips, naming it" grep -qE '^SKIP runner smoke .*skip reason: .*no usable GPU' "$S"
expect "the ldd check is reported" grep -q '^run.sh: libraries: all 0 ELF files resolve' "$S"
expect "every step's output is in logs.txt" grep -q '===== //fake:failing_test: FAIL' "$TMP/out/logs.txt"

# A payload that is not there, and a bad argument, stop with code 2.
rm -rf "$B/payload"
env -i PATH=/usr/bin:/bin bash "$B/run.sh" "$TMP/out2" >"$TMP/log2" 2>&1
expect "no payload: exit 2" test $? -eq 2
expect "no payload: says so" grep -q 'neither .*payload/ nor .*payload.tar.xz exists' "$TMP/log2"
bash "$B/run.sh" "$TMP/out3" --bogus >/dev/null 2>&1
expect "unknown flag: exit 2" test $? -eq 2

if ((failures > 0)); then
  cat "$S"
  echo "$failures checks failed"
  exit 1
fi
rm -rf "$TMP"
echo "all checks passed"
