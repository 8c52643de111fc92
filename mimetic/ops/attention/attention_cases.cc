// Backend-consistency rows for causal softmax / linear attention (attention.h): edge shapes (B, L, H,
// P of 1), odd sizes, Pk != Pv, L above kAttentionRowBlock (several row blocks, a ragged last one;
// linear attention in both its chunked and its quadratic fast form, see attention_test),
// extreme softmax scales, and the backward primitives themselves (so the fast backward is compared
// with the reference, not only the reference VJP with finite differences).
//
// Tolerances: f32 fast vs reference. Outputs are sums of up to L·P products of N(0, 1) values;
// the GEMMs' float rounding is ~1e-7 of sum |terms| (up to ~300 for linear attention at L 70), hence
// atol 1e-4 where outputs are unnormalised sums. Finite differences (f64, eps 1e-6) are exact to
// ~1e-9 except at large softmax scales, where curvature grows like scale³.
#include <cmath>

#include "mimetic/ops/attention/attention.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;

OpCase Softmax(const std::string& name, core::Shape qk, core::Shape v, double scale) {
  OpCase c{
      name, {Input::Normal(qk), Input::Normal(qk), Input::Normal(v)}, [scale](absl::Span<const Tensor> in) {
        return std::vector<Tensor>{CausalSoftmaxAttention(in[0], in[1], in[2], scale)};
      }};
  return c;
}

OpCase Linear(const std::string& name, core::Shape qk, core::Shape v) {
  OpCase c{name, {Input::Normal(qk), Input::Normal(qk), Input::Normal(v)}, [](absl::Span<const Tensor> in) {
             return std::vector<Tensor>{CausalLinearAttention(in[0], in[1], in[2])};
           }};
  c.atol = 1e-4;
  return c;
}

// The backward primitive on its own: fast vs reference only (it has no VJP).
OpCase Backward(const std::string& name, AttentionKind kind, core::Shape qk, core::Shape v, double scale) {
  OpCase c{name,
           {Input::Normal(qk), Input::Normal(qk), Input::Normal(v), Input::Normal(v)},
           [kind, scale](absl::Span<const Tensor> in) {
             return kind == AttentionKind::kSoftmax
                        ? CausalSoftmaxAttentionBackward(in[0], in[1], in[2], in[3], scale)
                        : CausalLinearAttentionBackward(in[0], in[1], in[2], in[3]);
           }};
  c.atol = 1e-4;
  c.check_grad = false;
  return c;
}

OpCase Weights(const std::string& name, AttentionKind kind, core::Shape qk, double scale) {
  OpCase c{name, {Input::Normal(qk), Input::Normal(qk)}, [kind, scale](absl::Span<const Tensor> in) {
             return std::vector<Tensor>{kind == AttentionKind::kSoftmax
                                            ? CausalSoftmaxAttentionWeights(in[0], in[1], scale)
                                            : CausalLinearAttentionWeights(in[0], in[1])};
           }};
  return c;
}

OpCase WeightsBackward(const std::string& name, AttentionKind kind, core::Shape qk, double scale) {
  const core::Shape w = {qk[0], qk[2], qk[1], qk[1]};
  OpCase c{name,
           {Input::Normal(qk), Input::Normal(qk), Input::Normal(w)},
           [kind, scale](absl::Span<const Tensor> in) {
             return kind == AttentionKind::kSoftmax
                        ? CausalSoftmaxAttentionWeightsBackward(in[0], in[1], in[2], scale)
                        : CausalLinearAttentionWeightsBackward(in[0], in[1], in[2]);
           }};
  c.atol = 1e-4;
  c.check_grad = false;
  return c;
}

