#include "mimetic/core/random.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;

constexpr int64_t kDraws = 1'000'000;

struct Moments {
  double mean = 0;
  double variance = 0;
};

template <typename T>
Moments MomentsOf(const std::vector<T>& xs) {
  Moments m;
  for (T x : xs) m.mean += x;
  m.mean /= xs.size();
  for (T x : xs) m.variance += (x - m.mean) * (x - m.mean);
  m.variance /= xs.size();
  return m;
}

// Pearson's chi-square statistic of `counts` against equal expected counts.
double ChiSquareUniform(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const double expected = static_cast<double>(total) / counts.size();
  double chi2 = 0;
  for (int64_t c : counts) chi2 += (c - expected) * (c - expected) / expected;
  return chi2;
}

// A generous bound for a chi-square statistic with `df` degrees of freedom: mean + 6 standard
// deviations (the keys are fixed, so the tests are deterministic; the bound only has to be
// meaningful, not tight).
double ChiSquareBound(int df) { return df + 6 * std::sqrt(2.0 * df); }

uint32_t FloatBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, sizeof(bits));
  return bits;
}

// ---- Agreement with JAX ---------------------------------------------------------------------------

// JAX's tests/random_test.py, _RANDOM_VALUES_CASES for threefry2x32 (values printed to 6 decimals):
// the key is PRNGKey(zlib.adler32(name + "threefry2x32")).
TEST(JaxValuesTest, Uniform) {
  const auto values = UniformVector(Key::FromSeed(1338574713), 5);  // adler32("uniformthreefry2x32")
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values,
              ElementsAre(FloatNear(0.298671f, 1e-6), FloatNear(0.073213f, 1e-6), FloatNear(0.873356f, 1e-6),
                          FloatNear(0.260549f, 1e-6), FloatNear(0.412797f, 1e-6)));
}

TEST(JaxValuesTest, Normal) {
  const auto values = NormalVector(Key::FromSeed(1193674498), 5);  // adler32("normalthreefry2x32")
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values, ElementsAre(FloatNear(-1.173234f, 2e-6), FloatNear(-1.511662f, 2e-6),
                                   FloatNear(0.070593f, 2e-6), FloatNear(-0.099764f, 2e-6),
                                   FloatNear(1.052845f, 2e-6)));
}

TEST(JaxValuesTest, TruncatedNormal) {
  // adler32("truncated_normalthreefry2x32"); JAX's case uses lower=0, upper=2.
  const auto values = TruncatedNormalVector(Key::FromSeed(2846034731), 5, 0.0f, 2.0f);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values,
              ElementsAre(FloatNear(0.582807f, 2e-6), FloatNear(1.709771f, 2e-6), FloatNear(0.159513f, 2e-6),
                          FloatNear(0.861376f, 2e-6), FloatNear(0.36148f, 2e-6)));
}

TEST(JaxValuesTest, RandInt) {
  const auto values = RandIntVector(Key::FromSeed(1319372649), 5, 0, 10);  // adler32("randintthreefry2x32")
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_THAT(*values, ElementsAre(0, 5, 7, 7, 5));
  // PrngTest.testPRNGValues: randint(PRNGKey(0), (3, 3), 0, 8, int32).
  const auto tensor = RandInt(Key::FromSeed(0), {3, 3}, 0, 8);
  ASSERT_TRUE(tensor.ok()) << tensor.status();
  EXPECT_EQ(tensor->shape(), (Shape{3, 3}));
  EXPECT_EQ(tensor->dtype(), DType::kI32);
  EXPECT_THAT(tensor->ToVector<int32_t>().value(), ElementsAre(2, 1, 3, 6, 1, 5, 6, 3, 4));
}

// Uniform is JAX's bit construction exactly: (bits >> 9 | bits of 1.0f) - 1.
TEST(JaxValuesTest, UniformIsTheMantissaConstruction) {
  const Key key = Key::FromSeed(3);
  const std::vector<uint32_t> bits = RandomBits(key, 100);
  const std::vector<float> values = UniformVector(key, 100).value();
  for (int i = 0; i < 100; ++i) {
    const uint32_t one_to_two = (bits[i] >> 9) | 0x3f800000u;
    float f;
    std::memcpy(&f, &one_to_two, sizeof(f));
    EXPECT_EQ(FloatBits(values[i]), FloatBits(f - 1.0f)) << i;
  }
}

