// Selective scan throughput on the fast CPU backend, f32, batch 64, L 103 (the copy task's
// training shape), E in {128, 256, 512}, N in {16, 32}, with gate, delta_bias and softplus.
// "GFLOP/s" counts 9 flops per (b, t, d, n) for the forward (the exp as one) and 3x that for
// forward + backward, so the two rows are comparable.
//
//   tools/bazel run //mimetic/ops:selective_scan_benchmark
#include <vector>

#include "benchmark/benchmark.h"
#include "mimetic/core/key.h"
#include "mimetic/core/random.h"
#include "mimetic/ops/selective_scan/selective_scan.h"

namespace mimetic::ops {
namespace {

constexpr int64_t kBatch = 64, kLength = 103;

std::vector<Tensor> Inputs(int64_t E, int64_t N) {
  const int64_t B = kBatch, L = kLength;
  core::Key key = core::Key::FromSeed(5);
  auto normal = [&](int i, core::Shape s) { return core::Normal(core::FoldIn(key, i), s).value(); };
  return {normal(0, {B, L, E}),
          normal(1, {B, L, E}),
          core::Uniform(core::FoldIn(key, 2), {E, N}, -8.0, -1.0).value(),
          normal(3, {B, L, N}),
          normal(4, {B, L, N}),
          normal(5, {E}),
          normal(6, {B, L, E}),
          normal(7, {E}),
          normal(8, {B, L, E}),
          normal(9, {B, E, N})};
}

void SetCounters(benchmark::State& state, int64_t E, int64_t N, double flops_per_element) {
  state.counters["GFLOP/s"] = benchmark::Counter(flops_per_element * kBatch * kLength * E * N * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}

void BM_SelectiveScanForward(benchmark::State& state) {
  const int64_t E = state.range(0), N = state.range(1);
  const std::vector<Tensor> t = Inputs(E, N);
  for (auto _ : state) {
    SelectiveScanResult r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], true);
    if (!r.y.ok()) state.SkipWithError(r.y.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
  }
  SetCounters(state, E, N, 9);
}

void BM_SelectiveScanForwardBackward(benchmark::State& state) {
  const int64_t E = state.range(0), N = state.range(1);
  const std::vector<Tensor> t = Inputs(E, N);
  for (auto _ : state) {
    SelectiveScanResult r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], true);
    // One recomputation chunk per row, as Mamba 1 asks for on the CPU (models/mamba1.cc).
    SelectiveScanGrads g =
        SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], true, kLength);
    if (!g.du.ok()) state.SkipWithError(g.du.status().ToString().c_str());
    benchmark::DoNotOptimize(r);
    benchmark::DoNotOptimize(g);
  }
  SetCounters(state, E, N, 27);
}

// The backward alone at N 32 for several chunk sizes (the recomputation/scratch trade-off).
void BM_SelectiveScanBackwardChunk(benchmark::State& state) {
  const int64_t E = state.range(0), N = 32, chunk = state.range(1);
  const std::vector<Tensor> t = Inputs(E, N);
  for (auto _ : state) {
    SelectiveScanGrads g =
        SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], true, chunk);
    if (!g.du.ok()) state.SkipWithError(g.du.status().ToString().c_str());
    benchmark::DoNotOptimize(g);
  }
  SetCounters(state, E, N, 18);
}

BENCHMARK(BM_SelectiveScanForward)
    ->ArgsProduct({{128, 256, 512}, {16, 32}})
    ->ArgNames({"E", "N"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SelectiveScanForwardBackward)
    ->ArgsProduct({{128, 256, 512}, {16, 32}})
    ->ArgNames({"E", "N"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_SelectiveScanBackwardChunk)
    ->ArgsProduct({{128, 512}, {16, 32, 64, 128}})
    ->ArgNames({"E", "chunk"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace mimetic::ops