std::vector<OpCase> AttentionCases() {
  constexpr auto kS = AttentionKind::kSoftmax;
  constexpr auto kL = AttentionKind::kLinear;
  std::vector<OpCase> cases = {
      Softmax("attention/softmax/unit", {1, 1, 1, 1}, {1, 1, 1, 1}, 1.0),
      Softmax("attention/softmax/odd", {2, 7, 3, 4}, {2, 7, 3, 4}, 0.5),
      Softmax("attention/softmax/pk_ne_pv", {1, 5, 2, 3}, {1, 5, 2, 5}, 1 / std::sqrt(3.0)),
      Softmax("attention/softmax/blocks", {1, 70, 2, 2}, {1, 70, 2, 3}, 0.7),
      Softmax("attention/softmax/scale_tiny", {1, 6, 2, 3}, {1, 6, 2, 3}, 1e-4),
      Softmax("attention/softmax/scale_negative", {2, 5, 1, 3}, {2, 5, 1, 2}, -2.0),
      Softmax("attention/softmax/scale_large", {1, 6, 2, 3}, {1, 6, 2, 3}, 8.0),
      Linear("attention/linear/unit", {1, 1, 1, 1}, {1, 1, 1, 1}),
      Linear("attention/linear/odd", {2, 7, 3, 4}, {2, 7, 3, 4}),
      Linear("attention/linear/pk_gt_pv", {1, 6, 2, 5}, {1, 6, 2, 2}),
      Linear("attention/linear/pk_lt_pv", {2, 5, 1, 2}, {2, 5, 1, 6}),
      Linear("attention/linear/blocks", {1, 70, 2, 2}, {1, 70, 2, 3}),         // chunked form
      Linear("attention/linear/wide_blocks", {1, 40, 1, 40}, {1, 40, 1, 40}),  // quadratic form
      Backward("attention/softmax_backward/odd", kS, {2, 7, 3, 4}, {2, 7, 3, 5}, 0.5),
      Backward("attention/softmax_backward/blocks", kS, {2, 103, 2, 8}, {2, 103, 2, 6}, 0.35),
      Backward("attention/softmax_backward/unit", kS, {1, 1, 1, 1}, {1, 1, 1, 1}, 1.0),
      Backward("attention/linear_backward/odd", kL, {2, 7, 3, 4}, {2, 7, 3, 5}, 1.0),
      Backward("attention/linear_backward/blocks", kL, {2, 103, 2, 8}, {2, 103, 2, 6}, 1.0),  // chunked
      Backward("attention/linear_backward/ragged", kL, {1, 65, 3, 3}, {1, 65, 3, 2}, 1.0),    // chunked
      Backward("attention/linear_backward/wide_blocks", kL, {1, 40, 2, 40}, {1, 40, 2, 40},
               1.0),  // quadratic
      Weights("attention/softmax_weights/odd", kS, {2, 7, 3, 4}, 0.5),
      Weights("attention/softmax_weights/blocks", kS, {1, 40, 1, 2}, 1.0),
      Weights("attention/linear_weights/odd", kL, {2, 7, 3, 4}, 1.0),
      Weights("attention/linear_weights/unit", kL, {1, 1, 1, 1}, 1.0),
      WeightsBackward("attention/softmax_weights_backward/blocks", kS, {2, 45, 2, 3}, 0.6),
      WeightsBackward("attention/linear_weights_backward/blocks", kL, {2, 45, 2, 3}, 1.0),
  };
  // Far outside exp's float range without the row max subtraction (scores ~ ±1e3): stays finite
  // and one-hot-like. Finite differences would only see the flat tails, so no gradient check.
  // Float rounding of scores ~1e3 moves the weights by ~1e-4 near ties, hence the looser atol.
  OpCase huge = Softmax("attention/softmax/scale_huge", {2, 9, 2, 4}, {2, 9, 2, 4}, 500.0);
  huge.check_grad = false;
  huge.atol = 1e-3;
  huge.rtol = 1e-3;
  cases.push_back(huge);
  for (OpCase& c : cases) {
    if (c.name == "attention/linear/wide_blocks") {  // FD checks only the reference; nothing new there
      c.check_grad = false;
      c.atol = 1e-3;  // sums of up to L·P = 1600 products
    }
    if (c.name == "attention/linear_backward/wide_blocks") c.atol = 1e-3;
    if (c.name == "attention/softmax/scale_large") {  // scores ~30: rounding 1e-5, FD error ~ scale³ eps²
      c.atol = 1e-4;
      c.grad_atol = 1e-5;
      c.grad_rtol = 1e-4;
    }
  }
  return cases;
}

MIMETIC_REGISTER_OP_CASES(AttentionCases);

}  // namespace
}  // namespace mimetic::ops
