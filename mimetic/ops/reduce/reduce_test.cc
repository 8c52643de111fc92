#include "mimetic/ops/reduce/reduce.h"

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
using ::testing::DoubleNear;
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

class ReduceTest : public ::testing::TestWithParam<Backend> {
 protected:
  core::ScopedCpuBackend backend_{GetParam()};
};

// x = [[1, 2, 3], [4, 5, 6]]
Tensor X() { return F32({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST_P(ReduceTest, SumAndMeanOverAxes) {
  EXPECT_THAT(Values(Sum(X(), 0)), ElementsAre(5, 7, 9));
  EXPECT_THAT(Values(Sum(X(), -1)), ElementsAre(6, 15));
  Tensor k = Sum(X(), 1, /*keepdims=*/true);
  EXPECT_EQ(k.shape(), (Shape{2, 1}));
  EXPECT_THAT(Values(Mean(X(), 1)), ElementsAre(2, 5));
  EXPECT_THAT(Values(Mean(X(), 0, true)), ElementsAre(2.5, 3.5, 4.5));
  Tensor s = SumAll(X());
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.Item<float>().value(), 21);
  EXPECT_EQ(MeanAll(X()).Item<float>().value(), 3.5);
  EXPECT_EQ(SumAll(Tensor::Scalar<float>(4)).Item<float>().value(), 4);
  EXPECT_THAT(Values(Sum(Tensor::Zeros({2, 0}).value(), 1)), ElementsAre(0, 0));
}

TEST_P(ReduceTest, SumToAndBroadcastTo) {
  Tensor x = F32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  EXPECT_THAT(Values(SumTo(x, {3})), ElementsAre(22, 26, 30));
  EXPECT_THAT(Values(SumTo(x, {2, 1, 1})), ElementsAre(21, 57));
  EXPECT_THAT(Values(SumTo(x, {1, 2, 1})), ElementsAre(6 + 24, 15 + 33));
  EXPECT_THAT(Values(SumTo(x, {2, 1, 3})), ElementsAre(5, 7, 9, 17, 19, 21));
  EXPECT_EQ(SumTo(x, {}).Item<float>().value(), 78);
  Tensor b = BroadcastTo(F32({2, 1}, {1, 2}), {2, 2, 3});
  EXPECT_EQ(b.shape(), (Shape{2, 2, 3}));
  EXPECT_THAT(Values(b), ElementsAre(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2));
}

TEST_P(ReduceTest, MaxAndArgMaxTakeTheFirstMaximum) {
  Tensor x = F32({2, 3}, {3, 1, 3, -1, 7, 2});
  EXPECT_THAT(Values(Max(x, 1)), ElementsAre(3, 7));
  EXPECT_THAT(Values(Max(x, 0)), ElementsAre(3, 7, 3));
  EXPECT_THAT(ArgMax(x, 1).ToVector<int32_t>().value(), ElementsAre(0, 1));
  EXPECT_THAT(ArgMax(x, 0).ToVector<int32_t>().value(), ElementsAre(0, 1, 0));
  EXPECT_EQ(Max(x, -1, true).shape(), (Shape{2, 1}));
}

INSTANTIATE_TEST_SUITE_P(Backends, ReduceTest, ::testing::Values(Backend::kReference, Backend::kCpu),
                         [](const auto& info) { return std::string(core::BackendName(info.param)); });

std::vector<Tensor> Grads(const std::function<Tensor(absl::Span<const Tensor>)>& f, std::vector<Tensor> wrt,
                          Tensor seed) {
  auto g = core::Vjp([&](absl::Span<const Tensor> in) { return std::vector<Tensor>{f(in)}; }, wrt, {seed});
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : std::vector<Tensor>{};
}

TEST(ReduceGradTest, SumMeanMaxVjps) {
  Tensor x = F64({2, 3}, {3, 1, 3, -1, 7, 2});
  auto g = Grads([](absl::Span<const Tensor> in) { return Sum(in[0], 1); }, {x}, F64({2}, {1, 10}));
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 1, 1, 10, 10, 10));
  g = Grads([](absl::Span<const Tensor> in) { return Mean(in[0], 0, true); }, {x}, F64({1, 3}, {2, 4, 6}));
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 2, 3, 1, 2, 3));
  g = Grads([](absl::Span<const Tensor> in) { return Max(in[0], 1); }, {x}, F64({2}, {1, 10}));
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 0, 0, 0, 10, 0));  // first maximum only
  g = Grads([](absl::Span<const Tensor> in) { return MeanAll(in[0]); }, {x}, Tensor::Scalar<double>(6));
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 1, 1, 1, 1, 1));
}