// ---- Machine-independent elementary functions ------------------------------------------------------

TEST(InternalMathTest, LogExpErfAgreeWithLibm) {
  for (double x : {1e-300, 1e-20, 2.9e-11, 1e-3, 0.1, 0.5, 0.70710678, 0.9999, 1.0, 1.5, 2.0, 10.0, 1e10}) {
    EXPECT_NEAR(internal::Log(x), std::log(x), 4e-16 * std::max(1.0, std::fabs(std::log(x)))) << x;
  }
  EXPECT_EQ(internal::Log(1.0), 0.0);
  EXPECT_EQ(internal::Log(0.0), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(internal::Log(-1.0)));
  for (double x : {-745.0, -700.0, -36.0, -4.5, -1.0, -0.25, 0.0, 0.3, 1.0, 20.0, 700.0}) {
    EXPECT_NEAR(internal::Exp(x) / std::exp(x), 1.0, 1e-14) << x;
  }
  EXPECT_EQ(internal::Exp(-800.0), 0.0);
  for (double x = -7.0; x <= 7.0; x += 0.0625) {
    EXPECT_NEAR(internal::Erf(x), std::erf(x), 2e-15) << x;
  }
}

TEST(InternalMathTest, SqrtTwoErfInvInvertsErf) {
  // Central branch (|u| <= 0.85) and near it.
  for (double x = -1.4; x <= 1.4; x += 0.01) {
    const double u = std::erf(x / std::sqrt(2.0));
    EXPECT_NEAR(internal::SqrtTwoErfInv(u), x, 1e-13) << x;
  }
  EXPECT_NEAR(internal::SqrtTwoErfInv(0.95), 1.959963984540054, 1e-14);  // Phi^-1(0.975).
  EXPECT_EQ(internal::SqrtTwoErfInv(0.0), 0.0);
  // Tails, where AS241 uses r = sqrt(-log(min(p, 1 - p))): u = -1 + 2^-k is exact and
  // p = (1 + u) / 2 = 2^-(k+1); k = 2, 20 take the r <= 5 branch, k = 40, 52 the r > 5 branch.
  for (int k : {2, 5, 20, 40, 52}) {
    const double p = std::ldexp(1.0, -(k + 1));
    const double x = internal::SqrtTwoErfInv(-1.0 + std::ldexp(1.0, -k));
    EXPECT_NEAR(0.5 * std::erfc(-x / std::sqrt(2.0)) / p, 1.0, 1e-13) << k;
    EXPECT_EQ(internal::SqrtTwoErfInv(1.0 - std::ldexp(1.0, -k)), -x) << k;
  }
  EXPECT_EQ(internal::SqrtTwoErfInv(1.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(internal::SqrtTwoErfInv(-1.0), -std::numeric_limits<double>::infinity());
}

// ---- Determinism ----------------------------------------------------------------------------------

TEST(DeterminismTest, SameKeySameBitsDifferentKeysDifferentValues) {
  const Key key = Key::FromSeed(11);
  const Key other = FoldIn(key, 1);
  EXPECT_EQ(NormalVector(key, 1000).value(), NormalVector(key, 1000).value());
  EXPECT_EQ(UniformVectorF64(key, 1000).value(), UniformVectorF64(key, 1000).value());
  EXPECT_EQ(RandIntVector(key, 1000, 0, 7).value(), RandIntVector(key, 1000, 0, 7).value());
  EXPECT_EQ(PermutationVector(key, 1000).value(), PermutationVector(key, 1000).value());
  EXPECT_NE(NormalVector(key, 1000).value(), NormalVector(other, 1000).value());
  EXPECT_NE(UniformVectorF64(key, 1000).value(), UniformVectorF64(other, 1000).value());
  EXPECT_NE(RandIntVector(key, 1000, 0, 7).value(), RandIntVector(other, 1000, 0, 7).value());
  EXPECT_NE(PermutationVector(key, 1000).value(), PermutationVector(other, 1000).value());
  // Tensor and vector versions give the same values.
  const Tensor t = Normal(key, {10, 100}).value();
  EXPECT_EQ(t.ToVector<float>().value(), NormalVector(key, 1000).value());
}

// Bit patterns of a few samples, computed by this implementation and reproduced by an independent
// Python computation (float32 rounding emulated; statistics.NormalDist.inv_cdf and math.erf from the
// platform's libm): they must not change with the compiler, its flags (e.g. contraction into fused
// multiply-adds) or the machine.
TEST(DeterminismTest, PinnedBitPatterns) {
  const Key key = Key::FromSeed(2024);
  // (Each vector is held in a variable: a range-for over `Temporary().value()` would dangle.)
  const std::vector<float> normal = NormalVector(key, 4).value();
  const std::vector<float> truncated = TruncatedNormalVector(key, 4).value();
  const std::vector<float> uniform = UniformVector(key, 4, -0.1f, 0.3f).value();
  std::vector<uint32_t> normal_bits, truncated_bits, uniform_bits;
  for (float x : normal) normal_bits.push_back(FloatBits(x));
  for (float x : truncated) truncated_bits.push_back(FloatBits(x));
  for (float x : uniform) uniform_bits.push_back(FloatBits(x));
  EXPECT_THAT(normal_bits, ElementsAre(3137604393u, 3206345365u, 1053323588u, 1062130785u));
  EXPECT_THAT(truncated_bits, ElementsAre(3137082671u, 3205819080u, 1052696656u, 1061374252u));
  EXPECT_THAT(uniform_bits, ElementsAre(1036788793u, 1006796848u, 1042597464u, 1046305950u));
}

// ---- Distributions over 10^6 draws (tolerances: 5 standard errors) ---------------------------------

TEST(DistributionTest, UniformF32) {
  const std::vector<float> xs = UniformVector(Key::FromSeed(1), kDraws).value();
  EXPECT_GE(*std::min_element(xs.begin(), xs.end()), 0.0f);
  EXPECT_LT(*std::max_element(xs.begin(), xs.end()), 1.0f);
  const Moments m = MomentsOf(xs);
  EXPECT_NEAR(m.mean, 0.5, 5 * std::sqrt(1.0 / 12 / kDraws));
  // Var of (x - 1/2)^2 for a uniform: 1/80 - 1/144.
  EXPECT_NEAR(m.variance, 1.0 / 12, 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / kDraws));
  // Ten equal bins.
  std::vector<int64_t> counts(10);
  for (float x : xs) ++counts[static_cast<int>(x * 10)];
  EXPECT_LT(ChiSquareUniform(counts), ChiSquareBound(9));
}

TEST(DistributionTest, UniformShiftedRangeAndF64) {
  const std::vector<float> xs = UniformVector(Key::FromSeed(2), kDraws, -3.0f, 5.0f).value();
  EXPECT_GE(*std::min_element(xs.begin(), xs.end()), -3.0f);
  EXPECT_LT(*std::max_element(xs.begin(), xs.end()), 5.0f);
  Moments m = MomentsOf(xs);
  EXPECT_NEAR(m.mean, 1.0, 5 * std::sqrt(64.0 / 12 / kDraws));
  EXPECT_NEAR(m.variance, 64.0 / 12, 5 * 64 * std::sqrt((1.0 / 80 - 1.0 / 144) / kDraws));

  const Tensor t = Uniform(Key::FromSeed(3), {1000, 1000}, 0.0, 1.0, DType::kF64).value();
  EXPECT_EQ(t.dtype(), DType::kF64);
  const std::vector<double> ys = t.ToVector<double>().value();
  EXPECT_GE(*std::min_element(ys.begin(), ys.end()), 0.0);
  EXPECT_LT(*std::max_element(ys.begin(), ys.end()), 1.0);
  m = MomentsOf(ys);
  EXPECT_NEAR(m.mean, 0.5, 5 * std::sqrt(1.0 / 12 / kDraws));
  EXPECT_NEAR(m.variance, 1.0 / 12, 5 * std::sqrt((1.0 / 80 - 1.0 / 144) / kDraws));
  // f64 uses all 52 mantissa bits: values that differ only below float precision occur.
  int fine = 0;
  for (double y : ys) fine += static_cast<double>(static_cast<float>(y)) != y;
  EXPECT_GT(fine, kDraws / 2);
}

// A range whose top rounds to hi in float arithmetic stays half-open.
TEST(DistributionTest, UniformNeverReturnsHi) {
  const std::vector<float> xs = UniformVector(Key::FromSeed(4), 200000, 1.0f, 1.0000002f).value();
  for (float x : xs) {
    ASSERT_GE(x, 1.0f);
    ASSERT_LT(x, 1.0000002f);
  }
}

template <typename T>
void ExpectStandardNormal(const std::vector<T>& xs) {
  const double n = xs.size();
  const Moments m = MomentsOf(xs);
  EXPECT_NEAR(m.mean, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(m.variance, 1.0, 5 * std::sqrt(2 / n));
  double fourth = 0;
  int64_t beyond_two = 0;
  for (T x : xs) {
    fourth += static_cast<double>(x) * x * x * x;
    beyond_two += std::fabs(x) > 2;
  }
  EXPECT_NEAR(fourth / n, 3.0, 5 * std::sqrt(96 / n));  // E x^4 = 3, Var x^4 = 105 - 9.
  const double p = std::erfc(2 / std::sqrt(2.0));       // P(|x| > 2) = 0.0455.
  EXPECT_NEAR(beyond_two / n, p, 5 * std::sqrt(p * (1 - p) / n));
}

TEST(DistributionTest, NormalF32) {
  const std::vector<float> xs = NormalVector(Key::FromSeed(5), kDraws).value();
  for (float x : xs) ASSERT_TRUE(std::isfinite(x));
  ExpectStandardNormal(xs);
}

TEST(DistributionTest, NormalF64) {
  const Tensor t = Normal(Key::FromSeed(6), {kDraws}, DType::kF64).value();
  EXPECT_EQ(t.dtype(), DType::kF64);
  ExpectStandardNormal(t.ToVector<double>().value());
}

// Mean and variance of the standard normal truncated to (a, b).
Moments TruncatedMoments(double a, double b) {
  const auto pdf = [](double x) { return std::exp(-x * x / 2) / std::sqrt(2 * M_PI); };
  const auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  const double z = cdf(b) - cdf(a);
  const double mean = (pdf(a) - pdf(b)) / z;
  const double variance = 1 + (a * pdf(a) - b * pdf(b)) / z - mean * mean;
  return {mean, variance};
}

TEST(DistributionTest, TruncatedNormal) {
  for (const auto& [lo, hi] :
       std::vector<std::pair<float, float>>{{-2.0f, 2.0f}, {0.0f, 2.0f}, {-1.0f, 0.5f}}) {
    const Tensor t = TruncatedNormal(Key::FromSeed(7), {kDraws}, lo, hi).value();
    const std::vector<float> xs = t.ToVector<float>().value();
    for (float x : xs) {
      ASSERT_GT(x, lo);
      ASSERT_LT(x, hi);
    }
    const Moments want = TruncatedMoments(lo, hi);
    const Moments got = MomentsOf(xs);
    const double sd = std::sqrt(want.variance);
    EXPECT_NEAR(got.mean, want.mean, 5 * sd / std::sqrt(kDraws)) << lo << " " << hi;
    // Var of (x - mean)^2 is below E (x - mean)^4 <= (hi - lo)^2 variance.
    EXPECT_NEAR(got.variance, want.variance, 5 * std::sqrt((hi - lo) * (hi - lo) * want.variance / kDraws))
        << lo << " " << hi;
  }
}

TEST(DistributionTest, TruncatedNormalF64AndFarTail) {
  const std::vector<double> xs =
      TruncatedNormal(Key::FromSeed(8), {100000}, -2.0, 2.0, DType::kF64).value().ToVector<double>().value();
  for (double x : xs) ASSERT_TRUE(x > -2.0 && x < 2.0);
  // Far in one tail f32 cannot separate erf(lo / sqrt 2) from erf(hi / sqrt 2): all samples land on
  // the clipped bounds, but stay inside them.
  const std::vector<float> tail = TruncatedNormalVector(Key::FromSeed(9), 1000, 8.0f, 9.0f).value();
  for (float x : tail) ASSERT_TRUE(x > 8.0f && x < 9.0f) << x;
}

TEST(DistributionTest, RandIntChiSquare) {
  const int32_t lo = -5, hi = 12;
  const std::vector<int32_t> xs = RandIntVector(Key::FromSeed(10), kDraws, lo, hi).value();
  std::vector<int64_t> counts(hi - lo);
  for (int32_t x : xs) {
    ASSERT_GE(x, lo);
    ASSERT_LT(x, hi);
    ++counts[x - lo];
  }
  EXPECT_LT(ChiSquareUniform(counts), ChiSquareBound(hi - lo - 1));
}

TEST(DistributionTest, RandIntFullRange) {
  const int32_t lo = std::numeric_limits<int32_t>::min(), hi = std::numeric_limits<int32_t>::max();
  const std::vector<int32_t> xs = RandIntVector(Key::FromSeed(11), kDraws, lo, hi).value();
  std::vector<int64_t> counts(64);
  for (int32_t x : xs) {
    ASSERT_LT(x, hi);
    ++counts[(static_cast<int64_t>(x) - lo) * 64 / (int64_t{hi} - lo)];
  }
  EXPECT_LT(ChiSquareUniform(counts), ChiSquareBound(63));
  // One-value range.
  EXPECT_THAT(RandIntVector(Key::FromSeed(12), 5, 7, 8).value(), ElementsAre(7, 7, 7, 7, 7));
}

bool IsPermutation(std::vector<int32_t> xs) {
  std::sort(xs.begin(), xs.end());
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i] != static_cast<int32_t>(i)) return false;
  }
  return true;
}

