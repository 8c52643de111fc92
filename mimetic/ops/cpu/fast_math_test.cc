#include "mimetic/ops/cpu/fast_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace mimetic::ops::fast_math {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kMinNormal = std::numeric_limits<float>::min();

// The float `steps` representable values above x (toward +inf), through the ordered integer view of
// the bit patterns (-0 and +0 are one point).
float Advance(float x, int32_t steps) {
  const int32_t b = __builtin_bit_cast(int32_t, x);
  const int64_t ord = (b < 0 ? -int64_t{b & 0x7fffffff} : int64_t{b}) + steps;
  const int32_t out =
      ord < 0 ? static_cast<int32_t>(0x80000000u | static_cast<uint32_t>(-ord)) : static_cast<int32_t>(ord);
  return __builtin_bit_cast(float, out);
}

struct Errors {
  double max_rel = 0, max_ulp = 0, max_abs = 0;
  float worst = 0;
};

// The errors of f against the double-precision ref at every `stride`-th float in [lo, hi] (and hi).
// ulp: in units of the last place of the rounded exact result.
template <typename F, typename R>
Errors Sweep(F f, R ref, float lo, float hi, int32_t stride) {
  Errors e;
  for (float x = lo;; x = Advance(x, stride)) {
    if (x > hi) x = hi;
    const double want = ref(static_cast<double>(x));
    const float wf = static_cast<float>(want);
    const double ulp = static_cast<double>(std::nextafter(std::abs(wf), kInf)) - std::abs(wf);
    const double err = std::abs(static_cast<double>(f(x)) - want);
    if (err / ulp > e.max_ulp) e.max_ulp = err / ulp;
    if (err > e.max_abs) e.max_abs = err;
    if (want != 0.0 && err / std::abs(want) > e.max_rel) {
      e.max_rel = err / std::abs(want);
      e.worst = x;
    }
    if (x == hi) break;
  }
  return e;
}

double ExactExp(double x) { return std::exp(x); }
double ExactSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double ExactSoftplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }

TEST(FastMathTest, ExpIsFaithfulOverTheNormalRange) {
  // exp(x) is a normal float for x in [-87.33, 88.72].
  const Errors e = Sweep(Exp, ExactExp, -87.33f, 88.72f, 61);
  EXPECT_LT(e.max_ulp, 1.0) << "at x = " << e.worst;
  EXPECT_LT(e.max_rel, 8e-8) << "at x = " << e.worst;
  // Near 0 (the softmax's largest terms) and the exact points.
  EXPECT_LT(Sweep(Exp, ExactExp, -1.0f, 1.0f, 7).max_ulp, 1.0);
  EXPECT_EQ(Exp(0.0f), 1.0f);
  EXPECT_EQ(Exp(-0.0f), 1.0f);
}

TEST(FastMathTest, ExpUnderflowsToDenormalsThenZero) {
  // Denormal results are rounded once: within one denormal step (2^-149) of the exact value.
  const Errors e = Sweep(Exp, ExactExp, -103.9f, -87.34f, 13);
  EXPECT_LE(e.max_abs, std::numeric_limits<float>::denorm_min());
  EXPECT_GT(Exp(-100.0f), 0.0f);
  EXPECT_LT(Exp(-100.0f), kMinNormal);
  EXPECT_EQ(Exp(-104.0f), 0.0f);
  EXPECT_EQ(Exp(-1000.0f), 0.0f);
  EXPECT_EQ(Exp(-kInf), 0.0f);
  EXPECT_EQ(Exp(-std::numeric_limits<float>::max()), 0.0f);
}

TEST(FastMathTest, ExpOverflowsToInfinity) {
  EXPECT_LT(Exp(88.72f), kInf);
  EXPECT_NEAR(Exp(88.72f) / std::exp(double{88.72f}), 1.0, 1e-7);
  EXPECT_EQ(Exp(88.73f), kInf);
  EXPECT_EQ(Exp(89.0f), kInf);
  EXPECT_EQ(Exp(1000.0f), kInf);
  EXPECT_EQ(Exp(kInf), kInf);
  EXPECT_EQ(Exp(std::numeric_limits<float>::max()), kInf);
}

