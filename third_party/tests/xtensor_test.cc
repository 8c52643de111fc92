// xtensor 0.24 + xsimd 8.1 compile under the project's flags (-O3 -march=native, C++17) and lazy,
// broadcasting, vectorised expressions give the right numbers.
#include "xtensor/xtensor.hpp"

#include <cmath>

#include "gtest/gtest.h"
#include "xsimd/xsimd.hpp"
#include "xtensor/xarray.hpp"
#include "xtensor/xmath.hpp"
#include "xtensor/xview.hpp"

#ifndef XTENSOR_USE_XSIMD
#error "@system_libs//:xtensor should define XTENSOR_USE_XSIMD"
#endif

namespace mimetic::third_party_tests {
namespace {

TEST(XtensorTest, ElementwiseExpressionIsCorrect) {
  constexpr int kN = 37;  // not a multiple of any SIMD width, so the scalar tail runs too
  xt::xtensor<float, 1> x = xt::arange<float>(kN) * 0.1f;
  xt::xtensor<float, 1> y = xt::ones<float>({kN});
  xt::xtensor<float, 1> z = 2.0f * x + xt::exp(-x) * y;  // evaluated once, on assignment
  for (int i = 0; i < kN; ++i) {
    const float xi = 0.1f * static_cast<float>(i);
    EXPECT_NEAR(z(i), 2.0f * xi + std::exp(-xi), 1e-5f) << "at " << i;
  }
  EXPECT_NEAR(xt::sum(x)(), 0.1f * kN * (kN - 1) / 2, 1e-3f);
}

TEST(XtensorTest, BroadcastingAndViews) {
  // (B, D) + (D,) broadcasts over rows.
  xt::xtensor<float, 2> a = xt::reshape_view(xt::arange<float>(12), {3, 4});
  xt::xtensor<float, 1> bias = {10.0f, 20.0f, 30.0f, 40.0f};
  xt::xtensor<float, 2> out = a + bias;
  EXPECT_EQ(out.shape()[0], 3u);
  EXPECT_EQ(out.shape()[1], 4u);
  EXPECT_FLOAT_EQ(out(2, 3), 11.0f + 40.0f);
  auto row = xt::view(out, 1, xt::all());
  EXPECT_FLOAT_EQ(xt::sum(row)(), (4 + 5 + 6 + 7) + 100.0f);
}

TEST(XtensorTest, XsimdBatchWorks) {
  using Batch = xsimd::batch<float>;
  static_assert(Batch::size >= 4, "expected at least SSE-width float batches");
  const Batch a(1.5f), b(2.0f);
  alignas(64) float out[Batch::size];
  (a * b + a).store_aligned(out);
  for (size_t i = 0; i < Batch::size; ++i) EXPECT_FLOAT_EQ(out[i], 4.5f);
}

}  // namespace
}  // namespace mimetic::third_party_tests
