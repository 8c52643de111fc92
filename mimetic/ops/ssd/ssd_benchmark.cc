// SSD throughput on the fast CPU backend (the chunked algorithm), f32, batch 64, L 128 (the main
// job's rows), chunk_size in {32 (the main job's), 64}, d_model in {64, 128, 256} so E = 2 d_model,
// head dim P in {16, 32} (H = E / P), N in {16, 32, 64}, G = 1.
// "GFLOP/s" counts the chunked algorithm's arithmetic, 2 flops per multiply-add of its products
// with the causal halves of the q x q blocks (per chunk of q steps):
//   forward   per group: C Bᵀ N q(q+1);  per head: 4 q N P (state-to-output, chunk state) + P q(q+1)
//   backward  per group: C Bᵀ N q(q+1);  per head: 10 q N P + 2 P q(q+1) + 2 N q(q+1)  (with the
//             recomputation of the chunk states)
//
//   tools/bazel run //mimetic/ops:ssd_benchmark
#include <algorithm>
#include <vector>

#include "benchmark/benchmark.h"
#include "mimetic/core/key.h"
#include "mimetic/core/random.h"
#include "mimetic/ops/ssd/ssd.h"

namespace mimetic::ops {
namespace {

constexpr int64_t kBatch = 64, kLength = 128;

// [x, dt, A, Bm, Cm, D, dt_bias, dy, dlast_state]
std::vector<Tensor> Inputs(int64_t H, int64_t P, int64_t N) {
  const int64_t B = kBatch, L = kLength, G = 1;
  core::Key key = core::Key::FromSeed(5);
  auto normal = [&](int i, core::Shape s) { return core::Normal(core::FoldIn(key, i), s).value(); };
  return {normal(0, {B, L, H, P}),
          normal(1, {B, L, H}),
          core::Uniform(core::FoldIn(key, 2), {H}, -8.0, -1.0).value(),
          normal(3, {B, L, G, N}),
          normal(4, {B, L, G, N}),
          normal(5, {H}),
          core::Uniform(core::FoldIn(key, 6), {H}, -4.0, -2.0).value(),
          normal(7, {B, L, H, P}),
          normal(8, {B, H, P, N})};
}

double Flops(int64_t H, int64_t P, int64_t N, int64_t chunk, bool backward) {
  double total = 0;
  for (int64_t t0 = 0; t0 < kLength; t0 += chunk) {
    const double q = std::min(chunk, kLength - t0);
    const double tri = q * (q + 1);
    const double fwd = N * tri + H * (4 * q * N * P + P * tri);
    const double bwd = N * tri + H * (10 * q * N * P + 2 * P * tri + 2 * N * tri);
    total += fwd + (backward ? bwd : 0);
  }
  return total * kBatch;
}

void SetCounters(benchmark::State& state, int64_t H, int64_t P, int64_t N, int64_t chunk,
                 bool backward) {
  state.counters["GFLOP/s"] = benchmark::Counter(Flops(H, P, N, chunk, backward) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_SsdForward(benchmark::State& state) {
  const int64_t E = 2 * state.range(0), P = state.range(1), N = state.range(2), H = E / P;
  const int64_t chunk = state.range(3);
  const std::vector<Tensor> t = Inputs(H, P, N);
  for (auto _ : state) {
    SsdResult r = Ssd(t[0], t[1], t[2], t[3], t[4], t[5], t[6], chunk);
    if (!r.y.ok()) state.SkipWithError(r.y.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
  }
  SetCounters(state, H, P, N, chunk, false);
}

void BM_SsdForwardBackward(benchmark::State& state) {
  const int64_t E = 2 * state.range(0), P = state.range(1), N = state.range(2), H = E / P;
  const int64_t chunk = state.range(3);
  const std::vector<Tensor> t = Inputs(H, P, N);
  for (auto _ : state) {
    SsdResult r = Ssd(t[0], t[1], t[2], t[3], t[4], t[5], t[6], chunk);
    SsdGrads g = SsdBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], chunk);
    if (!g.dx.ok()) state.SkipWithError(g.dx.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(g);
  }
  SetCounters(state, H, P, N, chunk, true);
}

BENCHMARK(BM_SsdForward)
    ->ArgsProduct({{64, 128, 256}, {16, 32}, {16, 32, 64}, {32, 64}})
    ->ArgNames({"d_model", "P", "N", "chunk"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SsdForwardBackward)
    ->ArgsProduct({{64, 128, 256}, {16, 32}, {16, 32, 64}, {32, 64}})
    ->ArgNames({"d_model", "P", "N", "chunk"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace mimetic::ops
