#include "mimetic/ops/adamw/adamw.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::ops {
namespace {

Tensor Vec(std::vector<double> v) { return Tensor::FromHost<double>({int64_t(v.size())}, v).value(); }

// Matches a hand-unrolled PyTorch AdamW step (torch.optim.AdamW, default betas, eps 1e-8).
TEST(AdamWTest, MatchesTheClosedForm) {
  const double lr = 1e-3, wd = 0.1, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  const int t = 3;
  const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
  Tensor p = Vec({1.0, -2.0}), g = Vec({0.5, 0.25}), m = Vec({0.1, 0.0}), v = Vec({0.01, 0.02});
  AdamWResult r = AdamWUpdate(p, g, m, v, Vec({lr, bc1, bc2, 2.0}), {b1, b2, eps, wd});
  std::vector<double> po = r.param.ToVector<double>().value();
  const double pv[2] = {1.0, -2.0}, gv[2] = {1.0, 0.5}, mv[2] = {0.1, 0.0}, vv[2] = {0.01, 0.02};
  for (int i = 0; i < 2; ++i) {
    const double mi = b1 * mv[i] + (1 - b1) * gv[i];
    const double vi = b2 * vv[i] + (1 - b2) * gv[i] * gv[i];
    const double want = pv[i] * (1 - lr * wd) - (lr / bc1) * mi / (std::sqrt(vi) / std::sqrt(bc2) + eps);
    EXPECT_NEAR(po[i], want, 1e-15);
    EXPECT_NEAR(r.m.ToVector<double>().value()[i], mi, 1e-15);
    EXPECT_NEAR(r.v.ToVector<double>().value()[i], vi, 1e-15);
  }
}

TEST(AdamWTest, FastEqualsReferenceBitForBit) {
  std::vector<float> pv(100000), gv(100000), mv(100000), vv(100000);
  for (int i = 0; i < 100000; ++i) {
    pv[i] = std::sin(i * 0.1f);
    gv[i] = std::cos(i * 0.3f);
    mv[i] = 0.01f * std::sin(i * 0.7f);
    vv[i] = 0.001f * (1 + std::cos(i * 0.9f));
  }
  auto t = [](const std::vector<float>& v) {
    return Tensor::FromHost<float>({int64_t(v.size())}, v).value();
  };
  Tensor s = Tensor::FromHost<float>({4}, {1e-3f, 0.1f, 0.001f, 0.5f}).value();
  AdamWResult fast = AdamWUpdate(t(pv), t(gv), t(mv), t(vv), s, {0.9, 0.999, 1e-8, 0.1});
  core::ScopedCpuBackend ref(core::Backend::kReference);
  AdamWResult slow = AdamWUpdate(t(pv), t(gv), t(mv), t(vv), s, {0.9, 0.999, 1e-8, 0.1});
  EXPECT_EQ(fast.param.ToVector<float>().value(), slow.param.ToVector<float>().value());
}

TEST(AdamWTest, BadInputsNameTheOp) {
  AdamWResult r = AdamWUpdate(Vec({1, 2}), Vec({1}), Vec({1, 2}), Vec({1, 2}), Vec({1, 1, 1, 1}), {});
  EXPECT_THAT(r.param.status().message(), ::testing::HasSubstr("adamw(f64(2)@cpu, f64(1)@cpu"));
  r = AdamWUpdate(Vec({1}), Vec({1}), Vec({1}), Vec({1}), Vec({1, 1}), {});
  EXPECT_THAT(r.param.status().message(), ::testing::HasSubstr("scalars must be (4)"));
}

}  // namespace
}  // namespace mimetic::ops
