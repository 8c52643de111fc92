// Backend-consistency rows for the causal depthwise conv1d (see testing/op_cases.h). The forward
// rows check the fast forward against the reference and the VJP against finite differences; the
// "backward" rows compare the fast backward primitive with the reference one.
#include <vector>

#include "mimetic/ops/conv1d/conv1d.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;

// x: (B, L, C), weight (C, K), bias (C).
OpCase Conv(const std::string& name, int64_t b, int64_t l, int64_t c, int64_t k) {
  return {"causal_conv1d/" + name,
          {Input::Normal({b, l, c}), Input::Normal({c, k}), Input::Normal({c})},
          [](absl::Span<const Tensor> in) { return std::vector<Tensor>{CausalConv1d(in[0], in[1], in[2])}; }};
}

OpCase ConvBackward(const std::string& name, int64_t b, int64_t l, int64_t c, int64_t k) {
  OpCase oc{"causal_conv1d_backward/" + name,
            {Input::Normal({b, l, c}), Input::Normal({c, k}), Input::Normal({b, l, c})},
            [](absl::Span<const Tensor> in) { return CausalConv1dBackward(in[0], in[1], in[2]); }};
  oc.check_grad = false;
  return oc;
}

// The SiLU-fused conv: forward against the reference and its VJP against finite differences; the
// backward primitive against the reference one.
OpCase ConvSilu(const std::string& name, int64_t b, int64_t l, int64_t c, int64_t k) {
  return {
      "causal_conv1d_silu/" + name,
      {Input::Normal({b, l, c}), Input::Normal({c, k}), Input::Normal({c})},
      [](absl::Span<const Tensor> in) { return std::vector<Tensor>{CausalConv1dSilu(in[0], in[1], in[2])}; }};
}

OpCase ConvSiluBackward(const std::string& name, int64_t b, int64_t l, int64_t c, int64_t k) {
  OpCase oc{
      "causal_conv1d_silu_backward/" + name,
      {Input::Normal({b, l, c}), Input::Normal({c, k}), Input::Normal({b, l, c}), Input::Normal({b, l, c})},
      [](absl::Span<const Tensor> in) { return CausalConv1dSiluBackward(in[0], in[1], in[2], in[3]); }};
  oc.check_grad = false;
  return oc;
}

std::vector<OpCase> Conv1dCases() {
  return {
      Conv("k4", 2, 6, 5, 4),
      Conv("k1", 2, 3, 3, 1),
      Conv("k4_l1", 2, 1, 3, 4),
      Conv("l_lt_k", 1, 2, 5, 4),
      Conv("c_odd_k3", 3, 7, 9, 3),
      Conv("b1_c1", 1, 5, 1, 4),
      Conv("k2", 2, 5, 4, 2),
      Conv("k5_generic", 2, 9, 3, 5),  // K without a compiled specialisation
      Conv("rows150", 3, 50, 2, 4),    // more rows than reduction blocks; blocks straddle batches
      ConvBackward("k4", 2, 6, 5, 4),
      ConvBackward("k1", 2, 3, 3, 1),
      ConvBackward("k4_l1", 2, 1, 3, 4),
      ConvBackward("l_lt_k", 1, 2, 5, 4),
      ConvBackward("c_odd_k3", 3, 7, 9, 3),
      ConvBackward("k2", 2, 5, 4, 2),
      ConvBackward("k5_generic", 2, 9, 3, 5),
      ConvBackward("rows500_c37", 5, 100, 37, 4),
      ConvSilu("k4", 2, 6, 5, 4),
      ConvSilu("l_lt_k", 1, 2, 5, 4),
      ConvSilu("k5_generic", 2, 9, 3, 5),
      ConvSiluBackward("k4", 2, 6, 5, 4),
      ConvSiluBackward("k1", 2, 3, 3, 1),
      ConvSiluBackward("l_lt_k", 1, 2, 5, 4),
      ConvSiluBackward("k5_generic", 2, 9, 3, 5),
      ConvSiluBackward("rows500_c37", 5, 100, 37, 4),
  };
}

MIMETIC_REGISTER_OP_CASES(Conv1dCases);

}  // namespace
}  // namespace mimetic::ops
