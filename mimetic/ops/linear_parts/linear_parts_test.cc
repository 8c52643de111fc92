// LinearParts: a hand-computed example, the forward's bits against one MatMul per part, the fused
// backward against the per-part products' VJPs, thread-count independence, and bad inputs.
#include "mimetic/ops/linear_parts/linear_parts.h"

#include <omp.h>

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/key.h"
#include "mimetic/core/random.h"
#include "mimetic/ops/matmul/matmul.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::ops {
namespace {

using ::testing::HasSubstr;

std::vector<float> Vec(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>();
}

Tensor Normal(uint64_t seed, core::Shape shape) {
  return core::Normal(core::Key::FromSeed(seed), std::move(shape)).value();
}

TEST(LinearPartsTest, HandComputedExample) {
  // x = [1, 2]; w rows [1, 0], [0, 1], [3, -1]: parts of 2 and 1 outputs.
  Tensor x = Tensor::FromHost<float>({1, 2}, {1, 2}).value();
  Tensor w = Tensor::FromHost<float>({3, 2}, {1, 0, 0, 1, 3, -1}).value();
  std::vector<Tensor> y = LinearParts(x, w, {2, 1});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0].shape(), (core::Shape{1, 2}));
  EXPECT_EQ(Vec(y[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(Vec(y[1]), (std::vector<float>{1}));
  // Cotangents g0 = [1, 1], g1 = [2]: dx = g0 w[0:2] + g1 w[2] = [1, 1] + [6, -2]; dw = gᵀ x.
  std::vector<Tensor> grads = LinearPartsBackward(
      x, w, {Tensor::FromHost<float>({1, 2}, {1, 1}).value(), Tensor::FromHost<float>({1, 1}, {2}).value()});
  EXPECT_EQ(Vec(grads[0]), (std::vector<float>{7, -1}));
  EXPECT_EQ(Vec(grads[1]), (std::vector<float>{1, 2, 1, 2, 2, 4}));
}

// Mamba 2's in_proj at the main job's width, fewer rows: [z | x | B | C | dt] = 128, 128, 32, 32, 8.
const std::vector<int64_t> kParts = {128, 128, 32, 32, 8};

TEST(LinearPartsTest, ForwardBitsEqualOneMatMulPerPart) {
  Tensor x = Normal(1, {4, 50, 64});
  Tensor w = Normal(2, {328, 64});
  std::vector<Tensor> fused = LinearParts(x, w, kParts);
  std::vector<Tensor> wi = Split(w, 0, kParts);
  for (size_t i = 0; i < kParts.size(); ++i) {
    EXPECT_EQ(Vec(fused[i]), Vec(MatMul(x, wi[i], false, true))) << "part " << i;
  }
}

TEST(LinearPartsTest, BackwardMatchesThePerPartProducts) {
  Tensor x = Normal(3, {4, 50, 64});
  Tensor w = Normal(4, {328, 64});
  std::vector<Tensor> g;
  for (size_t i = 0; i < kParts.size(); ++i) g.push_back(Normal(10 + i, {4, 50, kParts[i]}));
  std::vector<Tensor> fused = LinearPartsBackward(x, w, g);
  // The per-part path: dx = Σ_i g_i W_i, dW = concat_i g_iᵀ x.
  std::vector<Tensor> wi = Split(w, 0, kParts);
  Tensor dx = MatMul(g[0], wi[0]);
  std::vector<Tensor> dw;
  for (size_t i = 0; i < kParts.size(); ++i) {
    if (i > 0) dx = core::Accumulate(dx, MatMul(g[i], wi[i]));
    dw.push_back(MatMulSumBatch(g[i], x, true, false));
  }
  const std::vector<float> a = Vec(fused[0]), b = Vec(dx);
  ASSERT_EQ(a.size(), b.size());
  for (size_t e = 0; e < a.size(); ++e) ASSERT_NEAR(a[e], b[e], 1e-4) << "dx element " << e;
  // The weight gradient runs the same GEMMs as MatMulSumBatch: the same bits.
  EXPECT_EQ(Vec(fused[1]), Vec(Concat(dw, 0)));
}

TEST(LinearPartsTest, SameBitsOnOneAndTwoThreads) {
  Tensor x = Normal(5, {3, 70, 64});
  Tensor w = Normal(6, {328, 64});
  std::vector<Tensor> g;
  for (size_t i = 0; i < kParts.size(); ++i) g.push_back(Normal(20 + i, {3, 70, kParts[i]}));
  omp_set_num_threads(1);
  std::vector<Tensor> one = LinearPartsBackward(x, w, g);
  std::vector<Tensor> y1 = LinearParts(x, w, kParts);
  omp_set_num_threads(2);
  std::vector<Tensor> two = LinearPartsBackward(x, w, g);
  std::vector<Tensor> y2 = LinearParts(x, w, kParts);
  EXPECT_EQ(Vec(one[0]), Vec(two[0]));
  EXPECT_EQ(Vec(one[1]), Vec(two[1]));
  for (size_t i = 0; i < kParts.size(); ++i) EXPECT_EQ(Vec(y1[i]), Vec(y2[i]));
}

TEST(LinearPartsTest, BadInputsNameWhatIsWrong) {
  Tensor x = Normal(7, {2, 5});
  Tensor w = Normal(8, {6, 5});
  EXPECT_THAT(LinearParts(x, w, {2, 3})[0].status().message(), HasSubstr("sum to 5 but w (6, 5) has 6 rows"));
  EXPECT_THAT(LinearParts(x, w, {6, 0})[0].status().message(), HasSubstr("expected one or more positive"));
  EXPECT_THAT(LinearParts(x, Normal(9, {6, 4}), {6})[0].status().message(), HasSubstr("has K = 5"));
  EXPECT_THAT(LinearPartsBackward(x, w, {Normal(10, {2, 4}), Normal(11, {2, 3})})[0].status().message(),
              HasSubstr("sum to 7"));
  EXPECT_THAT(LinearPartsBackward(x, w, {Normal(10, {3, 6})})[0].status().message(),
              HasSubstr("cotangent 0 is f32(3, 6); expected f32(2, 6)"));
}

}  // namespace
}  // namespace mimetic::ops
