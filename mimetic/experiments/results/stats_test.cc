#include "mimetic/experiments/results/stats.h"

#include <cmath>

#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

TEST(MeanSeTest, MeanAndStandardError) {
  const Stat s = MeanSe({0.9, 0.8, 1.0});
  EXPECT_NEAR(s.mean, 0.9, 1e-12);
  EXPECT_NEAR(s.se, 0.1 / std::sqrt(3.0), 1e-12);
  EXPECT_EQ(s.n, 3);
}

// Known values of t_{0.975, df} (any statistics table).
TEST(StudentT975Test, MatchesTheTable) {
  EXPECT_NEAR(StudentT975(1), 12.706, 5e-4);
  EXPECT_NEAR(StudentT975(2), 4.303, 5e-4);
  EXPECT_NEAR(StudentT975(4), 2.776, 5e-4);
  EXPECT_NEAR(StudentT975(9), 2.262, 5e-4);
  EXPECT_NEAR(StudentT975(30), 2.042, 5e-4);
}

TEST(StudentT975Test, TheExpansionAbove30MatchesTheTable) {
  EXPECT_NEAR(StudentT975(40), 2.021, 1e-3);
  EXPECT_NEAR(StudentT975(60), 2.000, 1e-3);
  EXPECT_NEAR(StudentT975(120), 1.980, 1e-3);
  EXPECT_NEAR(StudentT975(1e6), 1.960, 1e-3);
}

TEST(StudentT975Test, AFractionalDfRoundsDownAndNoneIsInfinite) {
  EXPECT_DOUBLE_EQ(StudentT975(2.9), StudentT975(2));
  EXPECT_TRUE(std::isinf(StudentT975(0.5)));
  EXPECT_TRUE(std::isinf(StudentT975(0)));
}

TEST(HalfWidth95Test, ThreeSeedsUseTwoDegreesOfFreedom) {
  EXPECT_NEAR(HalfWidth95(Stat{0.5, 0.1, 3}), 0.4303, 1e-4);
  EXPECT_NEAR(HalfWidth95(Stat{0.5, 0.1, 5}), 0.2776, 1e-4);
  EXPECT_TRUE(std::isinf(HalfWidth95(Stat{0.5, 0, 1})));
}

TEST(WelchDfTest, BetweenTheSmallerSampleAndThePooledDf) {
  // Equal standard errors and sizes: the pooled 2n - 2.
  EXPECT_NEAR(WelchDf(Stat{0, 0.1, 3}, Stat{0, 0.1, 3}), 4, 1e-12);
  // One sample without spread: the other's n - 1.
  EXPECT_NEAR(WelchDf(Stat{0, 0.1, 3}, Stat{0, 0, 5}), 2, 1e-12);
  // Neither has spread: na + nb - 2.
  EXPECT_NEAR(WelchDf(Stat{0, 0, 3}, Stat{0, 0, 3}), 4, 1e-12);
  EXPECT_EQ(WelchDf(Stat{0, 0.1, 1}, Stat{0, 0.1, 3}), 0);
}

}  // namespace
}  // namespace mimetic::experiments
