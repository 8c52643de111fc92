// Timings of causal softmax / linear attention on the fast CPU path at the paper's training sizes
// (batch 64, L 103 = a 50-token copy with separators, H 1 and 4, P 32 and 64), forward alone and
// forward + backward (through the tape, as training runs it). Also the reference and, for linear
// attention, the recurrent form for comparison with the quadratic form the fast path uses.
//
//   tools/bazel run -c opt //mimetic/ops:attention_benchmark
#include <cmath>
#include <vector>

#include "benchmark/benchmark.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/key.h"
#include "mimetic/core/op.h"
#include "mimetic/core/random.h"
#include "mimetic/ops/attention/attention.h"

namespace mimetic::ops {
namespace {

struct Inputs {
  Tensor q, k, v, dout;
};

Inputs MakeInputs(const benchmark::State& state) {
  const int64_t B = 64, L = 103, H = state.range(0), P = state.range(1);
  const core::Key key = core::Key::FromSeed(1);
  auto normal = [&](uint32_t i) { return core::Normal(core::FoldIn(key, i), {B, L, H, P}).value(); };
  return {normal(0), normal(1), normal(2), normal(3)};
}

Tensor Run(bool softmax, const Inputs& in) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(in.q.dim(3)));
  return softmax ? CausalSoftmaxAttention(in.q, in.k, in.v, scale) : CausalLinearAttention(in.q, in.k, in.v);
}

void SetCounters(benchmark::State& state) {
  state.SetItemsProcessed(state.iterations() * 64 * 103);  // tokens
}

template <bool kSoftmax>
void BM_Forward(benchmark::State& state) {
  const Inputs in = MakeInputs(state);
  for (auto _ : state) {
    Tensor out = Run(kSoftmax, in);
    benchmark::DoNotOptimize(out.storage()->data());
  }
  SetCounters(state);
}

template <bool kSoftmax>
void BM_ForwardBackward(benchmark::State& state) {
  const Inputs in = MakeInputs(state);
  auto f = [](absl::Span<const Tensor> x) {
    return std::vector<Tensor>{Run(kSoftmax, {x[0], x[1], x[2], Tensor()})};
  };
  for (auto _ : state) {
    auto grads = core::Vjp(f, {in.q, in.k, in.v}, {in.dout});
    if (!grads.ok()) state.SkipWithError(std::string(grads.status().message()).c_str());
    benchmark::DoNotOptimize(grads);
  }
  SetCounters(state);
}

template <bool kSoftmax>
void BM_ForwardReference(benchmark::State& state) {
  const Inputs in = MakeInputs(state);
  core::ScopedCpuBackend reference(core::Backend::kReference);
  for (auto _ : state) {
    Tensor out = Run(kSoftmax, in);
    benchmark::DoNotOptimize(out.storage()->data());
  }
  SetCounters(state);
}

// The recurrent form of linear attention (S_t = S_{t-1} + k_t v_tᵀ, out_t = q_tᵀ S_t), single
// threaded over the B·H heads, for the record: 2·L·Pk·Pv multiply-adds per head against the
// quadratic form's ~L²·(Pk + Pv) (half of it masked away).
void BM_LinearRecurrentForm(benchmark::State& state) {
  const Inputs in = MakeInputs(state);
  const int64_t B = 64, L = 103, H = state.range(0), P = state.range(1);
  const float *q = in.q.data<float>(), *k = in.k.data<float>(), *v = in.v.data<float>();
  std::vector<float> out(B * L * H * P);
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (int64_t bh = 0; bh < B * H; ++bh) {
      std::vector<float> s(P * P, 0.0f);
      const int64_t b = bh / H, h = bh % H;
      for (int64_t t = 0; t < L; ++t) {
        const int64_t i = ((b * L + t) * H + h) * P;
        for (int64_t a = 0; a < P; ++a)
          for (int64_t c = 0; c < P; ++c) s[a * P + c] += k[i + a] * v[i + c];
        float* o = &out[i];
        for (int64_t c = 0; c < P; ++c) o[c] = 0;
        for (int64_t a = 0; a < P; ++a)
          for (int64_t c = 0; c < P; ++c) o[c] += q[i + a] * s[a * P + c];
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  SetCounters(state);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"H", "P"})
      ->Args({1, 32})
      ->Args({1, 64})
      ->Args({4, 32})
      ->Args({4, 64})
      ->Unit(benchmark::kMillisecond);
  b->UseRealTime();
}

BENCHMARK_TEMPLATE(BM_Forward, true)->Name("softmax/forward")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_ForwardBackward, true)->Name("softmax/forward_backward")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Forward, false)->Name("linear/forward")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_ForwardBackward, false)->Name("linear/forward_backward")->Apply(Sizes);
BENCHMARK(BM_LinearRecurrentForm)->Name("linear/recurrent_form_forward")->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_ForwardReference, true)
    ->Name("softmax/forward_reference")
    ->Args({1, 32})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace mimetic::ops