TEST(PermutationTest, IsAPermutation) {
  for (int64_t n : {0, 1, 2, 3, 10, 1625, 1626, 100000}) {  // 1626 is the first n with two sort rounds.
    const Tensor t = Permutation(Key::FromSeed(13), n).value();
    EXPECT_EQ(t.shape(), (Shape{n}));
    EXPECT_EQ(t.dtype(), DType::kI32);
    const std::vector<int32_t> p = t.ToVector<int32_t>().value();
    EXPECT_TRUE(IsPermutation(p)) << n;
    if (n >= 10) EXPECT_FALSE(std::is_sorted(p.begin(), p.end())) << n;
  }
}

TEST(PermutationTest, AllPermutationsOfFourEquallyLikely) {
  const Key root = Key::FromSeed(14);
  std::map<std::vector<int32_t>, int64_t> seen;
  const int trials = 48000;
  std::vector<int64_t> first(4);
  for (int i = 0; i < trials; ++i) {
    const std::vector<int32_t> p = PermutationVector(FoldIn(root, i), 4).value();
    ++seen[p];
    ++first[p[0]];
  }
  ASSERT_EQ(seen.size(), 24u);
  std::vector<int64_t> counts;
  for (const auto& [p, c] : seen) counts.push_back(c);
  EXPECT_LT(ChiSquareUniform(counts), ChiSquareBound(23));
  EXPECT_LT(ChiSquareUniform(first), ChiSquareBound(3));
}

