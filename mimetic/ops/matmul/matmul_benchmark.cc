// Framework MatMul vs raw cblas_sgemm on the GEMMs of a Mamba layer at the copy experiment's sizes
// (batch 64 x length 103 = 6592 rows; D in {64, 128, 256}; E = 2D): in_proj (D -> 2E) and
// out_proj (E -> D), forward and both backward GEMMs. Raw and framework calls alternate within one
// benchmark per shape; the final table gives framework / raw throughput (target: >= 80%).
//
//   tools/bazel run //mimetic/ops:matmul_benchmark [-- --benchmark_repetitions=3 --benchmark_filter=D=64]
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/matmul/matmul.h"

namespace mimetic::ops {
namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kLength = 103;
constexpr int64_t kRows = kBatch * kLength;

// One GEMM C (m, n) = op(A) op(B) and how the framework expresses it.
struct GemmCase {
  std::string name;
  int64_t m, n, k;
  bool ta, tb;
  core::Shape a_shape, b_shape;  // framework operands: (B, L, .) activations, (., .) weights
  bool sum_batch;                // weight gradients: MatMulSumBatch over (B, L)
  double flops() const { return 2.0 * m * n * k; }
};

std::vector<GemmCase> Cases() {
  std::vector<GemmCase> cases;
  for (int64_t d : {64, 128, 256}) {
    const int64_t e = 2 * d;
    const std::string s = absl::StrCat("/D=", d);
    // in_proj: x (R, D) @ W_in (2E, D)^T; dx = g W_in; dW_in = g^T x.
    cases.push_back(
        {"in_proj_fwd" + s, kRows, 2 * e, d, false, true, {kBatch, kLength, d}, {2 * e, d}, false});
    cases.push_back(
        {"in_proj_dx" + s, kRows, d, 2 * e, false, false, {kBatch, kLength, 2 * e}, {2 * e, d}, false});
    cases.push_back({"in_proj_dw" + s,
                     2 * e,
                     d,
                     kRows,
                     true,
                     false,
                     {kBatch, kLength, 2 * e},
                     {kBatch, kLength, d},
                     true});
    // out_proj: y (R, E) @ W_out (D, E)^T; dy = g W_out; dW_out = g^T y.
    cases.push_back({"out_proj_fwd" + s, kRows, d, e, false, true, {kBatch, kLength, e}, {d, e}, false});
    cases.push_back({"out_proj_dy" + s, kRows, e, d, false, false, {kBatch, kLength, d}, {d, e}, false});
    cases.push_back(
        {"out_proj_dw" + s, d, e, kRows, true, false, {kBatch, kLength, d}, {kBatch, kLength, e}, true});
  }
  return cases;
}

Tensor Filled(const core::Shape& shape, float phase) {
  std::vector<float> v(core::NumElements(shape));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 0.001f * static_cast<float>((i * 2654435761u + 97) % 2001) - phase;
  return Tensor::FromHost<float>(shape, v).value();
}

// Per-shape timings gathered by BM_Pair for the final table (seconds per call).
struct PairResult {
  double raw_best = 0, fw_best = 0;    // fastest single call
  double raw_total = 0, fw_total = 0;  // all calls
  int64_t calls = 0;
};
std::map<std::string, PairResult>& Results() {
  static auto* results = new std::map<std::string, PairResult>();
  return *results;
}

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Alternates raw cblas_sgemm and framework MatMul call by call (order flipped every iteration), so
// both see the same machine load: the 2-core development machine is shared, and separate
// benchmarks run seconds apart would compare different background loads. The benchmark's own time
// is the framework's; counters give both throughputs and their ratio.
void BM_Pair(benchmark::State& state, const GemmCase& c) {
  const Tensor a = Filled(c.a_shape, 1.f), b = Filled(c.b_shape, 0.9f);
  std::vector<float> out(c.m * c.n);
  // Row-major leading dimensions of the stored (possibly transposed) operands.
  const int lda = static_cast<int>(c.ta ? c.m : c.k), ldb = static_cast<int>(c.tb ? c.k : c.n);
  auto raw = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, c.ta ? CblasTrans : CblasNoTrans, c.tb ? CblasTrans : CblasNoTrans,
                static_cast<int>(c.m), static_cast<int>(c.n), static_cast<int>(c.k), 1.f, a.data<float>(),
                lda, b.data<float>(), ldb, 0.f, out.data(), static_cast<int>(c.n));
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
    return Seconds(t0);
  };
  bool ok = true;
  auto framework = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    Tensor y = c.sum_batch ? MatMulSumBatch(a, b, c.ta, c.tb) : MatMul(a, b, c.ta, c.tb);
    ok = ok && y.ok() && y.numel() == c.m * c.n;
    benchmark::DoNotOptimize(y.storage().get());
    benchmark::ClobberMemory();
    y = Tensor();  // the output is freed inside the timed region, as in eager code
    return Seconds(t0);
  };
  raw();  // warm-up: OpenBLAS threads, page faults of `out` and of the allocator
  framework();
  double raw_sum = 0, fw_sum = 0, raw_best = 1e30, fw_best = 1e30;
  int64_t n = 0;
  for (auto _ : state) {
    double tr, tf;
    if (n % 2 == 0) {
      tr = raw();
      tf = framework();
    } else {
      tf = framework();
      tr = raw();
    }
    state.SetIterationTime(tf);
    raw_sum += tr;
    fw_sum += tf;
    raw_best = std::min(raw_best, tr);
    fw_best = std::min(fw_best, tf);
    ++n;
  }
  if (!ok) {
    state.SkipWithError("framework MatMul failed or gave the wrong output size");
    return;
  }
  state.counters["raw_GFLOP/s"] = c.flops() * n / raw_sum * 1e-9;
  state.counters["fw_GFLOP/s"] = c.flops() * n / fw_sum * 1e-9;
  state.counters["fw/raw"] = raw_sum / fw_sum;
  PairResult& r = Results()[c.name];  // over all repetitions: best call, mean of every call
  r.fw_best = r.calls == 0 ? fw_best : std::min(r.fw_best, fw_best);
  r.raw_best = r.calls == 0 ? raw_best : std::min(r.raw_best, raw_best);
  r.fw_total += fw_sum;
  r.raw_total += raw_sum;
  r.calls += n;
}

