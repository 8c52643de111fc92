#include "mimetic/ops/elementwise/elementwise.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/op.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::ops {
namespace {

using core::Backend;
using core::DType;
using core::Shape;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;

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

// Runs each test body on both CPU backends.
class ElementwiseTest : public ::testing::TestWithParam<Backend> {
 protected:
  core::ScopedCpuBackend backend_{GetParam()};
};

TEST_P(ElementwiseTest, AddBroadcastsBiasOverBatch) {
  Tensor x = F32({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor bias = F32({3}, {10, 20, 30});
  Tensor y = Add(x, bias);
  EXPECT_EQ(y.shape(), (Shape{2, 1, 3}));
  EXPECT_THAT(Values(y), ElementsAre(11, 22, 33, 14, 25, 36));
}

TEST_P(ElementwiseTest, MulBroadcastsPerRowScalarAndOuter) {
  Tensor gate = F32({2, 1}, {2, -1});
  Tensor z = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_THAT(Values(Mul(gate, z)), ElementsAre(2, 4, 6, -4, -5, -6));
  // (3, 1) x (1, 2) -> (3, 2) outer product.
  EXPECT_THAT(Values(Mul(F32({3, 1}, {1, 2, 3}), F32({1, 2}, {10, 100}))),
              ElementsAre(10, 100, 20, 200, 30, 300));
}

TEST_P(ElementwiseTest, SubDivMaximumScalars) {
  Tensor a = F32({3}, {1, 5, -2});
  Tensor s = Tensor::Scalar<float>(2);
  EXPECT_THAT(Values(Sub(s, a)), ElementsAre(1, -3, 4));
  EXPECT_THAT(Values(Div(a, s)), ElementsAre(0.5, 2.5, -1));
  EXPECT_THAT(Values(Maximum(a, s)), ElementsAre(2, 5, 2));
  EXPECT_THAT(Values(GreaterEqual(a, s)), ElementsAre(0, 1, 0));
  Tensor r = Add(Tensor::Scalar<float>(1), Tensor::Scalar<float>(2));
  EXPECT_EQ(r.rank(), 0);
  EXPECT_EQ(r.Item<float>().value(), 3);
}

TEST_P(ElementwiseTest, UnaryWorkedValues) {
  Tensor x = F32({4}, {-1, 0, 0.5f, 2});
  const float e = std::exp(1.0f);
  EXPECT_THAT(Values(Neg(x)), ElementsAre(1, 0, -0.5f, -2));
  EXPECT_THAT(Values(Exp(x)),
              Pointwise(::testing::FloatNear(1e-6), std::vector<float>{1 / e, 1, std::sqrt(e), e * e}));
  EXPECT_THAT(Values(Log(F32({3}, {1, e, e * e}))),
              Pointwise(::testing::FloatNear(1e-6), std::vector<float>{0, 1, 2}));
  // sigmoid(0) = 1/2, sigmoid(-1) = 1 / (1 + e).
  EXPECT_THAT(Values(Sigmoid(F32({2}, {0, -1}))),
              Pointwise(::testing::FloatNear(1e-6), std::vector<float>{0.5f, 1 / (1 + e)}));
  // softplus(0) = ln 2; softplus(25) = 25 exactly (the x > 20 branch); softplus(-30) ~ e^-30.
  EXPECT_THAT(Values(Softplus(F32({3}, {0, 25, -30}))),
              Pointwise(::testing::FloatNear(1e-7), std::vector<float>{std::log(2.0f), 25, 9.357623e-14f}));
  // silu(2) = 2 / (1 + e^-2); silu_grad(0) = 1/2.
  EXPECT_THAT(Values(Silu(F32({2}, {2, 0}))),
              Pointwise(::testing::FloatNear(1e-6), std::vector<float>{1.7615942f, 0}));
  EXPECT_THAT(Values(SiluGrad(F32({2}, {0, 1}))),
              Pointwise(::testing::FloatNear(1e-6), std::vector<float>{0.5f, 0.7310586f * (1 + 0.2689414f)}));
  EXPECT_THAT(Values(Square(x)), ElementsAre(1, 0, 0.25f, 4));
  EXPECT_THAT(Values(Sqrt(F32({2}, {4, 9}))), ElementsAre(2, 3));
  EXPECT_THAT(Values(Rsqrt(F32({2}, {4, 0.25f}))), ElementsAre(0.5f, 2));
  EXPECT_THAT(Values(Tanh(F32({3}, {0, 0.5f, -3}))),
              Pointwise(::testing::FloatNear(1e-6), std::vector<float>{0, 0.46211716f, -0.99505475f}));
  EXPECT_THAT(Values(Abs(x)), ElementsAre(1, 0, 0.5f, 2));
  EXPECT_THAT(Values(Sign(x)), ElementsAre(-1, 0, 1, 1));
  EXPECT_THAT(Values(AddScalar(x, 1)), ElementsAre(0, 1, 1.5f, 3));
  EXPECT_THAT(Values(MulScalar(x, -2)), ElementsAre(2, 0, -1, -4));
  EXPECT_THAT(Values(PowScalar(F32({2}, {2, 9}), 3)), ElementsAre(8, 729));
  EXPECT_THAT(Values(PowScalar(F32({2}, {4, 9}), 0.5)), ElementsAre(2, 3));
}

TEST_P(ElementwiseTest, ExpOverflowAndNan) {
  std::vector<float> v = Values(Exp(F32({3}, {100, -200, NAN})));
  EXPECT_TRUE(std::isinf(v[0]));
  EXPECT_EQ(v[1], 0);
  EXPECT_TRUE(std::isnan(v[2]));
  std::vector<float> s = Values(Sigmoid(F32({2}, {-200, 200})));
  EXPECT_THAT(s, ElementsAre(0, 1));
}

TEST_P(ElementwiseTest, CastAndFills) {
  Tensor x = F32({3}, {1.5f, -2.7f, 3});
  Tensor i = Cast(x, DType::kI32);
  EXPECT_THAT(i.ToVector<int32_t>().value(), ElementsAre(1, -2, 3));
  EXPECT_THAT(Values64(Cast(x, DType::kF64)), ElementsAre(1.5, DoubleNear(-2.7, 1e-6), 3));
  EXPECT_THAT(Values(Cast(i, DType::kF32)), ElementsAre(1, -2, 3));
  EXPECT_THAT(Values(ZerosLike(x)), ElementsAre(0, 0, 0));
  EXPECT_THAT(Values(OnesLike(x)), ElementsAre(1, 1, 1));
}

TEST_P(ElementwiseTest, WhereBroadcastsMaskAndBranches) {
  Tensor mask = F32({2, 1}, {1, 0});
  Tensor a = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::Scalar<float>(-1);
  EXPECT_THAT(Values(Where(mask, a, b)), ElementsAre(1, 2, 3, -1, -1, -1));
}

INSTANTIATE_TEST_SUITE_P(Backends, ElementwiseTest, ::testing::Values(Backend::kReference, Backend::kCpu),
                         [](const auto& info) { return std::string(core::BackendName(info.param)); });

// ---- gradients ----

std::vector<Tensor> Grads(const std::function<Tensor(absl::Span<const Tensor>)>& f, std::vector<Tensor> wrt) {
  Tensor probe = f(wrt);
  auto g = core::Vjp([&](absl::Span<const Tensor> in) { return std::vector<Tensor>{f(in)}; }, wrt,
                     {OnesLike(probe)});
  EXPECT_TRUE(g.ok()) << g.status();
  return g.ok() ? *g : std::vector<Tensor>{};
}

TEST(ElementwiseGradTest, BinaryVjpsReduceToInputShapes) {
  Tensor x = F64({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = F64({3}, {1, 2, 4});
  auto g = Grads([](absl::Span<const Tensor> in) { return Mul(in[0], in[1]); }, {x, b});
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 2, 4, 1, 2, 4));
  EXPECT_THAT(Values64(g[1]), ElementsAre(5, 7, 9));  // column sums of x
  g = Grads([](absl::Span<const Tensor> in) { return Div(in[0], in[1]); }, {x, b});
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 0.5, 0.25, 1, 0.5, 0.25));
  EXPECT_THAT(Values64(g[1]), ElementsAre(-5.0, -7.0 / 4, -9.0 / 16));  // -sum x / b^2
}

TEST(ElementwiseGradTest, MaximumTiesGoToFirstInput) {
  Tensor a = F64({3}, {1, 2, 3});
  Tensor b = F64({3}, {2, 2, 1});
  auto g = Grads([](absl::Span<const Tensor> in) { return Maximum(in[0], in[1]); }, {a, b});
  EXPECT_THAT(Values64(g[0]), ElementsAre(0, 1, 1));
  EXPECT_THAT(Values64(g[1]), ElementsAre(1, 0, 0));
}

TEST(ElementwiseGradTest, SiluSecondDerivative) {
  // silu''(x) = s (1 - s) (2 + x (1 - 2 s)); at x = 0: 1/4 * 2 = 1/2.
  Tensor x = F64({2}, {0, 1.5});
  auto dsilu = [](absl::Span<const Tensor> in) {
    auto g = core::Vjp([](absl::Span<const Tensor> v) { return std::vector<Tensor>{Silu(v[0])}; }, {in[0]},
                       {OnesLike(in[0])});
    return (*g)[0];
  };
  auto g2 = Grads(dsilu, {x});
  const double s = 1 / (1 + std::exp(-1.5));
  EXPECT_THAT(Values64(g2[0]),
              ElementsAre(DoubleNear(0.5, 1e-12), DoubleNear(s * (1 - s) * (2 + 1.5 * (1 - 2 * s)), 1e-12)));
}

TEST(ElementwiseGradTest, SoftplusAndAbsAndCast) {
  Tensor x = F64({3}, {0, -2, 3});
  auto g = Grads([](absl::Span<const Tensor> in) { return Softplus(in[0]); }, {x});
  EXPECT_THAT(Values64(g[0]), ElementsAre(0.5, DoubleNear(1 / (1 + std::exp(2.0)), 1e-15),
                                          DoubleNear(1 / (1 + std::exp(-3.0)), 1e-15)));
  g = Grads([](absl::Span<const Tensor> in) { return Abs(in[0]); }, {x});
  EXPECT_THAT(Values64(g[0]), ElementsAre(0, -1, 1));
  g = Grads(
      [](absl::Span<const Tensor> in) { return Cast(MulScalar(Cast(in[0], DType::kF32), 3), DType::kF64); },
      {x});
  EXPECT_THAT(Values64(g[0]), ElementsAre(3, 3, 3));
}

TEST(ElementwiseGradTest, WhereSendsGradientToTheChosenBranch) {
  Tensor mask = F64({2, 1}, {1, 0});
  Tensor a = F64({2, 2}, {1, 2, 3, 4});
  Tensor b = F64({2}, {5, 6});
  auto g = Grads([&](absl::Span<const Tensor> in) { return Where(mask, in[0], in[1]); }, {a, b});
  EXPECT_THAT(Values64(g[0]), ElementsAre(1, 1, 0, 0));
  EXPECT_THAT(Values64(g[1]), ElementsAre(1, 1));
}

// ---- bad input ----

TEST(ElementwiseErrorTest, IncompatibleShapesNameOpAndShapes) {
  Tensor y = Add(F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({4}, {1, 2, 3, 4}));
  ASSERT_FALSE(y.ok());
  EXPECT_THAT(y.status().message(), HasSubstr("add"));
  EXPECT_THAT(y.status().message(), HasSubstr("(2, 3)"));
  EXPECT_THAT(y.status().message(), HasSubstr("(4)"));
  // Errors pass through later ops unchanged.
  Tensor z = Exp(Mul(y, y));
  EXPECT_EQ(z.status(), y.status());
}

TEST(ElementwiseErrorTest, DtypeMismatch) {
  Tensor y = Mul(F32({2}, {1, 2}), F64({2}, {1, 2}));
  ASSERT_FALSE(y.ok());
  EXPECT_THAT(y.status().message(), HasSubstr("mul"));
  EXPECT_THAT(y.status().message(), HasSubstr("expected the same dtype"));
}

TEST(ElementwiseErrorTest, UnsupportedDtypes) {
  Tensor idx = Tensor::FromHost<int32_t>({2}, {1, 2}).value();
  Tensor e = Exp(idx);
  ASSERT_FALSE(e.ok());
  EXPECT_THAT(e.status().message(), HasSubstr("exp"));
  EXPECT_THAT(e.status().message(), HasSubstr("expected f32 or f64"));
  Tensor d = Div(idx, idx);
  EXPECT_THAT(d.status().message(), HasSubstr("div"));
  Tensor c = Cast(F32({1}, {1}), static_cast<DType>(7));
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("cast"));
  EXPECT_THAT(c.status().message(), HasSubstr("unsupported"));
  Tensor w = Where(F32({2}, {1, 0}), F32({2}, {1, 2}), F64({2}, {1, 2}));
  EXPECT_THAT(w.status().message(), HasSubstr("where"));
  Tensor w2 = Where(F32({3}, {1, 0, 1}), F32({2}, {1, 2}), F32({2}, {1, 2}));
  EXPECT_THAT(w2.status().message(), HasSubstr("(3)"));
}

