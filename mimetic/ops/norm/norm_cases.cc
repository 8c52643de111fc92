// Backend-consistency rows for the norm family (see testing/op_cases.h). The forward rows check the
// fast forward kernels against the reference and every VJP (hence the reference backward kernels)
// against finite differences; the "backward" rows call the backward primitives directly so the
// fast backward kernels are compared with the reference too.
#include <vector>

#include "mimetic/ops/norm/norm.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;

OpCase Rms(const std::string& name, core::Shape x, double eps) {
  const int64_t d = x.back();
  return {"rms_norm/" + name,
          {Input::Normal(x), Input::Uniform({d}, 0.5, 1.5)},
          [eps](absl::Span<const Tensor> in) { return std::vector<Tensor>{RmsNorm(in[0], in[1], eps)}; }};
}

OpCase RmsBackward(const std::string& name, core::Shape x, double eps) {
  const int64_t d = x.back();
  OpCase c{"rms_norm_backward/" + name,
           {Input::Normal(x), Input::Uniform({d}, 0.5, 1.5), Input::Normal(x)},
           [eps](absl::Span<const Tensor> in) { return RmsNormBackward(in[0], in[1], in[2], eps); }};
  c.check_grad = false;
  return c;
}

OpCase Ln(const std::string& name, core::Shape x, double eps) {
  const int64_t d = x.back();
  return {"layer_norm/" + name,
          {Input::Normal(x), Input::Uniform({d}, 0.5, 1.5), Input::Normal({d})},
          [eps](absl::Span<const Tensor> in) {
            return std::vector<Tensor>{LayerNorm(in[0], in[1], in[2], eps)};
          }};
}

OpCase LnBackward(const std::string& name, core::Shape x, double eps) {
  const int64_t d = x.back();
  OpCase c{"layer_norm_backward/" + name,
           {Input::Normal(x), Input::Uniform({d}, 0.5, 1.5), Input::Normal(x)},
           [eps](absl::Span<const Tensor> in) { return LayerNormBackward(in[0], in[1], in[2], eps); }};
  c.check_grad = false;
  return c;
}

// z is drawn with scale 3 so the gate covers silu's saturated and linear regions.
OpCase Gated(const std::string& name, core::Shape y, int64_t group, double eps) {
  const int64_t e = y.back();
  return {"gated_rms_norm/" + name,
          {Input::Normal(y), Input::Normal(y, 3.0), Input::Uniform({e}, 0.5, 1.5)},
          [group, eps](absl::Span<const Tensor> in) {
            return std::vector<Tensor>{GatedRmsNorm(in[0], in[1], in[2], group, eps)};
          }};
}

OpCase GatedBackward(const std::string& name, core::Shape y, int64_t group, double eps) {
  const int64_t e = y.back();
  OpCase c{"gated_rms_norm_backward/" + name,
           {Input::Normal(y), Input::Normal(y, 3.0), Input::Uniform({e}, 0.5, 1.5), Input::Normal(y)},
           [group, eps](absl::Span<const Tensor> in) {
             return GatedRmsNormBackward(in[0], in[1], in[2], in[3], group, eps);
           }};
  c.check_grad = false;
  return c;
}

std::vector<OpCase> NormCases() {
  // D = 1: var = 0, so rstd = eps^(-1/2) ~ 316 amplifies the f32 rounding of g w - mean(g w), which
  // is exactly 0 in the double-accumulating reference (and a fused multiply-add in the fast path).
  OpCase ln_backward_d1 = LnBackward("d1", {3, 1}, 1e-5);
  ln_backward_d1.atol = 1e-4;
  std::vector<OpCase> cases = {
      Rms("d1", {3, 1}, 1e-5),
      Rms("d7_rank3", {2, 3, 7}, 1e-5),
      Rms("rows1", {1, 16}, 1e-5),
      Rms("rank1", {6}, 1e-5),
      Rms("large_eps", {4, 5}, 10.0),
      Rms("tiny_eps", {4, 5}, 1e-12),
      Rms("rows130", {130, 3}, 1e-5),  // more rows than reduction blocks
      RmsBackward("d1", {3, 1}, 1e-5),
      RmsBackward("d7_rank3", {2, 3, 7}, 1e-5),
      RmsBackward("rows1", {1, 16}, 1e-5),
      RmsBackward("large_eps", {4, 5}, 10.0),
      RmsBackward("tiny_eps", {4, 5}, 1e-12),
      RmsBackward("rows300_d33", {300, 33}, 1e-5),
      Ln("d1", {3, 1}, 1e-5),
      Ln("d7_rank3", {2, 3, 7}, 1e-5),
      Ln("rows1", {1, 16}, 1e-5),
      Ln("large_eps", {4, 5}, 10.0),
      Ln("tiny_eps", {4, 5}, 1e-12),
      Ln("rows130", {130, 3}, 1e-5),
      ln_backward_d1,
      LnBackward("d7_rank3", {2, 3, 7}, 1e-5),
      LnBackward("rows1", {1, 16}, 1e-5),
      LnBackward("large_eps", {4, 5}, 10.0),
      LnBackward("tiny_eps", {4, 5}, 1e-12),
      LnBackward("rows300_d33", {300, 33}, 1e-5),
      Gated("e12_g4", {2, 3, 12}, 4, 1e-5),
      Gated("e12_g12", {2, 12}, 12, 1e-5),
      Gated("e1_g1", {3, 1}, 1, 1e-5),
      Gated("e7_g7_rows1", {1, 7}, 7, 1e-5),
      Gated("large_eps", {3, 6}, 3, 10.0),
      Gated("tiny_eps", {3, 6}, 2, 1e-12),
      Gated("rows70", {70, 4}, 2, 1e-5),
      GatedBackward("e12_g4", {2, 3, 12}, 4, 1e-5),
      GatedBackward("e12_g12", {2, 12}, 12, 1e-5),
      GatedBackward("e1_g1", {3, 1}, 1, 1e-5),
      GatedBackward("e7_g7_rows1", {1, 7}, 7, 1e-5),
      GatedBackward("large_eps", {3, 6}, 3, 10.0),
      GatedBackward("tiny_eps", {3, 6}, 2, 1e-12),
      GatedBackward("rows300_e40_g8", {300, 40}, 8, 1e-5),
  };
  return cases;
}

MIMETIC_REGISTER_OP_CASES(NormCases);

}  // namespace
}  // namespace mimetic::ops
