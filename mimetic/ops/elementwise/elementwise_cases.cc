// Backend-consistency rows for the elementwise ops (see testing/op_cases.h): every broadcast
// pattern the models use, rank 0, size-1 and empty dims, and large rows for the OpenMP paths.
#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using core::Shape;
using testing::Input;
using testing::OpCase;

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
using UnaryFn = Tensor (*)(const Tensor&);

OpCase BinaryCase(std::string name, BinaryFn f, Input a, Input b) {
  return {name, {std::move(a), std::move(b)}, [f](absl::Span<const Tensor> in) {
            return std::vector<Tensor>{f(in[0], in[1])};
          }};
}

OpCase UnaryCase(std::string name, UnaryFn f, Input x) {
  return {name, {std::move(x)}, [f](absl::Span<const Tensor> in) { return std::vector<Tensor>{f(in[0])}; }};
}

// Large enough (> 32k elements) for the OpenMP paths; no finite differences.
OpCase Big(OpCase c) {
  c.check_grad = false;
  return c;
}

std::vector<OpCase> ElementwiseCases() {
  const Input n235 = Input::Normal({2, 3, 5});
  std::vector<OpCase> cases = {
      // Broadcast patterns.
      BinaryCase("add/same/2x3x5", Add, n235, n235),
      BinaryCase("add/bias_BLE_E/2x3x5", Add, n235, Input::Normal({5})),
      BinaryCase("add/bias_E_BLE/5_2x3x5", Add, Input::Normal({5}), n235),
      BinaryCase("add/scalar/2x3_rank0", Add, Input::Normal({2, 3}), Input::Normal({})),
      BinaryCase("add/rank0_rank0", Add, Input::Normal({}), Input::Normal({})),
      BinaryCase("add/size1/1x1_1", Add, Input::Normal({1, 1}), Input::Normal({1})),
      BinaryCase("add/outer/3x1_1x4", Add, Input::Normal({3, 1}), Input::Normal({1, 4})),
      BinaryCase("add/empty/0x3_3", Add, Input::Normal({0, 3}), Input::Normal({3})),
      BinaryCase("sub/same/3x7x13", Sub, Input::Normal({3, 7, 13}), Input::Normal({3, 7, 13})),
      BinaryCase("sub/E_BLE/4_2x3x4", Sub, Input::Normal({4}), Input::Normal({2, 3, 4})),
      BinaryCase("mul/BL1_BLE/2x3x1_2x3x5", Mul, Input::Normal({2, 3, 1}), n235),
      BinaryCase("mul/BLE_BL1/2x3x5_2x3x1", Mul, n235, Input::Normal({2, 3, 1})),
      BinaryCase("mul/1L1_BLE/1x3x1_2x3x4", Mul, Input::Normal({1, 3, 1}), Input::Normal({2, 3, 4})),
      BinaryCase("mul/scalar/rank0_2x3", Mul, Input::Normal({}), Input::Normal({2, 3})),
      BinaryCase("mul/B1E_BLE/2x1x4_2x3x4", Mul, Input::Normal({2, 1, 4}), Input::Normal({2, 3, 4})),
      BinaryCase("div/same/2x3x4", Div, Input::Normal({2, 3, 4}), Input::Uniform({2, 3, 4}, 0.5, 2)),
      BinaryCase("div/L1/2x3x4_3x1", Div, Input::Normal({2, 3, 4}), Input::Uniform({3, 1}, 0.5, 2)),
      BinaryCase("div/scalar_num/rank0_2x3", Div, Input::Normal({}), Input::Uniform({2, 3}, -2, -0.5)),
      BinaryCase("maximum/same/3x5", Maximum, Input::Normal({3, 5}), Input::Normal({3, 5})),
      BinaryCase("maximum/bias/2x3x4_4", Maximum, Input::Normal({2, 3, 4}), Input::Normal({4})),
      BinaryCase("maximum/scalar/2x3_rank0", Maximum, Input::Normal({2, 3}), Input::Normal({})),
      // Unary ops.
      UnaryCase("neg/2x3x5", Neg, n235),
      UnaryCase("exp/2x3x5", Exp, n235),
      UnaryCase("exp/rank0", Exp, Input::Normal({})),
      UnaryCase("log/2x3x5", Log, Input::Uniform({2, 3, 5}, 0.1, 3)),
      UnaryCase("sigmoid/2x3x5", Sigmoid, Input::Normal({2, 3, 5}, 3)),
      UnaryCase("softplus/2x3x5", Softplus, Input::Normal({2, 3, 5}, 3)),
      UnaryCase("softplus/wide/4x5", Softplus, Input::Uniform({4, 5}, -30, 30)),
      UnaryCase("silu/2x3x5", Silu, Input::Normal({2, 3, 5}, 3)),
      UnaryCase("silu_grad/2x3x5", SiluGrad, Input::Normal({2, 3, 5}, 3)),
      UnaryCase("square/2x3x5", Square, n235),
      UnaryCase("sqrt/2x3x5", Sqrt, Input::Uniform({2, 3, 5}, 0.2, 4)),
      UnaryCase("rsqrt/2x3x5", Rsqrt, Input::Uniform({2, 3, 5}, 0.2, 4)),
      UnaryCase("tanh/2x3x5", Tanh, Input::Normal({2, 3, 5}, 2)),
      UnaryCase("tanh/small/7", Tanh, Input::Uniform({7}, -0.7, 0.7)),
      UnaryCase("abs/2x3x5", Abs, n235),
      UnaryCase("abs/size1/1x1", Abs, Input::Normal({1, 1})),
      UnaryCase("neg/empty/0x4", Neg, Input::Normal({0, 4})),
  };
  auto scalar_case = [](std::string name, Input x, std::function<Tensor(const Tensor&)> f) {
    return OpCase{
        name, {std::move(x)}, [f](absl::Span<const Tensor> in) { return std::vector<Tensor>{f(in[0])}; }};
  };
  cases.push_back(scalar_case("add_scalar/2x3", Input::Normal({2, 3}),
                              [](const Tensor& x) { return AddScalar(x, 1.5); }));
  cases.push_back(scalar_case("mul_scalar/2x3", Input::Normal({2, 3}),
                              [](const Tensor& x) { return MulScalar(x, -0.7); }));
  cases.push_back(
      scalar_case("mul_scalar/rank0", Input::Normal({}), [](const Tensor& x) { return MulScalar(x, 3); }));
  for (double p : {2.0, 3.0, 0.5, -1.0, -1.5}) {
    cases.push_back(scalar_case(absl::StrCat("pow_scalar/p", p, "/2x5"), Input::Uniform({2, 5}, 0.5, 2),
                                [p](const Tensor& x) { return PowScalar(x, p); }));
  }
  // Cast round trips: f32 inputs go through f64 exactly; f64 inputs through f32 lose bits, so the
  // finite differences use a wide step (the round trip is linear up to rounding).
  OpCase cast_round = scalar_case("cast/round_trip/3x4", Input::Normal({3, 4}), [](const Tensor& x) {
    const core::DType other = x.dtype() == core::DType::kF32 ? core::DType::kF64 : core::DType::kF32;
    return Cast(MulScalar(Cast(x, other), 2.0), x.dtype());
  });
  cast_round.fd_eps = 1e-2;
  cast_round.grad_atol = 1e-5;
  cast_round.grad_rtol = 1e-5;
  cases.push_back(cast_round);
  OpCase to_i32 = scalar_case("cast/to_i32/3x4", Input::Normal({3, 4}, 10),
                              [](const Tensor& x) { return Cast(x, core::DType::kI32); });
  cases.push_back(to_i32);
  OpCase from_i32{"cast/from_i32/3x4", {Input::Index({3, 4}, -5, 5)}, [](absl::Span<const Tensor> in) {
                    return std::vector<Tensor>{Cast(in[0], core::DType::kF32)};
                  }};
  from_i32.check_grad = false;
  cases.push_back(from_i32);
  // ZerosLike / OnesLike (fills) in an expression.
  cases.push_back(scalar_case("ones_like/add/2x3", Input::Normal({2, 3}),
                              [](const Tensor& x) { return Add(Mul(x, OnesLike(x)), ZerosLike(x)); }));
  // Where: an f32 0/1 mask made in the case (broadcast (B, L, 1)), and an i32 mask.
  cases.push_back(OpCase{"where/f32_mask/2x3x1_2x3x4_4",
                         {Input::Constant({2, 3, 1}, -1, 1), Input::Normal({2, 3, 4}), Input::Normal({4})},
                         [](absl::Span<const Tensor> in) {
                           Tensor mask = GreaterEqual(in[0], ZerosLike(in[0]));
                           return std::vector<Tensor>{Where(mask, in[1], in[2])};
                         }});
  cases.push_back(
      OpCase{"where/i32_mask/1x3x1_2x3x4_rank0",
             {Input::Index({1, 3, 4}, 0, 2), Input::Normal({2, 3, 4}), Input::Normal({})},
             [](absl::Span<const Tensor> in) { return std::vector<Tensor>{Where(in[0], in[1], in[2])}; }});
  // Large rows: chunked same-shape loops, bias rows, per-row scalars, and vectorised math.
  cases.push_back(Big(BinaryCase("add/big/same_40000", Add, Input::Normal({40000}), Input::Normal({40000}))));
  cases.push_back(
      Big(BinaryCase("add/big/bias_4x103x96_96", Add, Input::Normal({4, 103, 96}), Input::Normal({96}))));
  cases.push_back(Big(BinaryCase("mul/big/BL1_4x103x1_4x103x96", Mul, Input::Normal({4, 103, 1}),
                                 Input::Normal({4, 103, 96}))));
  cases.push_back(Big(BinaryCase("div/big/1L1_1x103x1_4x103x96", Div, Input::Normal({4, 103, 96}),
                                 Input::Uniform({1, 103, 1}, 0.5, 2))));
  cases.push_back(Big(BinaryCase("maximum/big/scalar", Maximum, Input::Normal({40000}), Input::Normal({}))));
  cases.push_back(Big(UnaryCase("exp/big/40000", Exp, Input::Uniform({40000}, -80, 80))));
  cases.push_back(Big(UnaryCase("sigmoid/big/40000", Sigmoid, Input::Uniform({40000}, -40, 40))));
  cases.push_back(Big(UnaryCase("softplus/big/40000", Softplus, Input::Uniform({40000}, -40, 40))));
  cases.push_back(Big(UnaryCase("silu/big/40000", Silu, Input::Uniform({40000}, -40, 40))));
  cases.push_back(Big(UnaryCase("silu_grad/big/40000", SiluGrad, Input::Uniform({40000}, -40, 40))));
  cases.push_back(Big(UnaryCase("tanh/big/40000", Tanh, Input::Uniform({40000}, -10, 10))));
  cases.push_back(Big(UnaryCase("log/big/40000", Log, Input::Uniform({40000}, 1e-3, 100))));
  cases.push_back(Big(UnaryCase("rsqrt/big/40000", Rsqrt, Input::Uniform({40000}, 1e-3, 100))));
  cases.push_back(Big(
      OpCase{"where/big/4x103x1",
             {Input::Index({4, 103, 1}, 0, 2), Input::Normal({4, 103, 96}), Input::Normal({96})},
             [](absl::Span<const Tensor> in) { return std::vector<Tensor>{Where(in[0], in[1], in[2])}; }}));
  return cases;
}

MIMETIC_REGISTER_OP_CASES(ElementwiseCases);

}  // namespace
}  // namespace mimetic::ops
