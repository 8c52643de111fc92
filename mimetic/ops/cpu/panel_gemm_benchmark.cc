// PanelGemm against OpenBLAS's cblas_sgemm on the GEMMs of a Mamba 2 layer's Linear maps (rows =
// batch 64 x 128 tokens; in_proj's five parts and out_proj at widths 64 and 256, forward, input
// gradient and weight gradient), alternating the two in one run, on 1 and 2 threads. Prints GFLOP/s
// of both and the ratio; PanelGemmSuits says which one MatMul uses.
//
//   tools/bazel run //mimetic/ops:cpu_panel_gemm_benchmark
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "mimetic/ops/cpu/panel_gemm.h"

namespace mimetic::ops::cpu {
namespace {

struct Shape {
  const char* name;
  bool ta, tb;
  int64_t m, n, k;
};

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

double Seconds(const std::function<void()>& f, int reps) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < reps; ++r) f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
}

void Run(const Shape& s, int threads) {
  const int64_t lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
  std::vector<float> a((s.ta ? s.k : s.m) * lda), b((s.tb ? s.n : s.k) * ldb), c(s.m * s.n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) * 0.01f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 7) * 0.01f;
  auto blas = [&] {
    cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans, s.tb ? CblasTrans : CblasNoTrans, s.m, s.n,
                s.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(), s.n);
  };
  auto panel = [&] {
    PanelGemm<float>(s.ta, s.tb, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, c.data(), s.n);
  };
  const bool suits = PanelGemmSuits(s.ta, s.tb, s.m, s.n, s.k, s.n % Simd<float>::kWidth == 0);
  const double flops = 2.0 * s.m * s.n * s.k;
  const int reps = std::max(3, static_cast<int>(2e9 / flops));
  double tb = 1e30, tp = 1e30;
  for (int round = 0; round < 3; ++round) {  // alternate; keep each one's best round
    tb = std::min(tb, Seconds(blas, reps));
    if (suits) tp = std::min(tp, Seconds(panel, reps));
  }
  if (suits) {
    std::printf(
        "  %-16s %6ld x %4ld x %5ld  %d thr  OpenBLAS %6.1f  panel %6.1f GFLOP/s  panel/OpenBLAS %.2f\n",
        s.name, s.m, s.n, s.k, threads, flops / tb * 1e-9, flops / tp * 1e-9, tb / tp);
  } else {
    std::printf("  %-16s %6ld x %4ld x %5ld  %d thr  OpenBLAS %6.1f  (panel not used at this shape)\n",
                s.name, s.m, s.n, s.k, threads, flops / tb * 1e-9);
  }
}

}  // namespace
}  // namespace mimetic::ops::cpu

int main() {
  using mimetic::ops::cpu::Shape;
  const int64_t rows = 64 * 128;
  std::vector<Shape> shapes;
  for (int64_t d : {64, 128, 256, 512}) {
    const int64_t e = 2 * d, h = e / 16, n = 32;
    // in_proj parts (z and x: e wide; B and C: n; dt: h), then out_proj.
    for (int64_t part : {e, n, h}) {
      shapes.push_back({"in_proj fwd", false, true, rows, part, d});
      shapes.push_back({"in_proj dx", false, false, rows, d, part});
      shapes.push_back({"in_proj dW", true, false, part, d, rows});
    }
    shapes.push_back({"out_proj fwd", false, true, rows, d, e});
    shapes.push_back({"out_proj dx", false, false, rows, e, d});
    shapes.push_back({"out_proj dW", true, false, d, e, rows});
  }
  std::printf("PanelGemm vs OpenBLAS sgemm, %s (M x N x K; best of 3 alternating rounds)\n",
              mimetic::ops::cpu::CpuModel().c_str());
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    openblas_set_num_threads(threads);
    for (const Shape& s : shapes) mimetic::ops::cpu::Run(s, threads);
  }
  return 0;
}