TEST(FastMathTest, ExpPropagatesNaN) {
  EXPECT_TRUE(std::isnan(Exp(kNaN)));
  EXPECT_TRUE(std::isnan(Exp(-kNaN)));
}

TEST(FastMathTest, Exp2IsAccurateInRangeAndSaturatesOutside) {
  const Errors e = Sweep(
      Exp2, [](double u) { return std::exp2(u); }, -126.0f, 127.0f, 61);
  EXPECT_LT(e.max_rel, 1e-7) << "at u = " << e.worst;
  EXPECT_EQ(Exp2(0.0f), 1.0f);
  EXPECT_EQ(Exp2(10.0f), 1024.0f);
  EXPECT_EQ(Exp2(-3.0f), 0.125f);
  // Saturation: 2^-126.5 (8.3e-39) below (never 0), 2^127.5 (2.4e38) above (never inf).
  for (float u : {-126.6f, -150.0f, -1000.0f, -kInf}) {
    EXPECT_NEAR(Exp2(u), std::exp2(-126.5), 1e-45) << u;
  }
  for (float u : {128.0f, 1000.0f, kInf}) {
    EXPECT_LT(Exp2(u), kInf) << u;
    EXPECT_NEAR(Exp2(u) / std::exp2(127.5), 1.0, 1e-7) << u;
  }
  EXPECT_TRUE(std::isnan(Exp2(kNaN)));
}

#if defined(__AVX512F__)
// Exp2Product16's formula written out in scalar code with explicit fmas: the bits the scan's portable
// loop gets from Exp2(a * b) once GCC contracts the product into the rounding and the reduction.
float Exp2ProductScalar(float a, float b) {
  const float magic = 12582912.0f;
  const float k = std::fma(a, b, magic) - magic;
  float f = std::fma(a, b, -k);
  f = std::min(std::max(f, -0.5f), 0.5f);
  float p = kExp2Poly[0];
  for (int i = 1; i < 7; ++i) p = std::fma(p, f, kExp2Poly[i]);
  return std::ldexp(p, static_cast<int>(k));
}

// 16 lanes of 2^(a·b), a and b given per lane.
void Exp2Product16Of(const float* a, const float* b, float* out) {
  _mm512_storeu_ps(out, Exp2Product16(_mm512_loadu_ps(a), _mm512_loadu_ps(b)));
}