TEST(PermutationTest, FirstPositionUniformForLargerN) {
  const Key root = Key::FromSeed(15);
  const int n = 20;
  std::vector<int64_t> first(n), last(n);
  for (int i = 0; i < 40000; ++i) {
    const std::vector<int32_t> p = PermutationVector(FoldIn(root, i), n).value();
    ++first[p[0]];
    ++last[p[n - 1]];
  }
  EXPECT_LT(ChiSquareUniform(first), ChiSquareBound(n - 1));
  EXPECT_LT(ChiSquareUniform(last), ChiSquareBound(n - 1));
}

TEST(ChoiceTest, DistinctAndUniform) {
  const Key root = Key::FromSeed(16);
  const int n = 10, k = 3;
  std::vector<int64_t> counts(n), first(n);
  for (int i = 0; i < 30000; ++i) {
    const std::vector<int32_t> c = ChoiceWithoutReplacementVector(FoldIn(root, i), n, k).value();
    ASSERT_EQ(c.size(), static_cast<size_t>(k));
    const absl::flat_hash_set<int32_t> distinct(c.begin(), c.end());
    ASSERT_EQ(distinct.size(), static_cast<size_t>(k));
    for (int32_t x : c) {
      ASSERT_TRUE(x >= 0 && x < n);
      ++counts[x];
    }
    ++first[c[0]];
  }
  EXPECT_LT(ChiSquareUniform(counts), ChiSquareBound(n - 1));
  EXPECT_LT(ChiSquareUniform(first), ChiSquareBound(n - 1));

  const Tensor t = ChoiceWithoutReplacement(Key::FromSeed(17), 1000, 1000).value();
  EXPECT_EQ(t.shape(), (Shape{1000}));
  EXPECT_TRUE(IsPermutation(t.ToVector<int32_t>().value()));
  EXPECT_EQ(ChoiceWithoutReplacement(Key::FromSeed(17), 5, 0).value().shape(), (Shape{0}));
  // A prefix of the permutation with the same key, as jax.random.choice(replace=False).
  const std::vector<int32_t> perm = PermutationVector(Key::FromSeed(18), 50).value();
  EXPECT_EQ(ChoiceWithoutReplacementVector(Key::FromSeed(18), 50, 7).value(),
            std::vector<int32_t>(perm.begin(), perm.begin() + 7));
}

