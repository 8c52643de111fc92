// Backend-consistency rows for the shape ops (see testing/op_cases.h): reshapes with -1 and rank
// 0, transposes (last-two swap, (B, L, H, P) <-> (B, H, L, P), general), slices, pads, concat and
// split with empty pieces, and large transposes for the tiled, threaded path.
#include <functional>
#include <string>
#include <vector>

#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/shape/shape.h"
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

OpCase Big(OpCase c) {
  c.check_grad = false;
  return c;
}

std::vector<OpCase> ShapeCases() {
  const Input x234 = Input::Normal({2, 3, 4});
  std::vector<OpCase> cases = {
      // Reshape is a view; multiplying by 1.5 makes the case compute something (and checks that
      // the consumer reads the shared storage right).
      Case("reshape/2x3x4_6x4", x234,
           [](const Tensor& x) {
             return MulScalar(Reshape(x, {6, 4}), 1.5);
           }),
      Case("reshape/infer/2x3x4_4x-1x2", x234,
           [](const Tensor& x) {
             return MulScalar(Reshape(x, {4, -1, 2}), 1.5);
           }),
      Case("reshape/flatten/2x3x4", x234, [](const Tensor& x) { return Reshape(x, {-1}); }),
      Case("reshape/rank0_1", Input::Normal({}),
           [](const Tensor& x) {
             return Reshape(x, {1, 1});
           }),
      Case("reshape/1_rank0", Input::Normal({1}), [](const Tensor& x) { return Reshape(x, {}); }),
      Case("transpose/last_two/2x3x4", x234,
           [](const Tensor& x) {
             return Transpose(x, {0, 2, 1});
           }),
      Case("transpose/2d/5x7", Input::Normal({5, 7}),
           [](const Tensor& x) {
             return Transpose(x, {1, 0});
           }),
      Case("transpose/BLHP_BHLP/2x3x4x2", Input::Normal({2, 3, 4, 2}),
           [](const Tensor& x) {
             return Transpose(x, {0, 2, 1, 3});
           }),
      Case("transpose/reverse/2x3x4", x234,
           [](const Tensor& x) {
             return Transpose(x, {2, 1, 0});
           }),
      Case("transpose/rotate/2x3x4", x234,
           [](const Tensor& x) {
             return Transpose(x, {1, 2, 0});
           }),
      Case("transpose/identity/2x3", Input::Normal({2, 3}),
           [](const Tensor& x) {
             return Transpose(x, {0, 1});
           }),
      Case("transpose/size1/1x3x1x2", Input::Normal({1, 3, 1, 2}),
           [](const Tensor& x) {
             return Transpose(x, {3, 2, 1, 0});
           }),
      Case("transpose/rank0", Input::Normal({}), [](const Tensor& x) { return Transpose(x, {}); }),
      Case("transpose/empty/0x3", Input::Normal({0, 3}),
           [](const Tensor& x) {
             return Transpose(x, {1, 0});
           }),
      Case("slice/axis1/2x4x3", Input::Normal({2, 4, 3}), [](const Tensor& x) { return Slice(x, 1, 1, 3); }),
      Case("slice/last/2x4x3", Input::Normal({2, 4, 3}), [](const Tensor& x) { return Slice(x, -1, 0, 1); }),
      Case("slice/empty/2x4", Input::Normal({2, 4}), [](const Tensor& x) { return Slice(x, 1, 2, 2); }),
      Case("slice/full/2x4", Input::Normal({2, 4}), [](const Tensor& x) { return Slice(x, 0, 0, 2); }),
      Case("pad/axis0/2x3", Input::Normal({2, 3}), [](const Tensor& x) { return Pad(x, 0, 1, 2); }),
      Case("pad/axis-1/2x3x2", Input::Normal({2, 3, 2}), [](const Tensor& x) { return Pad(x, -1, 0, 3); }),
      Case("pad/none/3", Input::Normal({3}), [](const Tensor& x) { return Pad(x, 0, 0, 0); }),
      Case("split/last/2x7", Input::Normal({2, 7}),
           [](const Tensor& x) {
             return Concat({Split(x, 1, {3, 4})[1], Split(x, 1, {3, 4})[0]}, 1);
           }),
      Case("stop_gradient/forward/2x3", Input::Normal({2, 3}),
           [](const Tensor& x) { return StopGradient(x); }),
  };
  cases.back().check_grad = false;  // its VJP is zero by design (checked in shape_test)
  cases.push_back(OpCase{
      "concat/last/2x3_2x4", {Input::Normal({2, 3}), Input::Normal({2, 4})}, [](absl::Span<const Tensor> in) {
        return std::vector<Tensor>{Concat({in[0], in[1]}, -1)};
      }});
  cases.push_back(OpCase{"concat/axis0_three/1x3_2x3_0x3",
                         {Input::Normal({1, 3}), Input::Normal({2, 3}), Input::Normal({0, 3})},
                         [](absl::Span<const Tensor> in) {
                           return std::vector<Tensor>{Concat({in[0], in[1], in[2]}, 0)};
                         }});
  cases.push_back(OpCase{"concat/single/2x2", {Input::Normal({2, 2})}, [](absl::Span<const Tensor> in) {
                           return std::vector<Tensor>{Concat({in[0]}, 1)};
                         }});
  cases.push_back(
      OpCase{"split/axis0_with_empty/2x3", {Input::Normal({2, 3})}, [](absl::Span<const Tensor> in) {
               return Split(in[0], 0, {1, 0, 1});
             }});
  cases.push_back(OpCase{"split/middle/2x5x3", {Input::Normal({2, 5, 3})}, [](absl::Span<const Tensor> in) {
                           return Split(in[0], 1, {2, 2, 1});
                         }});
  // Only one output used: the others get zero cotangents from autodiff.
  cases.push_back(Case("split/one_used/2x6", Input::Normal({2, 6}), [](const Tensor& x) {
    return Split(x, -1, {2, 4})[1];
  }));
  cases.push_back(
      Big(Case("transpose/big/last_two_3x200x150", Input::Normal({3, 200, 150}), [](const Tensor& x) {
        return Transpose(x, {0, 2, 1});
      })));
  cases.push_back(
      Big(Case("transpose/big/BLHP_BHLP_4x103x4x24", Input::Normal({4, 103, 4, 24}), [](const Tensor& x) {
        return Transpose(x, {0, 2, 1, 3});
      })));
  cases.push_back(
      Big(Case("transpose/big/reverse_30x40x50", Input::Normal({30, 40, 50}), [](const Tensor& x) {
        return Transpose(x, {2, 1, 0});
      })));
  cases.push_back(Big(Case("transpose/big/odd_2d_301x257", Input::Normal({301, 257}), [](const Tensor& x) {
    return Transpose(x, {1, 0});
  })));
  return cases;
}

MIMETIC_REGISTER_OP_CASES(ShapeCases);

}  // namespace
}  // namespace mimetic::ops
