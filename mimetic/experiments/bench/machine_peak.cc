#include "mimetic/experiments/bench/machine_peak.h"

#include <cblas.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <vector>

#include "mimetic/experiments/runner/threads.h"

namespace mimetic::experiments {
namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// 12 independent accumulators cover the FMA latency (4 cycles) times the FMA ports (2) with room to
// spare; acc = acc * m + a converges to a / (1 - m), so the values stay normal floats throughout.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
float FmaLoop(long iterations) {
  __m512 acc[12];
  for (int j = 0; j < 12; ++j) acc[j] = _mm512_set1_ps(1.0f + j);
  const __m512 m = _mm512_set1_ps(0.999999f), a = _mm512_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
    for (int j = 0; j < 12; ++j) acc[j] = _mm512_fmadd_ps(acc[j], m, a);
  }
  float sum = 0;
  for (int j = 0; j < 12; ++j) sum += _mm512_reduce_add_ps(acc[j]);
  return sum;
}
#elif defined(__AVX2__) && defined(__FMA__)
constexpr int kLanes = 8;
float FmaLoop(long iterations) {
  __m256 acc[12];
  for (int j = 0; j < 12; ++j) acc[j] = _mm256_set1_ps(1.0f + j);
  const __m256 m = _mm256_set1_ps(0.999999f), a = _mm256_set1_ps(1e-6f);
  for (long i = 0; i < iterations; ++i) {
    for (int j = 0; j < 12; ++j) acc[j] = _mm256_fmadd_ps(acc[j], m, a);
  }
  alignas(32) float out[8];
  float sum = 0;
  for (int j = 0; j < 12; ++j) {
    _mm256_store_ps(out, acc[j]);
    for (float v : out) sum += v;
  }
  return sum;
}
#else
constexpr int kLanes = 1;
float FmaLoop(long iterations) {
  float acc[12];
  for (int j = 0; j < 12; ++j) acc[j] = 1.0f + j;
  for (long i = 0; i < iterations; ++i) {
    for (int j = 0; j < 12; ++j) acc[j] = std::fma(acc[j], 0.999999f, 1e-6f);
  }
  float sum = 0;
  for (float v : acc) sum += v;
  return sum;
}
#endif

}  // namespace

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
    }
  }
  return "unknown CPU";
}

std::string FmaIsa() { return kLanes == 16 ? "avx512f" : kLanes == 8 ? "avx2+fma" : "scalar fma"; }

double FmaPeakGflops(int threads, long iterations, int repeats) {
  threads = std::max(1, threads);
  double best = 0;
  volatile float sink = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(threads)
    {
      const float s = FmaLoop(iterations);
#pragma omp critical
      sink = sink + s;
    }
    const double flops = 2.0 * kLanes * 12 * double(iterations) * threads;
    best = std::max(best, flops / Seconds(t0) * 1e-9);
  }
  return best;
}

double SgemmGflops(int n, int threads, int repeats) {
  SetThreadCount(threads);
  std::vector<float> a(size_t(n) * n), b(size_t(n) * n), c(size_t(n) * n);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = float(i % 7) * 0.25f - 0.75f;
    b[i] = float(i % 5) * 0.5f - 1.0f;
  }
  auto product = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f,
                c.data(), n);
  };
  product();
  double best = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    product();
    best = std::max(best, 2.0 * n * double(n) * n / Seconds(t0) * 1e-9);
  }
  return best;
}

}  // namespace mimetic::experiments