TEST(ReduceGradTest, SumToAndBroadcastToAreAdjoint) {
  Tensor x = F64({3}, {1, 2, 3});
  auto g = Grads(
      [](absl::Span<const Tensor> in) {
        return BroadcastTo(in[0], {2, 3});
      },
      {x}, F64({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(Values64(g[0]), ElementsAre(5, 7, 9));
  g = Grads([](absl::Span<const Tensor> in) { return SumTo(in[0], {3}); }, {F64({2, 3}, {1, 2, 3, 4, 5, 6})},
            F64({3}, {1, 2, 3}));
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 2, 3, 1, 2, 3));
}

TEST(ReduceGradTest, MaxSecondOrderGathersAtTheArgmax) {
  // g(x) = d/dx sum(w * max(x, 1)) = one-hot(argmax) * w; its VJP w.r.t. w gathers the seed there.
  Tensor x = F64({2, 3}, {0, 5, 1, 9, 2, 3});
  Tensor w = F64({2}, {2, 3});
  auto inner = [&](absl::Span<const Tensor> in) {
    auto g =
        core::Vjp([](absl::Span<const Tensor> v) { return std::vector<Tensor>{Max(v[0], 1)}; }, {x}, {in[0]});
    return (*g)[0];
  };
  auto g = Grads(inner, {w}, F64({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_THAT(Values64(g[0]), ElementsAre(2, 4));
}

TEST(ReduceDeterminismTest, LongSumsAreBitwiseRepeatable) {
  std::vector<float> v(300000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37f * i);
  Tensor x = F32({300000}, v);
  const float first = SumAll(x).Item<float>().value();
  EXPECT_EQ(first, SumAll(x).Item<float>().value());
  Tensor y = F32({3000, 100}, v);
  EXPECT_EQ(Values(SumTo(y, {100})), Values(SumTo(y, {100})));
  double exact = 0;
  for (float f : v) exact += f;
  EXPECT_NEAR(first, exact, 1e-3);
}

TEST(ReduceErrorTest, BadAxesAndShapes) {
  Tensor s = Sum(X(), 2);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("sum"));
  EXPECT_THAT(s.status().message(), HasSubstr("axis 2 is out of range for rank 2"));
  EXPECT_THAT(Mean(Tensor::Scalar<float>(1), 0).status().message(), HasSubstr("mean"));
  Tensor t = SumTo(X(), {4});
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("sum_to"));
  EXPECT_THAT(t.status().message(), HasSubstr("cannot sum (2, 3) to (4)"));
  EXPECT_THAT(SumTo(X(), {1, 2, 3}).status().message(), HasSubstr("cannot sum"));
  Tensor b = BroadcastTo(X(), {3, 3});
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), HasSubstr("cannot broadcast (2, 3) to (3, 3)"));
  Tensor m = Max(Tensor::Zeros({2, 0}).value(), 1);
  EXPECT_THAT(m.status().message(), HasSubstr("empty"));
  Tensor i = Sum(Tensor::FromHost<int32_t>({2}, {1, 2}).value(), 0);
  EXPECT_THAT(i.status().message(), HasSubstr("expected f32 or f64"));
}

}  // namespace
}  // namespace mimetic::ops
