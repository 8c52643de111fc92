// Backend-consistency rows for LinearParts (see testing/op_cases.h): the fast CPU path against the
// reference, and its VJP (the fused backward) against finite differences.
#include <string>
#include <vector>

#include "mimetic/ops/linear_parts/linear_parts.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;

OpCase PartsCase(std::string name, core::Shape x, int64_t k, std::vector<int64_t> sizes) {
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  x.push_back(k);
  return {"linear_parts/" + name,
          {Input::Normal(std::move(x)), Input::Normal({total, k})},
          [sizes](absl::Span<const Tensor> in) { return LinearParts(in[0], in[1], sizes); }};
}

// The fused backward on its own: the fast CPU path (PanelGemmSum for dx, the weight-gradient
// GEMMs written into dW's rows) against the reference. Not differentiable itself.
OpCase BackwardCase(std::string name, core::Shape x, int64_t k, std::vector<int64_t> sizes) {
  int64_t total = 0;
  std::vector<Input> inputs;
  core::Shape xs = x;
  xs.push_back(k);
  for (int64_t s : sizes) total += s;
  inputs.push_back(Input::Normal(xs));
  inputs.push_back(Input::Normal({total, k}));
  for (int64_t s : sizes) {
    core::Shape g = x;
    g.push_back(s);
    inputs.push_back(Input::Normal(g));
  }
  OpCase c{"linear_parts_backward/" + name, inputs, [](absl::Span<const Tensor> in) {
             return LinearPartsBackward(in[0], in[1], std::vector<Tensor>(in.begin() + 2, in.end()));
           }};
  c.check_grad = false;
  c.atol = 1e-4;
  return c;
}

std::vector<OpCase> LinearPartsCases() {
  std::vector<OpCase> cases = {
      PartsCase("one_part", {3}, 5, {4}),
      PartsCase("three_parts_rank3", {2, 3}, 5, {4, 1, 3}),
      PartsCase("k1", {2, 2}, 1, {2, 3}),
  };
  // The panel kernels: 64+ rows (tiles of 64 and a tail), k not a multiple of the vector width,
  // parts of 1..33 outputs, as Mamba 2's in_proj [z | x | B | C | dt] at a small width.
  OpCase mamba2 = PartsCase("mamba2_in_proj_rows130", {2, 65}, 24, {32, 32, 8, 8, 3});
  mamba2.check_grad = false;
  mamba2.atol = 1e-4;
  OpCase wide = PartsCase("wide_k1100", {70}, 1100, {17, 16});
  wide.check_grad = false;
  wide.atol = 1e-3;
  cases.push_back(mamba2);
  cases.push_back(wide);
  OpCase grad_panel = PartsCase("grad_rows64", {64}, 3, {2, 2});
  grad_panel.grad_atol = 1e-5;
  cases.push_back(grad_panel);
  cases.push_back(BackwardCase("few_rows_blas", {3}, 5, {4, 1}));
  cases.push_back(BackwardCase("mamba2_in_proj_rows130", {2, 65}, 24, {32, 32, 8, 8, 3}));
  cases.push_back(BackwardCase("k64_rows200", {200}, 64, {40, 16}));
  OpCase wide_backward = BackwardCase("wide_k1100_blas", {70}, 1100, {17, 16});
  wide_backward.atol = 1e-3;
  cases.push_back(wide_backward);
  return cases;
}

MIMETIC_REGISTER_OP_CASES(LinearPartsCases);

}  // namespace
}  // namespace mimetic::ops
