// SSD rows of the backend-consistency table: the chunked fast CPU path against the sequential
// reference (f32), and the VJP (SsdBackward, which honours last_state's cotangent) against finite
// differences (f64). A is drawn negative as in a trained model; dt and dt_bias keep Δ in a
// realistic range (one case puts dt + dt_bias above the softplus threshold of 20).
#include <string>
#include <vector>

#include "mimetic/ops/ssd/ssd.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;

struct Sizes {
  int64_t b, l, h, p, g, n, chunk;
};

OpCase MakeCase(const std::string& name, Sizes s, double bias_lo = -1.0, double bias_hi = 0.5,
                double a_lo = -1.5, double a_hi = -0.2) {
  OpCase c;
  c.name = name;
  c.inputs = {
      Input::Normal({s.b, s.l, s.h, s.p}),      // x
      Input::Normal({s.b, s.l, s.h}, 0.5),      // dt
      Input::Uniform({s.h}, a_lo, a_hi),        // A
      Input::Normal({s.b, s.l, s.g, s.n}),      // Bm
      Input::Normal({s.b, s.l, s.g, s.n}),      // Cm
      Input::Normal({s.h}),                     // D
      Input::Uniform({s.h}, bias_lo, bias_hi),  // dt_bias
  };
  const int64_t chunk = s.chunk;
  c.fn = [chunk](absl::Span<const Tensor> in) {
    SsdResult r = Ssd(in[0], in[1], in[2], in[3], in[4], in[5], in[6], chunk);
    return std::vector<Tensor>{r.y, r.last_state};
  };
  // The chunked form sums in a different order (and uses a float exp within ~1 ulp): outputs of
  // magnitude ~1-10 agree to a few 1e-6 absolute.
  c.atol = 2e-5;
  c.rtol = 1e-4;
  c.grad_atol = 1e-6;
  c.grad_rtol = 1e-5;
  return c;
}

std::vector<OpCase> SsdCases() {
  return {
      MakeCase("ssd/b1_l1_h1_p1_g1_n1", {1, 1, 1, 1, 1, 1, 64}),
      MakeCase("ssd/groups2_heads4_l5_chunk4", {2, 5, 4, 2, 2, 3, 4}),
      MakeCase("ssd/l37_chunk8", {1, 37, 2, 3, 1, 5, 8}),
      MakeCase("ssd/l_lt_chunk", {2, 6, 2, 3, 1, 3, 64}),
      MakeCase("ssd/odd_p5_n7_groups3", {1, 9, 3, 5, 3, 7, 4}),
      MakeCase("ssd/chunk1", {1, 5, 2, 2, 1, 2, 1}),
      MakeCase("ssd/batch17_many_items", {17, 3, 2, 2, 1, 2, 2}),
      // dt + dt_bias > 20: Δ = dt + dt_bias exactly, so keep A small for a non-vanishing decay.
      MakeCase("ssd/softplus_above_threshold", {1, 6, 2, 2, 1, 3, 4}, 24.0, 25.0, -0.06, -0.01),
  };
}

MIMETIC_REGISTER_OP_CASES(SsdCases);

}  // namespace
}  // namespace mimetic::ops