// ---- Shapes and errors ----------------------------------------------------------------------------

TEST(ShapeTest, ScalarEmptyAndMatrixShapes) {
  const Key key = Key::FromSeed(19);
  const Tensor scalar = Uniform(key, {}).value();
  EXPECT_EQ(scalar.shape(), Shape{});
  EXPECT_EQ(scalar.numel(), 1);
  const Tensor empty = Normal(key, {3, 0}).value();
  EXPECT_EQ(empty.numel(), 0);
  const Tensor matrix = TruncatedNormal(key, {4, 5}).value();
  EXPECT_EQ(matrix.shape(), (Shape{4, 5}));
  EXPECT_EQ(matrix.dtype(), DType::kF32);
  EXPECT_EQ(matrix.device(), Device::kCpu);
}

void ExpectInvalid(const absl::Status& status, const std::vector<std::string>& substrings) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& s : substrings) EXPECT_THAT(status.message(), HasSubstr(s));
}

TEST(ErrorTest, BadArgumentsAreInvalidArgument) {
  const Key key = Key::FromSeed(20);
  ExpectInvalid(Uniform(key, {2}, 1.0, 1.0).status(), {"Uniform", "lo = 1", "hi = 1", "lo < hi"});
  ExpectInvalid(Uniform(key, {2}, 0.0, std::numeric_limits<double>::infinity()).status(),
                {"Uniform", "finite"});
  ExpectInvalid(Uniform(key, {2, -1}).status(), {"Uniform", "(2, -1)", "negative dimension", ">= 0"});
  ExpectInvalid(Uniform(key, {2}, 0.0, 1.0, DType::kI32).status(), {"Uniform", "dtype = i32", "f32 or f64"});
  ExpectInvalid(Normal(key, {-3}).status(), {"Normal", "negative dimension"});
  ExpectInvalid(Normal(key, {3}, DType::kI32).status(), {"Normal", "dtype"});
  ExpectInvalid(TruncatedNormal(key, {3}, 2.0, -2.0).status(),
                {"TruncatedNormal", "lo = 2", "hi = -2", "lo < hi"});
  ExpectInvalid(RandInt(key, {3}, 5, 5).status(), {"RandInt", "lo = 5", "hi = 5", "[lo, hi)"});
  ExpectInvalid(RandIntVector(key, -1, 0, 5).status(), {"RandInt", "n = -1", "n >= 0"});
  ExpectInvalid(Permutation(key, -2).status(), {"Permutation", "n = -2", "0 <= n"});
  ExpectInvalid(ChoiceWithoutReplacement(key, 3, 5).status(),
                {"ChoiceWithoutReplacement", "k = 5", "n_population = 3", "k <= n_population"});
  ExpectInvalid(ChoiceWithoutReplacement(key, -1, 0).status(),
                {"ChoiceWithoutReplacement", "n_population = -1"});
  ExpectInvalid(UniformVector(key, -5).status(), {"Uniform", "n = -5"});
}

}  // namespace
}  // namespace mimetic::core
