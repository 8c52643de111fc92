// Backend-consistency rows for the reductions (see testing/op_cases.h): every axis, keepdims,
// rank 0, size-1 and empty dims, the SumTo patterns of the binary VJPs, and large inputs for the
// blocked, threaded paths.
#include <functional>
#include <string>
#include <vector>

#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/testing/op_cases.h"

namespace mimetic::ops {
namespace {

using core::Shape;
using testing::Input;
using testing::OpCase;

OpCase Case(std::string name, Input x, std::function<Tensor(const Tensor&)> f) {
  return {std::move(name), {std::move(x)}, [f](absl::Span<const Tensor> in) {
            return std::vector<Tensor>{f(in[0])};
          }};
}

// Large inputs for the OpenMP and blocked paths; no finite differences, and an absolute tolerance
// for sums of tens of thousands of f32 terms.
OpCase Big(OpCase c) {
  c.check_grad = false;
  c.atol = 2e-3;
  return c;
}

std::vector<OpCase> ReduceCases() {
  const Input x345 = Input::Normal({3, 4, 5});
  std::vector<OpCase> cases = {
      Case("sum/axis0/3x4x5", x345, [](const Tensor& x) { return Sum(x, 0); }),
      Case("sum/axis1_keepdims/3x4x5", x345, [](const Tensor& x) { return Sum(x, 1, true); }),
      Case("sum/axis-1/3x4x5", x345, [](const Tensor& x) { return Sum(x, -1); }),
      Case("sum/rank1/7", Input::Normal({7}), [](const Tensor& x) { return Sum(x, 0); }),
      Case("sum/size1_axis/3x1x5", Input::Normal({3, 1, 5}), [](const Tensor& x) { return Sum(x, 1); }),
      Case("sum/empty_axis/3x0x2", Input::Normal({3, 0, 2}), [](const Tensor& x) { return Sum(x, 1); }),
      Case("sum/odd/3x17", Input::Normal({3, 17}), [](const Tensor& x) { return Sum(x, -1); }),
      Case("mean/axis-1/3x4x5", x345, [](const Tensor& x) { return Mean(x, -1); }),
      Case("mean/axis0_keepdims/3x4x5", x345, [](const Tensor& x) { return Mean(x, 0, true); }),
      Case("sum_all/3x4", Input::Normal({3, 4}), [](const Tensor& x) { return SumAll(x); }),
      Case("sum_all/rank0", Input::Normal({}), [](const Tensor& x) { return SumAll(x); }),
      Case("mean_all/3x4x5", x345, [](const Tensor& x) { return MeanAll(x); }),
      Case("sum_to/BLE_E/2x3x4", Input::Normal({2, 3, 4}), [](const Tensor& x) { return SumTo(x, {4}); }),
      Case("sum_to/BLE_BL1/2x3x4", Input::Normal({2, 3, 4}),
           [](const Tensor& x) {
             return SumTo(x, {2, 3, 1});
           }),
      Case("sum_to/BLE_1L1/2x3x4", Input::Normal({2, 3, 4}),
           [](const Tensor& x) {
             return SumTo(x, {1, 3, 1});
           }),
      Case("sum_to/BLE_B1E/2x3x4", Input::Normal({2, 3, 4}),
           [](const Tensor& x) {
             return SumTo(x, {2, 1, 4});
           }),
      Case("sum_to/BLE_L1/2x3x4", Input::Normal({2, 3, 4}),
           [](const Tensor& x) {
             return SumTo(x, {3, 1});
           }),
      Case("sum_to/rank0/2x3", Input::Normal({2, 3}), [](const Tensor& x) { return SumTo(x, {}); }),
      Case("sum_to/identity/2x3", Input::Normal({2, 3}),
           [](const Tensor& x) {
             return SumTo(x, {2, 3});
           }),
      Case("sum_to/empty/0x3", Input::Normal({0, 3}), [](const Tensor& x) { return SumTo(x, {3}); }),
      Case("broadcast_to/E_BLE/4", Input::Normal({4}),
           [](const Tensor& x) {
             return BroadcastTo(x, {2, 3, 4});
           }),
      Case("broadcast_to/L1_BLE/3x1", Input::Normal({3, 1}),
           [](const Tensor& x) {
             return BroadcastTo(x, {2, 3, 5});
           }),
      Case("broadcast_to/rank0", Input::Normal({}),
           [](const Tensor& x) {
             return BroadcastTo(x, {2, 2});
           }),
      Case("broadcast_to/1L1/1x3x1", Input::Normal({1, 3, 1}),
           [](const Tensor& x) {
             return BroadcastTo(x, {2, 3, 4});
           }),
      Case("max/axis-1_keepdims/3x4x5", x345, [](const Tensor& x) { return Max(x, -1, true); }),
      Case("max/axis0/3x4x5", x345, [](const Tensor& x) { return Max(x, 0); }),
      Case("max/rank1/7", Input::Normal({7}), [](const Tensor& x) { return Max(x, 0); }),
      Case("max/size1_axis/3x1", Input::Normal({3, 1}), [](const Tensor& x) { return Max(x, 1); }),
      Case("argmax/axis-1/3x4x5", x345, [](const Tensor& x) { return ArgMax(x, -1); }),
      Case("argmax/axis1/3x4x5", x345, [](const Tensor& x) { return ArgMax(x, 1); }),
  };
  // Max composed with a Square (its VJP runs max_backward, then the square rule).
  cases.push_back(Case("max/composed/3x6", Input::Normal({3, 6}),
                       [](const Tensor& x) { return Max(Square(x), 1, false); }));
  // Max's backward primitive directly: linear in g (a gather of the cotangent), zero in x.
  cases.push_back(OpCase{"max_backward/axis1/3x4x2",
                         {Input::Normal({3, 4, 2}), Input::Normal({3, 2})},
                         [](absl::Span<const Tensor> in) {
                           return core::Call(std::make_shared<MaxBackwardOp>(1), {in[0], in[1]});
                         }});
  cases.push_back(Big(
      Case("sum/big/axis0_200x300", Input::Normal({200, 300}), [](const Tensor& x) { return Sum(x, 0); })));
  cases.push_back(Big(
      Case("sum/big/axis-1_300x200", Input::Normal({300, 200}), [](const Tensor& x) { return Sum(x, -1); })));
  cases.push_back(Big(Case("sum/big/long_axis_3x20000", Input::Normal({3, 20000}),
                           [](const Tensor& x) { return Sum(x, 1); })));
  cases.push_back(Big(Case("mean/big/axis1_4x2000x9", Input::Normal({4, 2000, 9}),
                           [](const Tensor& x) { return Mean(x, 1); })));
  cases.push_back(
      Big(Case("sum_all/big/70001", Input::Normal({70001}), [](const Tensor& x) { return SumAll(x); })));
  cases.push_back(Big(Case("sum_to/big/BLE_E/64x40x30", Input::Normal({64, 40, 30}),
                           [](const Tensor& x) { return SumTo(x, {30}); })));
  cases.push_back(Big(Case("sum_to/big/BLE_B1E/64x40x30", Input::Normal({64, 40, 30}), [](const Tensor& x) {
    return SumTo(x, {64, 1, 30});
  })));
  cases.push_back(Big(Case("sum_to/big/BLE_1L1/64x40x30", Input::Normal({64, 40, 30}), [](const Tensor& x) {
    return SumTo(x, {1, 40, 1});
  })));
  cases.push_back(Big(Case("broadcast_to/big/E_BLE", Input::Normal({96}), [](const Tensor& x) {
    return BroadcastTo(x, {4, 103, 96});
  })));
  cases.push_back(Big(Case("broadcast_to/big/BL1_BLE", Input::Normal({4, 103, 1}), [](const Tensor& x) {
    return BroadcastTo(x, {4, 103, 96});
  })));
  cases.push_back(Big(
      Case("max/big/axis-1_400x100", Input::Normal({400, 100}), [](const Tensor& x) { return Max(x, -1); })));
  return cases;
}

MIMETIC_REGISTER_OP_CASES(ReduceCases);

}  // namespace
}  // namespace mimetic::ops
