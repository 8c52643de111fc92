// Backend-consistency rows for the selective scan (testing/op_cases.h). Forward rows check the fast
// CPU path against the reference in f32 and the VJP (of y and last_state) against finite
// differences in f64. Backward rows call SelectiveScanBackward directly, so the fast chunked backward
// is compared with the reference backward (all states stored) for several chunk sizes.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/ops/selective_scan/selective_scan.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using testing::Input;
using testing::OpCase;

struct Config {
  int64_t B, L, E, N;
  bool z, bias, softplus;
  int64_t chunk = kSelectiveScanDefaultChunk;
};

std::string Name(const char* kind, const Config& c) {
  return absl::StrCat("selective_scan/", kind, "/B", c.B, "L", c.L, "E", c.E, "N", c.N, c.z ? "_z" : "",
                      c.bias ? "_bias" : "", c.softplus ? "_softplus" : "", "_chunk", c.chunk);
}

std::vector<Input> ForwardInputs(const Config& c) {
  std::vector<Input> in = {
      Input::Normal({c.B, c.L, c.E}),
      // Without softplus the raw delta is the time step: keep it positive as a real model's.
      c.softplus ? Input::Normal({c.B, c.L, c.E}) : Input::Uniform({c.B, c.L, c.E}, 0.05, 1.0),
      Input::Uniform({c.E, c.N}, -1.5, -0.1),  // A < 0: a decaying scan
      Input::Normal({c.B, c.L, c.N}),
      Input::Normal({c.B, c.L, c.N}),
      Input::Normal({c.E}),
  };
  if (c.z) in.push_back(Input::Normal({c.B, c.L, c.E}));
  if (c.bias) in.push_back(Input::Uniform({c.E}, -0.5, 0.5));
  return in;
}

// The optional inputs of a row's input list, or empty Tensor()s.
Tensor ZOf(const Config& c, absl::Span<const Tensor> in) { return c.z ? in[6] : Tensor(); }
Tensor BiasOf(const Config& c, absl::Span<const Tensor> in) { return c.bias ? in[c.z ? 7 : 6] : Tensor(); }

OpCase ForwardCase(const Config& c, bool check_grad = true) {
  OpCase oc{Name("forward", c), ForwardInputs(c), [c](absl::Span<const Tensor> in) {
              SelectiveScanResult r = SelectiveScan(in[0], in[1], in[2], in[3], in[4], in[5], ZOf(c, in),
                                                    BiasOf(c, in), c.softplus, c.chunk);
              return std::vector<Tensor>{r.y, r.last_state};
            }};
  oc.check_grad = check_grad;
  oc.atol = 1e-5;
  oc.rtol = 1e-4;
  oc.fd_eps = 1e-6;
  oc.grad_atol = 1e-6;
  oc.grad_rtol = 1e-5;
  return oc;
}

OpCase BackwardCase(const Config& c) {
  std::vector<Input> in = ForwardInputs(c);
  in.push_back(Input::Normal({c.B, c.L, c.E}));  // dy
  in.push_back(Input::Normal({c.B, c.E, c.N}));  // dlast_state
  OpCase oc{Name("backward", c), in, [c](absl::Span<const Tensor> in) {
              const size_t nf = 6 + (c.z ? 1 : 0) + (c.bias ? 1 : 0);
              SelectiveScanGrads g =
                  SelectiveScanBackward(in[0], in[1], in[2], in[3], in[4], in[5], ZOf(c, in), BiasOf(c, in),
                                        in[nf], in[nf + 1], c.softplus, c.chunk);
              std::vector<Tensor> outs = {g.du, g.ddelta, g.dA, g.dB, g.dC, g.dD};
              if (c.z) outs.push_back(g.dz);
              if (c.bias) outs.push_back(g.ddelta_bias);
              return outs;
            }};
  oc.check_grad = false;  // second derivatives are not supported
  // dA and ddelta_bias sum B·L terms, dB/dC sum E terms: f32 rounding of the two orders differs.
  oc.atol = 1e-4;
  oc.rtol = 1e-3;
  return oc;
}

std::vector<OpCase> SelectiveScanCases() {
  std::vector<OpCase> cases = {
      // Gradient-checked rows: small, every flag combination, edge sizes.
      ForwardCase({1, 1, 1, 1, false, false, false}), ForwardCase({1, 1, 1, 1, true, true, true}),
      ForwardCase({2, 5, 3, 2, true, true, true, 2}), ForwardCase({2, 5, 3, 2, false, false, true}),
      ForwardCase({2, 5, 3, 2, true, false, false}), ForwardCase({2, 5, 3, 2, false, true, false}),
      ForwardCase({1, 7, 5, 1, true, true, true, 3}),
      ForwardCase({2, 37, 3, 2, true, true, true, 16}),  // L not a multiple of the chunk
      ForwardCase({1, 4, 19, 3, true, true, true}),      // E odd, over one 16-channel block
      // Fast vs reference only: larger shapes.
      ForwardCase({3, 103, 40, 16, true, true, true}, false),
      ForwardCase({2, 37, 17, 32, false, false, true}, false),
      // Chunked fast backward vs reference backward.
      BackwardCase({1, 1, 1, 1, false, false, false, 1}), BackwardCase({1, 1, 1, 1, true, true, true}),
      BackwardCase({2, 5, 3, 2, true, true, true, 2}), BackwardCase({2, 37, 5, 3, true, true, true, 16}),
      BackwardCase({2, 37, 5, 3, false, false, true, 1}), BackwardCase({2, 37, 5, 3, true, false, false, 64}),
      BackwardCase({1, 37, 19, 4, false, true, true, 7}),  // B = 1: many channel groups
      BackwardCase({3, 103, 40, 16, true, true, true}),
      BackwardCase({20, 9, 33, 8, true, true, true, 4}),  // B >= 16: one channel group
  };
  return cases;
}

MIMETIC_REGISTER_OP_CASES(SelectiveScanCases);

}  // namespace
}  // namespace mimetic::ops
