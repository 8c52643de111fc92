// Worked examples and bad-input checks for RmsNorm, LayerNorm and GatedRmsNorm.
#include "mimetic/ops/norm/norm.h"

#include <omp.h>

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/random.h"

namespace mimetic::ops {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

Tensor F32(core::Shape shape, std::vector<float> v) { return Tensor::FromHost<float>(shape, v).value(); }
std::vector<float> Values(const Tensor& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ToVector<float>().value();
}

constexpr float kTol = 1e-6f;

TEST(RmsNormTest, WorkedExample) {
  // [3, 4] / sqrt((9 + 16) / 2) with eps 0.
  const float r = 1.0f / std::sqrt(12.5f);
  EXPECT_THAT(Values(RmsNorm(F32({1, 2}, {3, 4}), F32({2}, {1, 1}), 0.0)),
              ElementsAre(FloatNear(3 * r, kTol), FloatNear(4 * r, kTol)));
  // Two rows, weight [2, 0.5], eps 2: row [1, 1] -> 1 / sqrt(1 + 2); row [0, 2] -> 1 / sqrt(2 + 2).
  const float r0 = 1.0f / std::sqrt(3.0f);
  EXPECT_THAT(Values(RmsNorm(F32({2, 2}, {1, 1, 0, 2}), F32({2}, {2, 0.5}), 2.0)),
              ElementsAre(FloatNear(2 * r0, kTol), FloatNear(0.5f * r0, kTol), FloatNear(0, kTol),
                          FloatNear(0.5f, kTol)));
}

TEST(RmsNormTest, BackwardWorkedExample) {
  // x = [3, 4], w = 1, dy = [1, 0], eps 0: r^2 = 0.08, sum(dy w x) = 3,
  // dx = r (dy - x r^2 * 3 / 2) = r [0.64, -0.48]; dw = dy x r = [3 r, 0].
  const float r = 1.0f / std::sqrt(12.5f);
  for (core::Backend backend : {core::Backend::kReference, core::Backend::kCpu}) {
    core::ScopedCpuBackend scope(backend);
    std::vector<Tensor> g = RmsNormBackward(F32({1, 2}, {3, 4}), F32({2}, {1, 1}), F32({1, 2}, {1, 0}), 0.0);
    ASSERT_EQ(g.size(), 2u);
    EXPECT_THAT(Values(g[0]), ElementsAre(FloatNear(0.64f * r, kTol), FloatNear(-0.48f * r, kTol)));
    EXPECT_THAT(Values(g[1]), ElementsAre(FloatNear(3 * r, kTol), FloatNear(0, kTol)));
  }
}

TEST(LayerNormTest, WorkedExample) {
  // [1, 2, 3]: mean 2, biased variance 2/3, so xhat = [-1, 0, 1] * sqrt(3/2).
  const float s = std::sqrt(1.5f);
  for (core::Backend backend : {core::Backend::kReference, core::Backend::kCpu}) {
    core::ScopedCpuBackend scope(backend);
    EXPECT_THAT(Values(LayerNorm(F32({3}, {1, 2, 3}), F32({3}, {1, 2, 3}), F32({3}, {0.5, 0, -1}), 0.0)),
                ElementsAre(FloatNear(0.5f - s, kTol), FloatNear(0, kTol), FloatNear(3 * s - 1, 2 * kTol)));
  }
}

TEST(LayerNormTest, BackwardWorkedExample) {
  // D = 2, eps 0: xhat = [-1, 1] for any x0 < x1, so dx = 0 and dw = dy xhat, db = dy.
  std::vector<Tensor> g = LayerNormBackward(F32({1, 2}, {5, 7}), F32({2}, {1, 1}), F32({1, 2}, {2, 3}), 0.0);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_THAT(Values(g[0]), ElementsAre(FloatNear(0, kTol), FloatNear(0, kTol)));
  EXPECT_THAT(Values(g[1]), ElementsAre(FloatNear(-2, kTol), FloatNear(3, kTol)));
  EXPECT_THAT(Values(g[2]), ElementsAre(FloatNear(2, kTol), FloatNear(3, kTol)));
}

TEST(GatedRmsNormTest, WorkedExampleGroups) {
  // z = 40: silu(z) = 40 (to float precision), so n = 40 y. Groups of 2 with eps 0:
  // [120, 160] / sqrt(20000) = [3, 4] / sqrt(12.5); [40, 40] / 40 = [1, 1]; then times weight.
  const float r = 1.0f / std::sqrt(12.5f);
  for (core::Backend backend : {core::Backend::kReference, core::Backend::kCpu}) {
    core::ScopedCpuBackend scope(backend);
    EXPECT_THAT(
        Values(GatedRmsNorm(F32({4}, {3, 4, 1, 1}), F32({4}, {40, 40, 40, 40}), F32({4}, {1, 1, 2, 3}),
                            /*group_size=*/2, 0.0)),
        ElementsAre(FloatNear(3 * r, kTol), FloatNear(4 * r, kTol), FloatNear(2, kTol), FloatNear(3, kTol)));
    // One group over all E: z = 0 gates the second channel off (silu(0) = 0): [120, 0] / sqrt(7200).
    EXPECT_THAT(Values(GatedRmsNorm(F32({1, 2}, {3, 4}), F32({1, 2}, {40, 0}), F32({2}, {1, 1}), 2, 0.0)),
                ElementsAre(FloatNear(std::sqrt(2.0f), kTol), FloatNear(0, kTol)));
  }
}

TEST(GatedRmsNormTest, GroupOfOneIsSignTimesWeight) {
  // group_size 1, eps 0: n / |n| * w = sign(y silu(z)) * w. silu(-1) < 0 flips the sign.
  EXPECT_THAT(Values(GatedRmsNorm(F32({3}, {2, -3, 5}), F32({3}, {1, 2, -1}), F32({3}, {1, 2, 3}), 1, 0.0)),
              ElementsAre(FloatNear(1, kTol), FloatNear(-2, kTol), FloatNear(-3, kTol)));
}

TEST(NormTest, BackwardIsIndependentOfThreadCount) {
  // 1000 rows: the dweight reduction runs over 64 blocks, whatever the number of threads.
  Tensor y = core::Normal(core::Key::FromSeed(1), {1000, 24}, core::DType::kF32).value();
  Tensor z = core::Normal(core::Key::FromSeed(2), {1000, 24}, core::DType::kF32).value();
  Tensor g = core::Normal(core::Key::FromSeed(3), {1000, 24}, core::DType::kF32).value();
  Tensor w = core::Normal(core::Key::FromSeed(4), {24}, core::DType::kF32).value();
  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<Tensor> out = GatedRmsNormBackward(y, z, w, g, 8, 1e-5);
    std::vector<Tensor> rms = RmsNormBackward(y, w, g, 1e-5);
    std::vector<Tensor> ln = LayerNormBackward(y, w, g, 1e-5);
    out.insert(out.end(), rms.begin(), rms.end());
    out.insert(out.end(), ln.begin(), ln.end());
    omp_set_num_threads(saved);
    return out;
  };
  std::vector<Tensor> one = run(1), three = run(3);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(Values(one[i]), Values(three[i])) << "output " << i;
}

