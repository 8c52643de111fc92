#include "mimetic/experiments/stats.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MeanSeTest, SampleStandardError) {
  const Stat s = MeanSe({1, 2, 3, 4});
  EXPECT_EQ(s.n, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  // Sample variance 5/3, se = sqrt(5/3) / 2.
  EXPECT_NEAR(s.se, std::sqrt(5.0 / 3.0) / 2, 1e-15);

  const Stat one = MeanSe({0.7});
  EXPECT_EQ(one.n, 1);
  EXPECT_DOUBLE_EQ(one.mean, 0.7);
  EXPECT_EQ(one.se, 0);

  const Stat none = MeanSe({});
  EXPECT_EQ(none.n, 0);
  EXPECT_TRUE(std::isnan(none.mean) && std::isnan(none.se));

  // Seeds that did not run (NaN) or diverged (inf) are left out.
  const Stat partial = MeanSe({kNaN, 1, kInf, 3});
  EXPECT_EQ(partial.n, 2);
  EXPECT_DOUBLE_EQ(partial.mean, 2);
  EXPECT_DOUBLE_EQ(partial.se, 1);
}

TEST(CompareTest, ClearlyGreaterNeedsMarginAndTwoStandardErrors) {
  const Stat high{0.9, 0.02, 3}, low{0.3, 0.05, 3};
  EXPECT_TRUE(ClearlyGreater(high, low, 0.2));
  EXPECT_FALSE(ClearlyGreater(high, low, 0.7));  // the margin is not met
  EXPECT_FALSE(ClearlyGreater(low, high, 0));    // reversed
  // A big gap drowned in noise: 0.3 < 2 * sqrt(0.2^2 + 0.1^2) = 0.447.
  EXPECT_FALSE(ClearlyGreater({0.8, 0.2, 3}, {0.5, 0.1, 3}, 0.1));
  EXPECT_FALSE(ClearlyGreater(high, MeanSe({}), 0));

  EXPECT_TRUE(NotClearlyDifferent({0.8, 0.2, 3}, {0.5, 0.1, 3}));
  EXPECT_TRUE(NotClearlyDifferent({0.50, 0, 1}, {0.52, 0, 1}, 0.05));
  EXPECT_FALSE(NotClearlyDifferent(high, low, 0.05));
  EXPECT_FALSE(NotClearlyDifferent(high, MeanSe({}), 1));
}

TEST(FormatStatTest, Forms) {
  EXPECT_EQ(FormatStat({0.9133, 0.0204, 3}), "0.913 ± 0.020 (n=3)");
  EXPECT_EQ(FormatStat({0.5, 0, 1}, 2), "0.50 (n=1)");
  EXPECT_EQ(FormatStat(MeanSe({})), "n/a (n=0)");
}

}  // namespace
}  // namespace mimetic::experiments
