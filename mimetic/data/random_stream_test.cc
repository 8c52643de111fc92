#include "mimetic/data/random_stream.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "gtest/gtest.h"
#include "mimetic/core/key.h"

namespace mimetic::data {
namespace {

double ChiSquareUniform(const std::vector<int64_t>& counts) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  const double expected = static_cast<double>(total) / counts.size();
  double stat = 0;
  for (int64_t c : counts) stat += (c - expected) * (c - expected) / expected;
  return stat;
}

// Upper 1e-4 quantile of chi-square (Wilson-Hilferty).
double Critical(int64_t df) {
  const double a = 2.0 / (9.0 * df);
  const double c = 1.0 - a + 3.719 * std::sqrt(a);
  return df * c * c * c;
}

TEST(RandomStreamTest, PureFunctionOfTheKey) {
  RandomStream a(core::Key::FromSeed(7)), b(core::Key::FromSeed(7)), c(core::Key::FromSeed(8));
  int differ = 0;
  for (int i = 0; i < 100; ++i) {
    const uint32_t wa = a.NextWord();
    EXPECT_EQ(wa, b.NextWord());
    differ += wa != c.NextWord();
  }
  EXPECT_GT(differ, 95);
}

TEST(RandomStreamTest, WordsAreTheThreefryBlocksOfTheCounter) {
  const core::Key key = core::Key::FromSeed(3);
  RandomStream rng(key);
  for (uint32_t counter = 0; counter < 3; ++counter) {
    const std::array<uint32_t, 2> block = core::Threefry2x32(key.words(), {0u, counter});
    EXPECT_EQ(rng.NextWord(), block[0]);
    EXPECT_EQ(rng.NextWord(), block[1]);
  }
}

TEST(RandomStreamTest, UniformBelowIsUniform) {
  RandomStream rng(core::Key::FromSeed(1));
  for (int64_t n : {1, 2, 7, 26, 1000}) {
    std::vector<int64_t> counts(n, 0);
    for (int64_t i = 0; i < 200 * n; ++i) {
      const int64_t v = rng.UniformBelow(n);
      ASSERT_GE(v, 0);
      ASSERT_LT(v, n);
      ++counts[v];
    }
    if (n > 1) {
      EXPECT_LT(ChiSquareUniform(counts), Critical(n - 1)) << "n = " << n;
    }
  }
}

TEST(RandomStreamTest, WideRangesAndInclusiveBounds) {
  RandomStream rng(core::Key::FromSeed(2));
  const int64_t wide = (int64_t{3} << 40) + 5;
  bool high_half = false;
  for (int i = 0; i < 1000; ++i) {
    const int64_t v = rng.UniformBelow(wide);
    ASSERT_GE(v, 0);
    ASSERT_LT(v, wide);
    high_half |= v > wide / 2;
  }
  EXPECT_TRUE(high_half);
  std::set<int64_t> seen;
  for (int i = 0; i < 1000; ++i) seen.insert(rng.UniformInt(-2, 2));
  EXPECT_EQ(seen, (std::set<int64_t>{-2, -1, 0, 1, 2}));
}

// Every ordered pair of distinct values is equally likely, on both the sparse (rejection) and the
// dense (Fisher-Yates) path.
TEST(DistinctSamplerTest, OrderedPairsAreUniform) {
  for (int64_t n : {4, 9}) {  // 4: dense (4k > n); 9: sparse.
    RandomStream rng(core::Key::FromSeed(n));
    DistinctSampler sampler;
    std::vector<int64_t> counts(n * n, 0);
    int32_t out[2];
    for (int i = 0; i < 400 * n * (n - 1); ++i) {
      sampler.Sample(rng, n, 2, out);
      ASSERT_NE(out[0], out[1]);
      ++counts[out[0] * n + out[1]];
    }
    std::vector<int64_t> off_diagonal;
    for (int64_t a = 0; a < n; ++a) {
      EXPECT_EQ(counts[a * n + a], 0);
      for (int64_t b = 0; b < n; ++b) {
        if (a != b) off_diagonal.push_back(counts[a * n + b]);
      }
    }
    EXPECT_LT(ChiSquareUniform(off_diagonal), Critical(n * (n - 1) - 1)) << "n = " << n;
  }
}

TEST(DistinctSamplerTest, DistinctAndInRangeOnBothPaths) {
  RandomStream rng(core::Key::FromSeed(5));
  DistinctSampler sampler;
  for (const auto& [n, k] :
       std::vector<std::pair<int64_t, int64_t>>{{512, 50}, {512, 512}, {10, 0}, {1, 1}}) {
    for (int rep = 0; rep < 20; ++rep) {
      std::vector<int32_t> out(k);
      sampler.Sample(rng, n, k, out.data());
      std::set<int32_t> unique(out.begin(), out.end());
      EXPECT_EQ(static_cast<int64_t>(unique.size()), k);
      for (int32_t v : out) {
        EXPECT_GE(v, 0);
        EXPECT_LT(v, n);
      }
    }
  }
}

}  // namespace
}  // namespace mimetic::data