TEST(NormTest, F64) {
  Tensor x = Tensor::FromHost<double>({2}, {3, 4}).value();
  Tensor w = Tensor::FromHost<double>({2}, {1, 1}).value();
  std::vector<double> y = RmsNorm(x, w, 0.0).ToVector<double>().value();
  EXPECT_NEAR(y[0], 3 / std::sqrt(12.5), 1e-15);
  EXPECT_NEAR(y[1], 4 / std::sqrt(12.5), 1e-15);
}

TEST(NormTest, F64FastPathMatchesReference) {
  // The consistency harness compares backends in f32 only; the fast kernels are templated, so
  // check their f64 instantiation here.
  auto randn = [](uint32_t seed, core::Shape shape) {
    return core::Normal(core::Key::FromSeed(seed), shape, core::DType::kF64).value();
  };
  Tensor y = randn(1, {70, 12}), z = randn(2, {70, 12}), g = randn(3, {70, 12}), w = randn(4, {12});
  auto run = [&](core::Backend backend) {
    core::ScopedCpuBackend scope(backend);
    std::vector<Tensor> out = GatedRmsNormBackward(y, z, w, g, 4, 1e-5);
    for (const std::vector<Tensor>& more :
         {RmsNormBackward(y, w, g, 1e-5), LayerNormBackward(y, w, g, 1e-5)}) {
      out.insert(out.end(), more.begin(), more.end());
    }
    out.push_back(GatedRmsNorm(y, z, w, 4, 1e-5));
    out.push_back(RmsNorm(y, w, 1e-5));
    out.push_back(LayerNorm(y, w, randn(5, {12}), 1e-5));
    return out;
  };
  std::vector<Tensor> fast = run(core::Backend::kCpu), ref = run(core::Backend::kReference);
  ASSERT_EQ(fast.size(), ref.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    std::vector<double> a = fast[i].ToVector<double>().value(), b = ref[i].ToVector<double>().value();
    ASSERT_EQ(a.size(), b.size());
    for (size_t e = 0; e < a.size(); ++e)
      EXPECT_NEAR(a[e], b[e], 1e-11 * (1 + std::abs(b[e]))) << i << " " << e;
  }
}

