#include "mimetic/ops/cross_entropy/cross_entropy.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/op.h"

namespace mimetic::ops {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

Tensor F32(core::Shape shape, std::vector<float> v) { return Tensor::FromHost<float>(shape, v).value(); }
Tensor I32(core::Shape shape, std::vector<int32_t> v) { return Tensor::FromHost<int32_t>(shape, v).value(); }

std::vector<float> Values(const Tensor& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t.ToVector<float>().value() : std::vector<float>{};
}

// d loss / d logits through the op's VJP (seed 1).
std::vector<float> Grad(const Tensor& logits, const Tensor& targets, const Tensor& mask) {
  auto f = [&](absl::Span<const Tensor> in) {
    return std::vector<Tensor>{MaskedCrossEntropy(in[0], targets, mask)};
  };
  auto grads = core::Vjp(f, {logits}, {Tensor::Scalar<float>(1.f)});
  EXPECT_TRUE(grads.ok()) << grads.status();
  return grads.ok() ? Values((*grads)[0]) : std::vector<float>{};
}

class CrossEntropyTest : public ::testing::TestWithParam<core::Backend> {
 protected:
  core::ScopedCpuBackend backend_{GetParam()};
};

TEST_P(CrossEntropyTest, HandComputedLossAndGradient) {
  // Row 0: logits [0, 0], target 0: softmax [1/2, 1/2], CE = ln 2.
  // Row 1: logits [ln 3, 0], target 1: softmax [3/4, 1/4], CE = ln 4.
  const Tensor logits = F32({1, 2, 2}, {0, 0, std::log(3.f), 0});
  const Tensor targets = I32({1, 2}, {0, 1});
  const Tensor ones = F32({1, 2}, {1, 1});
  EXPECT_NEAR(MaskedCrossEntropy(logits, targets, ones).Item<float>().value(), 1.5 * std::log(2.0), 1e-6);
  // dlogits = mask / sum(mask) * (softmax - onehot) = [[-1/4, 1/4], [3/8, -3/8]].
  EXPECT_THAT(Grad(logits, targets, ones), ElementsAre(FloatNear(-0.25f, 1e-6), FloatNear(0.25f, 1e-6),
                                                       FloatNear(0.375f, 1e-6), FloatNear(-0.375f, 1e-6)));
  // Mask [1, 0]: only row 0 counts, and row 1 gets no gradient.
  const Tensor first = F32({1, 2}, {1, 0});
  EXPECT_NEAR(MaskedCrossEntropy(logits, targets, first).Item<float>().value(), std::log(2.0), 1e-6);
  EXPECT_THAT(Grad(logits, targets, first),
              ElementsAre(FloatNear(-0.5f, 1e-6), FloatNear(0.5f, 1e-6), 0.f, 0.f));
}

TEST_P(CrossEntropyTest, WeightedMaskIsWeightedMean) {
  // CE = ln 2 (row 0) and ln 4 (row 1) with weights 3 and 1: (3 ln 2 + 2 ln 2) / 4.
  const Tensor logits = F32({2, 2}, {0, 0, std::log(3.f), 0});
  const Tensor loss = MaskedCrossEntropy(logits, I32({2}, {0, 1}), F32({2}, {3, 1}));
  EXPECT_NEAR(loss.Item<float>().value(), 1.25 * std::log(2.0), 1e-6);
}

TEST_P(CrossEntropyTest, ExtremeLogitsStayFinite) {
  // Rows [50, -50] with target 0 (CE = log(1 + e^-100) ~ 0) and target 1 (CE ~ 100): mean 50.
  const Tensor logits = F32({2, 2}, {50, -50, 50, -50});
  const Tensor targets = I32({2}, {0, 1});
  const Tensor mask = F32({2}, {1, 1});
  EXPECT_NEAR(MaskedCrossEntropy(logits, targets, mask).Item<float>().value(), 50.0, 1e-5);
  // Row 0: softmax - onehot ~ [0, 0]; row 1: [1, -1] / 2.
  EXPECT_THAT(Grad(logits, targets, mask), ElementsAre(FloatNear(0.f, 1e-7), FloatNear(0.f, 1e-7),
                                                       FloatNear(0.5f, 1e-6), FloatNear(-0.5f, 1e-6)));
  // Far beyond exp's range: still finite, CE = 2000.
  const Tensor huge = F32({1, 3}, {1000, -1000, 0});
  const float l = MaskedCrossEntropy(huge, I32({1}, {1}), F32({1}, {1})).Item<float>().value();
  EXPECT_NEAR(l, 2000.f, 1e-2);
}

TEST_P(CrossEntropyTest, ZeroMaskIgnoresTargetsAndGivesZero) {
  // Targets -100 and 7 (V = 3) are ignored where the mask is 0; an all-zero mask gives loss 0.
  const Tensor logits = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor targets = I32({2}, {-100, 7});
  const Tensor zeros = F32({2}, {0, 0});
  EXPECT_EQ(MaskedCrossEntropy(logits, targets, zeros).Item<float>().value(), 0.f);
  EXPECT_THAT(Grad(logits, targets, zeros), ElementsAre(0.f, 0.f, 0.f, 0.f, 0.f, 0.f));
  const Tensor partial = MaskedCrossEntropy(logits, I32({2}, {2, -100}), F32({2}, {1, 0}));
  // Row 0: logsumexp(1, 2, 3) - 3.
  EXPECT_NEAR(partial.Item<float>().value(), std::log(std::exp(-2.0) + std::exp(-1.0) + 1.0), 1e-6);
}

TEST_P(CrossEntropyTest, VocabularyOfOne) {
  const Tensor logits = F32({3, 1}, {-4, 0, 9});
  EXPECT_EQ(MaskedCrossEntropy(logits, I32({3}, {0, 0, 0}), F32({3}, {1, 1, 1})).Item<float>().value(), 0.f);
}

TEST_P(CrossEntropyTest, F64) {
  const Tensor logits = Tensor::FromHost<double>({2}, {0, 0}).value();
  const Tensor mask = Tensor::FromHost<double>({}, {1}).value();
  const Tensor loss = MaskedCrossEntropy(logits, I32({}, {1}), mask);
  ASSERT_TRUE(loss.ok()) << loss.status();
  EXPECT_DOUBLE_EQ(loss.Item<double>().value(), std::log(2.0));
}

TEST_P(CrossEntropyTest, OutOfRangeTargetUnderMaskIsAnError) {
  const Tensor logits = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor loss = MaskedCrossEntropy(logits, I32({2}, {0, 3}), F32({2}, {1, 1}));
  ASSERT_FALSE(loss.ok());
  EXPECT_EQ(loss.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(loss.status().message(),
              HasSubstr("masked_cross_entropy(f32(2, 3)@cpu, i32(2)@cpu, f32(2)@cpu)"));
  EXPECT_THAT(loss.status().message(), HasSubstr("target 3 at flat position 1"));
  EXPECT_THAT(loss.status().message(), HasSubstr("V=3"));
  const Tensor g =
      MaskedCrossEntropyBackward(logits, I32({2}, {-1, 0}), F32({2}, {1, 1}), Tensor::Scalar(1.f));
  EXPECT_THAT(g.status().message(), HasSubstr("target -1 at flat position 0"));
}

INSTANTIATE_TEST_SUITE_P(Backends, CrossEntropyTest,
                         ::testing::Values(core::Backend::kReference, core::Backend::kCpu),
                         [](const auto& info) { return std::string(core::BackendName(info.param)); });

TEST(CrossEntropyErrors, BadShapesAndDtypes) {
  const Tensor logits = Tensor::Zeros({2, 3, 4}).value();
  const Tensor targets = Tensor::Zeros({2, 3}, core::DType::kI32).value();
  const Tensor mask = Tensor::Zeros({2, 3}).value();
  EXPECT_TRUE(MaskedCrossEntropy(logits, targets, mask).ok());
  const Tensor wrong_targets =
      MaskedCrossEntropy(logits, Tensor::Zeros({2, 4}, core::DType::kI32).value(), mask);
  EXPECT_THAT(wrong_targets.status().message(),
              HasSubstr("masked_cross_entropy(f32(2, 3, 4)@cpu, i32(2, 4)@cpu"));
  EXPECT_THAT(wrong_targets.status().message(), HasSubstr("expected i32 targets (2, 3)"));
  EXPECT_THAT(MaskedCrossEntropy(logits, mask, mask).status().message(), HasSubstr("expected i32 targets"));
  EXPECT_THAT(MaskedCrossEntropy(logits, targets, Tensor::Zeros({2, 3}, core::DType::kF64).value())
                  .status()
                  .message(),
              HasSubstr("mask is f64(2, 3)@cpu; expected a f32(2, 3) mask"));
  EXPECT_THAT(MaskedCrossEntropy(targets, targets, mask).status().message(),
              HasSubstr("expected (..., V) f32 or f64 logits"));
  const Tensor g = MaskedCrossEntropyBackward(logits, targets, mask, Tensor::Zeros({1}).value());
  EXPECT_THAT(g.status().message(), HasSubstr("expected a rank-0 f32 cotangent"));
}

}  // namespace
}  // namespace mimetic::ops
