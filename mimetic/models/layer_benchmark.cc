// Throughput of ONE whole mixer layer (Mamba1Forward / Mamba2Forward: in_proj, conv, SiLU, scan,
// gate or gated norm, out_proj; no residual norm, no embedding or head), jitted as training runs it,
// at the copy experiment's shapes: B 64, L 103, D in {64, 128, 256}, E = 2D, f32, CPU fast backend.
//   Mamba 1: N in {16, 32}, dt_rank auto = ceil(D / 16).
//   Mamba 2: N in {32, 64}, head dim P in {16, 32} (H = E / P), G 1, chunk 32 (copy.textproto).
// "Forward" replays a Jit of the layer; "ForwardBackward" replays a Jit of
// ValueAndGrad(SumAll(Square(layer(u)))) with respect to the layer's parameters AND u, as for any
// layer of a stack but the first (the input gradient is one more GEMM against in_proj).
//
// "GFLOP/s" counts the layer as mimetic/models/flops.h does (T = B L tokens; 2 flops per multiply-add):
//   GEMMs: Mamba 1  2 T (D 2E + E (R + 2N) + R E + E D)   (in_proj, x_proj, dt_proj, out_proj)
//          Mamba 2  2 T (D (2E + 2GN + H) + E D)          (in_proj, out_proj)
//          forward x1; forward + backward x3 (dX and dW each cost a forward GEMM).
//   Scan:  Mamba 1  9 T E N forward, 27 T E N forward + backward (as selective_scan_benchmark);
//          Mamba 2  the chunked SSD's products with the causal halves of the q x q blocks, per chunk
//                   of q steps (as ssd_benchmark):
//                     forward   G N q(q+1) + H (4 q N P + P q(q+1))
//                     backward  G N q(q+1) + H (10 q N P + 2 P q(q+1) + 2 N q(q+1))
//   Conv, SiLU, softplus, gating, the gated RMSNorm and the loss are not counted (O(T E) each).
//
//   tools/bazel run -c opt //mimetic/models:layer_benchmark
//   tools/bazel run -c opt //mimetic/models:layer_benchmark -- --benchmark_filter=Mamba2
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/random.h"
#include "mimetic/models/flops.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"

namespace mimetic::models {
namespace {

using core::ParamTree;

constexpr int64_t kBatch = 64, kLength = 103, kChunk = 32;
constexpr char kPrefix[] = "layers/0/mixer/";
constexpr char kInput[] = "input/u";  // u as a leaf of the differentiated tree

struct Layer {
  ModelSpec spec;  // one layer, resolved
  ParamTree tree;  // the mixer's parameters, then kInput (B, L, D)
};

// mamba_ssm's default init of a one-layer model; only the mixer's parameters are kept.
Layer MakeLayer(int64_t d_model, const std::string& mixer) {
  Layer layer;
  layer.spec = ParseModelSpec(absl::StrCat("vocab_size: 8 d_model: ", d_model, " n_layer: 1 default_layer { ",
                                           mixer, " }"))
                   .value();
  ParamTree params = Init(core::Key::FromSeed(0), layer.spec).value().Select("layers/0/mixer/**");
  Tensor u = core::Normal(core::Key::FromSeed(1), {kBatch, kLength, d_model}).value();
  layer.tree = params.With(kInput, u).value();
  return layer;
}

Tensor Forward(const ModelSpec& spec, const ParamTree& tree, const Tensor& u) {
  const LayerSpec& l = spec.layers(0);
  return l.has_mamba1() ? Mamba1Forward(tree, kPrefix, l.mamba1(), spec.d_model(), u)
                        : Mamba2Forward(tree, kPrefix, l.mamba2(), spec.d_model(), u);
}

// Inputs: the tree's leaves (parameters, then u). Forward: {out}; with backward: {loss, grads...}.
core::Jit MakeJit(const Layer& layer, bool backward) {
  return core::Jit(
      [&layer, backward](absl::Span<const Tensor> in) -> std::vector<Tensor> {
        ParamTree tree = layer.tree.WithLeaves(std::vector<Tensor>(in.begin(), in.end())).value();
        if (!backward) return {Forward(layer.spec, tree, in.back())};
        auto loss = [&layer](const ParamTree& p, absl::Span<const Tensor>) {
          return ops::SumAll(ops::Square(Forward(layer.spec, p, p.Get(kInput).value())));
        };
        absl::StatusOr<core::ValueAndGradResult> vg = core::ValueAndGrad(loss)(tree, {});
        if (!vg.ok()) return {Tensor::Error(vg.status())};
        std::vector<Tensor> out = {vg->value};
        out.insert(out.end(), vg->grads.Leaves().begin(), vg->grads.Leaves().end());
        return out;
      },
      backward ? "layer_forward_backward" : "layer_forward");
}

void Run(benchmark::State& state, const Layer& layer, bool backward, double flops) {
  core::Jit jit = MakeJit(layer, backward);
  const std::vector<Tensor>& inputs = layer.tree.Leaves();
  {
    absl::StatusOr<std::vector<Tensor>> warm = jit(inputs);  // trace + plan, not timed
    if (!warm.ok()) {
      state.SkipWithError(warm.status().ToString().c_str());
      return;
    }
  }
  for (auto _ : state) {
    absl::StatusOr<std::vector<Tensor>> out = jit(inputs);
    if (!out.ok()) {
      state.SkipWithError(out.status().ToString().c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["nodes"] = static_cast<double>(jit.last_stats().num_nodes);
}

void Mamba1(benchmark::State& state, bool backward) {
  const int64_t D = state.range(0), N = state.range(1);
  const Layer layer = MakeLayer(D, absl::StrCat("mamba1 { d_state: ", N, " }"));
  Run(state, layer, backward,
      Mamba1LayerFlops(Mamba1DimsOf(layer.spec.layers(0).mamba1(), D), kBatch, kLength, backward));
}

void Mamba2(benchmark::State& state, bool backward) {
  const int64_t D = state.range(0), P = state.range(1), N = state.range(2);
  const Layer layer =
      MakeLayer(D, absl::StrCat("mamba2 { d_state: ", N, " headdim: ", P, " chunk_size: ", kChunk, " }"));
  Run(state, layer, backward,
      Mamba2LayerFlops(Mamba2DimsOf(layer.spec.layers(0).mamba2(), D), kChunk, kBatch, kLength, backward));
}

void BM_Mamba1LayerForward(benchmark::State& state) { Mamba1(state, false); }
void BM_Mamba1LayerForwardBackward(benchmark::State& state) { Mamba1(state, true); }
void BM_Mamba2LayerForward(benchmark::State& state) { Mamba2(state, false); }
void BM_Mamba2LayerForwardBackward(benchmark::State& state) { Mamba2(state, true); }

BENCHMARK(BM_Mamba1LayerForward)
    ->ArgsProduct({{64, 128, 256}, {16, 32}})
    ->ArgNames({"d_model", "N"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Mamba1LayerForwardBackward)
    ->ArgsProduct({{64, 128, 256}, {16, 32}})
    ->ArgNames({"d_model", "N"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Mamba2LayerForward)
    ->ArgsProduct({{64, 128, 256}, {16, 32}, {32, 64}})
    ->ArgNames({"d_model", "P", "N"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Mamba2LayerForwardBackward)
    ->ArgsProduct({{64, 128, 256}, {16, 32}, {32, 64}})
    ->ArgNames({"d_model", "P", "N"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace mimetic::models