TEST(ElementwiseDeterminismTest, FastPathIsBitwiseRepeatable) {
  std::vector<float> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37f * i) * 10;
  Tensor x = F32({100, 1000}, v);
  Tensor b = F32({1000}, std::vector<float>(v.begin(), v.begin() + 1000));
  std::vector<float> first = Values(Silu(Add(x, b)));
  EXPECT_EQ(first, Values(Silu(Add(x, b))));
}

// Forward and backward through the three families under Jit: the replay equals eager execution
// bit for bit (views, multi-output split, broadcasts, reductions).
TEST(ElementwiseJitTest, ReplayOfForwardAndBackwardMatchesEager) {
  auto step = [](absl::Span<const Tensor> in) -> std::vector<Tensor> {
    auto loss = [](absl::Span<const Tensor> v) {
      Tensor h = Add(Mul(v[0], v[1]), v[2]);             // (2, 3, 4) * (2, 3, 1) + (4)
      std::vector<Tensor> parts = Split(h, -1, {1, 3});  // (2, 3, 1), (2, 3, 3)
      Tensor t = Transpose(Reshape(parts[1], {2, 3, 3}), {0, 2, 1});
      Tensor y = Mul(Silu(t), Softplus(Slice(Pad(t, 1, 1, 0), 1, 0, 3)));
      return std::vector<Tensor>{Add(MeanAll(y), SumAll(Square(parts[0])))};
    };
    auto g = core::Vjp(loss, in, {Tensor::Scalar<float>(1)});
    return g.ok() ? *g : std::vector<Tensor>{Tensor::Error(g.status())};
  };
  std::vector<float> xs(24), gs(6), bs(4);
  for (int i = 0; i < 24; ++i) xs[i] = std::sin(0.7f * i);
  for (int i = 0; i < 6; ++i) gs[i] = std::cos(0.3f * i);
  for (int i = 0; i < 4; ++i) bs[i] = 0.1f * i;
  std::vector<Tensor> in = {F32({2, 3, 4}, xs), F32({2, 3, 1}, gs), F32({4}, bs)};
  std::vector<Tensor> eager = step(in);
  core::Jit jit(step);
  for (int rep = 0; rep < 2; ++rep) {
    auto out = jit(in);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ(out->size(), 3u);
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(Values((*out)[k]), Values(eager[k])) << "rep " << rep << " grad " << k;
  }
  EXPECT_EQ(jit.num_traces(), 1);
}

}  // namespace
}  // namespace mimetic::ops