void PrintTable(const std::vector<GemmCase>& cases) {
  std::printf("\nframework MatMul vs raw cblas_sgemm, %ld rows (batch %ld x length %ld), calls interleaved\n",
              static_cast<long>(kRows), static_cast<long>(kBatch), static_cast<long>(kLength));
  std::printf("%-18s %5s %5s %5s %3s %11s %11s %8s %9s %8s\n", "GEMM", "M", "N", "K", "op", "fw GFLOP/s",
              "raw GFLOP/s", "fw/raw", "fw ms", "fw/raw");
  std::printf("%-18s %5s %5s %5s %3s %11s %11s %8s %9s %8s\n", "", "", "", "", "", "(best)", "(best)",
              "(best)", "(mean)", "(mean)");
  double worst_best = 1e9, worst_mean = 1e9;
  for (const GemmCase& c : cases) {
    auto it = Results().find(c.name);
    if (it == Results().end()) continue;
    const PairResult& r = it->second;
    worst_best = std::min(worst_best, r.raw_best / r.fw_best);
    worst_mean = std::min(worst_mean, r.raw_total / r.fw_total);
    std::printf("%-18s %5ld %5ld %5ld  %c%c %11.1f %11.1f %7.1f%% %9.2f %7.1f%%\n", c.name.c_str(),
                static_cast<long>(c.m), static_cast<long>(c.n), static_cast<long>(c.k), c.ta ? 't' : 'n',
                c.tb ? 't' : 'n', c.flops() / r.fw_best * 1e-9, c.flops() / r.raw_best * 1e-9,
                100 * r.raw_best / r.fw_best, 1e3 * r.fw_total / r.calls, 100 * r.raw_total / r.fw_total);
  }
  std::printf("worst fw/raw: %.1f%% (best calls), %.1f%% (means); requirement >= 80%%\n", 100 * worst_best,
              100 * worst_mean);
}

}  // namespace
}  // namespace mimetic::ops

int main(int argc, char** argv) {
  const std::vector<mimetic::ops::GemmCase> cases = mimetic::ops::Cases();
  for (const mimetic::ops::GemmCase& c : cases) {
    benchmark::RegisterBenchmark(c.name.c_str(), mimetic::ops::BM_Pair, c)
        ->UseManualTime()
        ->MinTime(1.0)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  mimetic::ops::PrintTable(cases);
  benchmark::Shutdown();
  return 0;
}