TEST(NormTest, BadInputs) {
  Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor w3 = F32({3}, {1, 1, 1});
  Tensor w4 = F32({4}, {1, 1, 1, 1});

  Tensor bad = RmsNorm(x, w4, 1e-5);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("rms_norm(f32(2, 3)@cpu, f32(4)@cpu"));
  EXPECT_THAT(bad.status().message(), HasSubstr("weight has shape (4); expected (3)"));

  bad = LayerNorm(x, w3, w4, 1e-5);
  EXPECT_THAT(bad.status().message(), HasSubstr("layer_norm("));
  EXPECT_THAT(bad.status().message(), HasSubstr("bias has shape (4); expected (3)"));

  bad = RmsNorm(x, Tensor::FromHost<double>({3}, {1, 1, 1}).value(), 1e-5);
  EXPECT_THAT(bad.status().message(), HasSubstr("weight has dtype f64 but x has f32"));

  bad = RmsNorm(Tensor::FromHost<int32_t>({3}, {1, 2, 3}).value(), w3, 1e-5);
  EXPECT_THAT(bad.status().message(), HasSubstr("x has dtype i32; expected f32 or f64"));

  bad = RmsNorm(Tensor::Scalar<float>(1.0f), w3, 1e-5);
  EXPECT_THAT(bad.status().message(), HasSubstr("x is a scalar"));

  bad = RmsNorm(x, w3, -1.0);
  EXPECT_THAT(bad.status().message(), HasSubstr("eps must be finite and >= 0; got -1"));

  Tensor y = core::Normal(core::Key::FromSeed(1), {2, 12}, core::DType::kF32).value();
  Tensor w12 = core::Normal(core::Key::FromSeed(2), {12}, core::DType::kF32).value();
  bad = GatedRmsNorm(y, y, w12, 5, 1e-5);
  EXPECT_THAT(bad.status().message(), HasSubstr("gated_rms_norm("));
  EXPECT_THAT(bad.status().message(),
              HasSubstr("group_size 5 must be >= 1 and divide the last dimension E = 12"));
  bad = GatedRmsNorm(y, y, w12, 0, 1e-5);
  EXPECT_THAT(bad.status().message(), HasSubstr("group_size 0"));
  bad = GatedRmsNorm(y, x, w12, 4, 1e-5);
  EXPECT_THAT(bad.status().message(), HasSubstr("z is f32(2, 3)@cpu; expected f32(2, 12)@cpu"));

  // Backward primitives: an error tensor for every cotangent.
  std::vector<Tensor> g = GatedRmsNormBackward(y, y, w12, x, 4, 1e-5);
  ASSERT_EQ(g.size(), 3u);
  for (const Tensor& t : g) EXPECT_THAT(t.status().message(), HasSubstr("dout is f32(2, 3)@cpu"));
  g = LayerNormBackward(x, w4, x, 1e-5);
  ASSERT_EQ(g.size(), 3u);
  for (const Tensor& t : g) EXPECT_THAT(t.status().message(), HasSubstr("layer_norm_backward("));
}

}  // namespace
}  // namespace mimetic::ops