TEST(FastMathTest, Exp16IsExpBitForBit) {
  // Every 997th float bit pattern (both signs: normal, denormal, 0, inf and NaN arguments), then
  // specials: the clamps' edges, rounding boundaries of k, and 0 / inf / NaN.
  std::vector<float> xs;
  for (uint64_t bits = 0; bits <= 0xFFFFFFFFull; bits += 997) {
    xs.push_back(__builtin_bit_cast(float, static_cast<uint32_t>(bits)));
  }
  uint32_t state = 777;  // and 2^20 arguments uniform on [-105, 90], the values a kernel meets
  for (int i = 0; i < (1 << 20); ++i) {
    state = state * 1664525u + 1013904223u;
    xs.push_back(-105.0f + 195.0f * static_cast<float>(state >> 8) / 16777216.0f);
  }
  for (float x : {-104.0f, -103.99999f, -104.00001f, 89.0f, 88.99999f, 89.00001f, 88.72284f, 88.72283f,
                  -87.33654f, 0.0f, -0.0f, 0.34657359f, -0.34657359f, kInf, -kInf, kNaN, -kNaN}) {
    xs.push_back(x);
  }
  while (xs.size() % 16 != 0) xs.push_back(1.0f);
  int64_t mismatches = 0;
  for (size_t i = 0; i < xs.size(); i += 16) {
    float out[16];
    _mm512_storeu_ps(out, Exp16(_mm512_loadu_ps(&xs[i])));
    for (int j = 0; j < 16; ++j) {
      const float want = Exp(xs[i + j]);
      const bool same = std::isnan(want)
                            ? std::isnan(out[j])
                            : __builtin_bit_cast(uint32_t, want) == __builtin_bit_cast(uint32_t, out[j]);
      if (!same && ++mismatches <= 5) {
        ADD_FAILURE() << "Exp16(" << xs[i + j] << ") = " << out[j] << ", Exp gives " << want;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "of " << xs.size() << " arguments";
}

TEST(FastMathTest, Exp2Product16IsTheScalarFormulaInRangeAndExactOutside) {
  // Products over [-126, 127] from a = dt-like steps and b = scaled-A-like values (the scan's case)
  // and from arbitrary pairs: bit for bit the written-out formula, and within Exp2's accuracy.
  uint32_t state = 12345;
  auto uniform = [&state](float lo, float hi) {
    state = state * 1664525u + 1013904223u;
    return lo + (hi - lo) * static_cast<float>(state >> 8) * (1.0f / 16777216.0f);
  };
  int checked = 0;
  for (int i = 0; i < 200000; i += 16) {
    float a[16], b[16], out[16];
    for (int j = 0; j < 16; ++j) {
      a[j] = (i / 16) % 2 ? uniform(0.0f, 2.0f) : uniform(-20.0f, 20.0f);
      b[j] = (i / 16) % 2 ? uniform(-60.0f, 0.0f) : uniform(-6.3f, 6.3f);
    }
    Exp2Product16Of(a, b, out);
    for (int j = 0; j < 16; ++j) {
      const double exact = static_cast<double>(a[j]) * b[j];
      if (exact < -126.0 || exact > 127.0) continue;
      const float want = Exp2ProductScalar(a[j], b[j]);
      ASSERT_EQ(__builtin_bit_cast(uint32_t, out[j]), __builtin_bit_cast(uint32_t, want))
          << a[j] << " * " << b[j];
      ASSERT_NEAR(out[j] / std::exp2(exact), 1.0, 1.2e-7) << a[j] << " * " << b[j];
      ++checked;
    }
  }
  EXPECT_GT(checked, 150000);
  // Below 2^-126: the rounded denormal (within one denormal step), 0 below 2^-150; inf above 2^128;
  // infinities and NaN.
  const float a[16] = {1, 1, 1, 1, 1, 1, 1, 1, kInf, kInf, 1, 1e30f, kNaN, 1, 2, 1};
  const float b[16] = {-127, -130.25f, -140.5f, -149,   -151, -1000, 128.5f, 1000,
                       -1,   1,        kNaN,    -1e30f, 1,    0,     3,      -126.75f};
  float out[16];
  Exp2Product16Of(a, b, out);
  for (int j : {0, 1, 2, 3, 15}) {
    const double want = std::exp2(static_cast<double>(a[j]) * b[j]);
    EXPECT_LE(std::abs(out[j] - want), 1.5e-45 + 1e-7 * want) << j;
    EXPECT_GT(out[j], 0.0f) << j;
  }
  EXPECT_EQ(out[4], 0.0f);
  EXPECT_EQ(out[5], 0.0f);
  EXPECT_EQ(out[6], kInf);
  EXPECT_EQ(out[7], kInf);
  EXPECT_EQ(out[8], 0.0f);
  EXPECT_EQ(out[9], kInf);
  EXPECT_TRUE(std::isnan(out[10]));
  EXPECT_EQ(out[11], 0.0f);
  EXPECT_TRUE(std::isnan(out[12]));
  EXPECT_EQ(out[13], 1.0f);
  EXPECT_EQ(out[14], 64.0f);
}
#else
TEST(FastMathTest, Exp16IsExpBitForBit) { GTEST_SKIP() << "Exp16 exists only on AVX-512 machines"; }

TEST(FastMathTest, Exp2Product16IsTheScalarFormulaInRangeAndExactOutside) {
  GTEST_SKIP() << "Exp2Product16 exists only on AVX-512 machines";
}
#endif

TEST(FastMathTest, Log1pUnitIsAccurateOnTheUnitInterval) {
  const Errors e = Sweep(
      Log1pUnit, [](double u) { return std::log1p(u); }, 0.0f, 1.0f, 31);
  EXPECT_LT(e.max_rel, 1.3e-7) << "at u = " << e.worst;
  EXPECT_LT(e.max_abs, 1e-7);
  EXPECT_EQ(Log1pUnit(0.0f), 0.0f);
  // Tiny u, where 1 + u rounds to 1: log1p(u) = u.
  for (float u : {1e-8f, 1e-20f, kMinNormal, std::numeric_limits<float>::denorm_min()}) {
    EXPECT_EQ(Log1pUnit(u), u) << u;
  }
  EXPECT_NEAR(Log1pUnit(1.0f), std::log(2.0), 1e-7);
}

TEST(FastMathTest, SigmoidHasRelativeAccuracyEverywhere) {
  // Negative x down to where the result is a normal float (x > -87.3), positive x up to where it is 1.
  const Errors e = Sweep(Sigmoid, ExactSigmoid, -87.3f, 40.0f, 37);
  EXPECT_LT(e.max_rel, 2e-7) << "at x = " << e.worst;
  const Errors mid = Sweep(Sigmoid, ExactSigmoid, -16.0f, 16.0f, 7);
  EXPECT_LT(mid.max_rel, 2e-7) << "at x = " << mid.worst;
  EXPECT_EQ(Sigmoid(0.0f), 0.5f);
  EXPECT_EQ(Sigmoid(20.0f), 1.0f);
  EXPECT_EQ(Sigmoid(100.0f), 1.0f);
  EXPECT_EQ(Sigmoid(kInf), 1.0f);
  // Denormal results, then 0.
  EXPECT_LE(Sweep(Sigmoid, ExactSigmoid, -103.9f, -87.34f, 101).max_abs,
            std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(Sigmoid(-104.0f), 0.0f);
  EXPECT_EQ(Sigmoid(-kInf), 0.0f);
  EXPECT_TRUE(std::isnan(Sigmoid(kNaN)));
}

TEST(FastMathTest, SoftplusHasRelativeAccuracyEverywhere) {
  const Errors e = Sweep(Softplus, ExactSoftplus, -87.3f, 40.0f, 37);
  EXPECT_LT(e.max_rel, 2e-7) << "at x = " << e.worst;
  const Errors mid = Sweep(Softplus, ExactSoftplus, -16.0f, 16.0f, 7);
  EXPECT_LT(mid.max_rel, 2e-7) << "at x = " << mid.worst;
  EXPECT_NEAR(Softplus(0.0f), std::log(2.0), 1e-7);
}

TEST(FastMathTest, SoftplusThresholdIsTwenty) {
  // At and below 20 the formula; above, x itself. Both sides agree with the exact value (which
  // rounds to x there: log1p(e^-20) = 2e-9 < ulp(20) / 2).
  for (float x = 19.0f; x <= 21.0f; x = Advance(x, 1001)) {
    EXPECT_EQ(Softplus(x), static_cast<float>(ExactSoftplus(x))) << x;
  }
  EXPECT_EQ(Softplus(std::nextafter(20.0f, kInf)), std::nextafter(20.0f, kInf));
  EXPECT_EQ(Softplus(1e30f), 1e30f);
  EXPECT_EQ(Softplus(kInf), kInf);
}

TEST(FastMathTest, SoftplusUnderflowAndNaN) {
  EXPECT_LE(Sweep(Softplus, ExactSoftplus, -103.9f, -87.34f, 101).max_abs,
            std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(Softplus(-104.0f), 0.0f);
  EXPECT_EQ(Softplus(-1e30f), 0.0f);
  EXPECT_EQ(Softplus(-kInf), 0.0f);
  EXPECT_TRUE(std::isnan(Softplus(kNaN)));
}

}  // namespace
}  // namespace mimetic::ops::fast_math
