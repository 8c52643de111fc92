#include "mimetic/core/autodiff.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/toy_ops_for_test.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

Tensor Vec(std::initializer_list<float> v) {
  return Tensor::FromHost<float>({static_cast<int64_t>(v.size())}, v).value();
}

// loss = sum(w * w * x)  =>  dloss/dw = 2 w x
TEST(ValueAndGradTest, QuadraticMatchesClosedForm) {
  ParamTree params = ParamTree::FromPairs({{"w", Vec({1, -2, 3})}}).value();
  auto f = [](const ParamTree& p, absl::Span<const Tensor> in) {
    Tensor w = p.Get("w").value();
    return toy::SumAll(toy::Mul(toy::Mul(w, w), in[0]));
  };
  ValueAndGradResult r = ValueAndGrad(f)(params, {Vec({0.5, 1, 2})}).value();
  EXPECT_FLOAT_EQ(r.value.Item<float>().value(), 0.5f + 4.f + 18.f);
  EXPECT_THAT(r.grads.Get("w").value().ToVector<float>().value(), ::testing::ElementsAre(1.f, -4.f, 12.f));
}

TEST(ValueAndGradTest, UnusedParameterGetsZerosAndViewsPropagate) {
  ParamTree params = ParamTree::FromPairs({{"a", Vec({1, 2, 3, 4})}, {"unused", Vec({7})}}).value();
  auto f = [](const ParamTree& p, absl::Span<const Tensor>) {
    Tensor a = toy::Reshape(p.Get("a").value(), {2, 2});
    return toy::SumAll(toy::Mul(a, a));
  };
  ValueAndGradResult r = ValueAndGrad(f)(params, {}).value();
  EXPECT_THAT(r.grads.Get("a").value().ToVector<float>().value(), ::testing::ElementsAre(2.f, 4.f, 6.f, 8.f));
  EXPECT_THAT(r.grads.Get("unused").value().ToVector<float>().value(), ::testing::ElementsAre(0.f));
  EXPECT_TRUE(r.grads.SameStructure(params));
}

TEST(ValueAndGradTest, SecondDerivativeByNesting) {
  // g(w) = d/dw sum(w^3) = 3 w^2; d/dw sum(g(w) * 1) = 6 w.
  ParamTree params = ParamTree::FromPairs({{"w", Vec({1, 2})}}).value();
  auto inner = [](const ParamTree& p, absl::Span<const Tensor>) {
    Tensor w = p.Get("w").value();
    return toy::SumAll(toy::Mul(toy::Mul(w, w), w));
  };
  auto outer = [&](const ParamTree& p, absl::Span<const Tensor>) {
    ValueAndGradResult r = ValueAndGrad(inner)(p, {}).value();
    return toy::SumAll(r.grads.Get("w").value());
  };
  ValueAndGradResult r = ValueAndGrad(outer)(params, {}).value();
  EXPECT_FLOAT_EQ(r.value.Item<float>().value(), 3.f + 12.f);
  EXPECT_THAT(r.grads.Get("w").value().ToVector<float>().value(), ::testing::ElementsAre(6.f, 12.f));
}

TEST(ValueAndGradTest, NonScalarLossIsAnError) {
  ParamTree params = ParamTree::FromPairs({{"w", Vec({1, 2})}}).value();
  auto f = [](const ParamTree& p, absl::Span<const Tensor>) { return toy::Mul(p.Get("w").value(), p.Get("w").value()); };
  absl::Status s = ValueAndGrad(f)(params, {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("f32(2)@cpu"));
  EXPECT_THAT(s.message(), HasSubstr("expected a scalar"));
}

TEST(ValueAndGradTest, OpErrorInsideLossIsReturnedNamingTheOp) {
  ParamTree params = ParamTree::FromPairs({{"w", Vec({1, 2})}}).value();
  auto f = [](const ParamTree& p, absl::Span<const Tensor> in) {
    return toy::SumAll(toy::Mul(p.Get("w").value(), in[0]));
  };
  absl::Status s = ValueAndGrad(f)(params, {Vec({1, 2, 3})}).status();
  EXPECT_THAT(s.message(), HasSubstr("toy_mul(f32(2)@cpu, f32(3)@cpu): shapes differ"));
}

TEST(VjpTest, SeedsScaleCotangents) {
  Tensor x = Vec({1, 2, 3});
  auto f = [](absl::Span<const Tensor> in) { return std::vector<Tensor>{toy::Mul(in[0], in[0])}; };
  std::vector<Tensor> g = Vjp(f, {x}, {Vec({1, 10, 100})}).value();
  EXPECT_THAT(g[0].ToVector<float>().value(), ::testing::ElementsAre(2.f, 40.f, 600.f));
}

// (x) -> (x * x, x): output 1 is kept for the backward only when reads_copy_grad is false. The VJP
// records whether the cotangent of output 1 was an empty Tensor() or zeros.
class SquareAndCopyOp : public Op {
 public:
  SquareAndCopyOp(bool reads_copy_grad, bool* got_empty) : reads_(reads_copy_grad), got_empty_(got_empty) {}
  const char* name() const override { return "square_and_copy"; }
  size_t num_outputs() const override { return 2; }
  bool VjpReadsOutputGrad(size_t output) const override { return output == 0 || reads_; }
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override {
    return std::vector<TensorMeta>{in[0], in[0]};
  }
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override {
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      const float v = in[0].data<float>()[i];
      out[0].mutable_data<float>()[i] = v * v;
      out[1].mutable_data<float>()[i] = v;
    }
    return absl::OkStatus();
  }
  std::vector<Tensor> Vjp(absl::Span<const Tensor>, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> g) const override {
    *got_empty_ = !g[1].ok();
    Tensor dx = toy::Mul(toy::Mul(g[0], out[1]), Vec({2, 2}));  // 2 x g0 (out[1] is x)
    return {dx};
  }

 private:
  bool reads_;
  bool* got_empty_;
};

TEST(VjpTest, OutputsWhoseGradientTheVjpIgnoresGetNoZeros) {
  for (bool reads : {true, false}) {
    bool got_empty = false;
    auto f = [&](absl::Span<const Tensor> in) {
      return std::vector<Tensor>{Call(std::make_shared<SquareAndCopyOp>(reads, &got_empty), {in[0]})[0]};
    };
    std::vector<Tensor> g = Vjp(f, {Vec({3, -1})}, {Vec({1, 10})}).value();
    EXPECT_THAT(g[0].ToVector<float>().value(), ::testing::ElementsAre(6.f, -20.f));
    EXPECT_EQ(got_empty, !reads) << "reads " << reads;
  }
}

}  // namespace
}  // namespace mimetic::core
