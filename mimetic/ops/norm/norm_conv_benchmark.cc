// Throughput of the fast CPU norm and conv kernels at a training-step shape (batch 64, L 103):
//   tools/bazel run //mimetic/ops:norm_conv_benchmark
// bytes_per_second counts each tensor read or written once (inputs + outputs), so it is the
// effective memory bandwidth; the parameter vectors are negligible at these sizes.
#include <cstdint>
#include <vector>

#include "benchmark/benchmark.h"
#include "mimetic/core/key.h"
#include "mimetic/core/random.h"
#include "mimetic/ops/conv1d/conv1d.h"
#include "mimetic/ops/norm/norm.h"

namespace mimetic::ops {
namespace {

constexpr int64_t kBatch = 64;
constexpr int64_t kLength = 103;
constexpr double kEps = 1e-5;

Tensor Randn(uint32_t seed, core::Shape shape) {
  return core::Normal(core::FoldIn(core::Key::FromSeed(42), seed), shape, core::DType::kF32).value();
}

// Sets bytes_per_second from `tensors_moved` activation-sized (B, L, width) f32 tensors per call.
void SetBytes(benchmark::State& state, int64_t width, int64_t tensors_moved) {
  state.SetBytesProcessed(state.iterations() * tensors_moved * kBatch * kLength * width *
                          int64_t(sizeof(float)));
}

void BM_RmsNormForward(benchmark::State& state) {
  const int64_t d = state.range(0);
  Tensor x = Randn(1, {kBatch, kLength, d}), w = Randn(2, {d});
  for (auto _ : state) benchmark::DoNotOptimize(RmsNorm(x, w, kEps));
  SetBytes(state, d, 2);  // x, y
}

void BM_RmsNormBackward(benchmark::State& state) {
  const int64_t d = state.range(0);
  Tensor x = Randn(1, {kBatch, kLength, d}), w = Randn(2, {d}), g = Randn(3, {kBatch, kLength, d});
  for (auto _ : state) benchmark::DoNotOptimize(RmsNormBackward(x, w, g, kEps));
  SetBytes(state, d, 3);  // x, dout, dx
}

// E = 2 D, one group over all of E (Mamba 2 with ngroups = 1).
void BM_GatedRmsNormForward(benchmark::State& state) {
  const int64_t e = 2 * state.range(0);
  Tensor y = Randn(1, {kBatch, kLength, e}), z = Randn(4, {kBatch, kLength, e}), w = Randn(2, {e});
  for (auto _ : state) benchmark::DoNotOptimize(GatedRmsNorm(y, z, w, e, kEps));
  SetBytes(state, e, 3);  // y, z, out
}

void BM_GatedRmsNormBackward(benchmark::State& state) {
  const int64_t e = 2 * state.range(0);
  Tensor y = Randn(1, {kBatch, kLength, e}), z = Randn(4, {kBatch, kLength, e}), w = Randn(2, {e});
  Tensor g = Randn(3, {kBatch, kLength, e});
  for (auto _ : state) benchmark::DoNotOptimize(GatedRmsNormBackward(y, z, w, g, e, kEps));
  SetBytes(state, e, 5);  // y, z, dout, dy, dz
}

// Conv over C = E = 2 D channels, K = 4 (Mamba 1's conv input width).
void BM_CausalConv1dForward(benchmark::State& state) {
  const int64_t c = 2 * state.range(0);
  Tensor x = Randn(1, {kBatch, kLength, c}), w = Randn(2, {c, 4}), b = Randn(5, {c});
  for (auto _ : state) benchmark::DoNotOptimize(CausalConv1d(x, w, b));
  SetBytes(state, c, 2);  // x, out
}

void BM_CausalConv1dBackward(benchmark::State& state) {
  const int64_t c = 2 * state.range(0);
  Tensor x = Randn(1, {kBatch, kLength, c}), w = Randn(2, {c, 4}), g = Randn(3, {kBatch, kLength, c});
  for (auto _ : state) benchmark::DoNotOptimize(CausalConv1dBackward(x, w, g));
  SetBytes(state, c, 3);  // x, dout, dx
}

BENCHMARK(BM_RmsNormForward)->ArgName("D")->Arg(64)->Arg(128)->UseRealTime();
BENCHMARK(BM_RmsNormBackward)->ArgName("D")->Arg(64)->Arg(128)->UseRealTime();
BENCHMARK(BM_GatedRmsNormForward)->ArgName("D")->Arg(64)->Arg(128)->UseRealTime();
BENCHMARK(BM_GatedRmsNormBackward)->ArgName("D")->Arg(64)->Arg(128)->UseRealTime();
BENCHMARK(BM_CausalConv1dForward)->ArgName("D")->Arg(64)->Arg(128)->UseRealTime();
BENCHMARK(BM_CausalConv1dBackward)->ArgName("D")->Arg(64)->Arg(128)->UseRealTime();

}  // namespace
}  // namespace mimetic::ops
