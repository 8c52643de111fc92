#include "mimetic/ops/shape/shape.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/op.h"
#include "mimetic/ops/elementwise/elementwise.h"

namespace mimetic::ops {
namespace {

using core::Backend;
using core::Shape;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor F32(const Shape& shape, std::vector<float> v) { return Tensor::FromHost<float>(shape, v).value(); }
Tensor F64(const Shape& shape, std::vector<double> v) { return Tensor::FromHost<double>(shape, v).value(); }
std::vector<float> Values(const Tensor& t) {
  auto v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}
std::vector<double> Values64(const Tensor& t) {
  auto v = t.ToVector<double>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<double>{};
}

class ShapeTest : public ::testing::TestWithParam<Backend> {
 protected:
  core::ScopedCpuBackend backend_{GetParam()};
};

// x = [[1, 2, 3], [4, 5, 6]]
Tensor X() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST_P(ShapeTest, ReshapeIsAViewWithOneInferredDim) {
  Tensor x = X();
  Tensor y = Reshape(x, {3, -1});
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_EQ(y.storage(), x.storage());  // shares storage
  EXPECT_THAT(Values(y), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_EQ(Reshape(Tensor::Scalar<float>(2), {1, 1}).shape(), (Shape{1, 1}));
}

TEST_P(ShapeTest, Transposes) {
  EXPECT_THAT(Values(Transpose(X(), {1, 0})), ElementsAre(1, 4, 2, 5, 3, 6));
  // (B=1, L=2, H=2, P=2) -> (B, H, L, P).
  Tensor x = F32({1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor t = Transpose(x, {0, 2, 1, 3});
  EXPECT_EQ(t.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_THAT(Values(t), ElementsAre(1, 2, 5, 6, 3, 4, 7, 8));
  // (2, 1, 3) -> (3, 2, 1).
  EXPECT_THAT(Values(Transpose(F32({2, 1, 3}, {1, 2, 3, 4, 5, 6}), {2, 0, 1})),
              ElementsAre(1, 4, 2, 5, 3, 6));
  Tensor idx = Transpose(Tensor::FromHost<int32_t>({2, 2}, {1, 2, 3, 4}).value(), {1, 0});
  EXPECT_THAT(idx.ToVector<int32_t>().value(), ElementsAre(1, 3, 2, 4));
}

TEST_P(ShapeTest, SlicePadConcatSplit) {
  EXPECT_THAT(Values(Slice(X(), 1, 1, 3)), ElementsAre(2, 3, 5, 6));
  EXPECT_THAT(Values(Slice(X(), 0, 1, 2)), ElementsAre(4, 5, 6));
  EXPECT_EQ(Slice(X(), -1, 2, 2).shape(), (Shape{2, 0}));
  EXPECT_THAT(Values(Pad(X(), 1, 1, 2)), ElementsAre(0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0, 0));
  EXPECT_THAT(Values(Pad(X(), 0, 1, 0)), ElementsAre(0, 0, 0, 1, 2, 3, 4, 5, 6));
  EXPECT_THAT(Values(Concat({X(), F32({2, 1}, {7, 8})}, -1)), ElementsAre(1, 2, 3, 7, 4, 5, 6, 8));
  EXPECT_THAT(Values(Concat({X(), X()}, 0)), ElementsAre(1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6));
  std::vector<Tensor> parts = Split(X(), 1, {1, 2});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_THAT(Values(parts[0]), ElementsAre(1, 4));
  EXPECT_THAT(Values(parts[1]), ElementsAre(2, 3, 5, 6));
  EXPECT_THAT(Values(StopGradient(X())), ElementsAre(1, 2, 3, 4, 5, 6));
}

INSTANTIATE_TEST_SUITE_P(Backends, ShapeTest, ::testing::Values(Backend::kReference, Backend::kCpu),
                         [](const auto& info) { return std::string(core::BackendName(info.param)); });

std::vector<Tensor> Grads(const std::function<std::vector<Tensor>(absl::Span<const Tensor>)>& f,
                          std::vector<Tensor> wrt, std::vector<Tensor> seeds) {
  auto g = core::Vjp(f, wrt, seeds);
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : std::vector<Tensor>{};
}

TEST(ShapeGradTest, SliceAndSplitVjps) {
  Tensor x = F64({2, 3}, {1, 2, 3, 4, 5, 6});
  auto g = Grads([](absl::Span<const Tensor> in) { return std::vector<Tensor>{Slice(in[0], 1, 1, 2)}; }, {x},
                 {F64({2, 1}, {7, 8})});
  EXPECT_THAT(Values64(g[0]), ElementsAre(0, 7, 0, 0, 8, 0));
  // Only the second piece is used; the first gets a zero cotangent.
  g = Grads(
      [](absl::Span<const Tensor> in) {
        return std::vector<Tensor>{Split(in[0], 1, {2, 1})[1]};
      },
      {x}, {F64({2, 1}, {7, 8})});
  EXPECT_THAT(Values64(g[0]), ElementsAre(0, 0, 7, 0, 0, 8));
  g = Grads(
      [](absl::Span<const Tensor> in) {
        return std::vector<Tensor>{Transpose(in[0], {1, 0})};
      },
      {x}, {F64({3, 2}, {1, 2, 3, 4, 5, 6})});
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 3, 5, 2, 4, 6));
}

TEST(ShapeGradTest, StopGradientBlocksTheGradient) {
  Tensor x = F64({2}, {3, 4});
  auto g =
      Grads([](absl::Span<const Tensor> in) { return std::vector<Tensor>{Mul(in[0], StopGradient(in[0]))}; },
            {x}, {F64({2}, {1, 1})});
  EXPECT_THAT(Values64(g[0]), ElementsAre(3, 4));  // d(x * sg(x))/dx = sg(x)
}

TEST(ShapeErrorTest, BadShapesNameTheOp) {
  Tensor r = Reshape(X(), {4, 2});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("reshape"));
  EXPECT_THAT(r.status().message(), HasSubstr("cannot reshape (2, 3) (6 elements) to (4, 2) (8 elements)"));
  EXPECT_THAT(Reshape(X(), {-1, -1}).status().message(), HasSubstr("at most one -1"));
  EXPECT_THAT(Reshape(X(), {4, -1}).status().message(), HasSubstr("cannot reshape"));
  Tensor t = Transpose(X(), {0, 0});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("transpose"));
  EXPECT_THAT(t.status().message(), HasSubstr("not a permutation"));
  EXPECT_THAT(Transpose(X(), {0}).status().message(), HasSubstr("not a permutation"));
  Tensor s = Slice(X(), 1, 2, 4);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("slice"));
  EXPECT_THAT(s.status().message(), HasSubstr("out of range"));
  EXPECT_THAT(Slice(X(), 3, 0, 1).status().message(), HasSubstr("axis 3 is out of range"));
  EXPECT_THAT(Pad(X(), 0, -1, 0).status().message(), HasSubstr("negative"));
  Tensor c = Concat({X(), F32({3, 1}, {1, 2, 3})}, 1);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("concat"));
  EXPECT_THAT(c.status().message(), HasSubstr("(3, 1)"));
  EXPECT_THAT(Concat({X(), F64({2, 1}, {1, 2})}, 1).status().message(), HasSubstr("expected the same dtype"));
  EXPECT_THAT(Concat({}, 0).status().message(), HasSubstr("at least one input"));
  std::vector<Tensor> parts = Split(X(), 1, {1, 1});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_FALSE(parts[1].ok());
  EXPECT_THAT(parts[0].status().message(), HasSubstr("split"));
}

}  // namespace
}  // namespace mimetic::ops
