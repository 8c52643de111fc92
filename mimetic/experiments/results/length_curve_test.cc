#include "mimetic/experiments/results/length_curve.h"

#include <cmath>

#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

TEST(LengthCurveTest, AucIsTheMeanAccuracyOverTheEvalLengths) {
  EXPECT_DOUBLE_EQ(LengthAuc({{50, 1.0}, {100, 0.8}, {150, 0.3}, {200, 0.0}}), 0.525);
  EXPECT_DOUBLE_EQ(LengthAuc({{50, 1.0}, {100, 1.0}, {150, 1.0}, {200, 1.0}}), 1.0);
  EXPECT_DOUBLE_EQ(LengthAuc({{50, 0.0}, {100, 0.0}}), 0.0);
}

TEST(LengthCurveTest, AucOfAPartialOrEmptyCurveIsNan) {
  EXPECT_TRUE(std::isnan(LengthAuc({{50, 1.0}, {100, NAN}})));
  EXPECT_TRUE(std::isnan(LengthAuc({})));
}

TEST(LengthCurveTest, LongestLengthIsTheLargestLengthAtOrAboveTheThreshold) {
  EXPECT_EQ(LongestLengthAtLeast({{50, 1.0}, {100, 0.8}, {150, 0.3}, {200, 0.0}}, 0.5), 100);
  EXPECT_EQ(LongestLengthAtLeast({{50, 1.0}, {100, 0.5}, {150, 0.49}}, 0.5), 100);  // >= counts
  EXPECT_EQ(LongestLengthAtLeast({{50, 0.2}, {100, 0.1}}, 0.5), 0);                 // none
  // Not monotone: a dip at 100 does not hide the fit at 150.
  EXPECT_EQ(LongestLengthAtLeast({{50, 0.9}, {100, 0.4}, {150, 0.6}}, 0.5), 150);
  EXPECT_EQ(LongestLengthAtLeast({{50, NAN}, {100, 0.7}}, 0.5), 100);
}

TEST(LengthCurveTest, SlopeOfExactAndNoisyLines) {
  EXPECT_DOUBLE_EQ(LeastSquaresSlope({3, 4, 5}, {100, 150, 200}), 50);
  EXPECT_DOUBLE_EQ(LeastSquaresSlope({0, 1, 2, 3}, {1, 3, 2, 4}), 0.8);  // hand-computed: sxy 4 / sxx 5
  EXPECT_DOUBLE_EQ(LeastSquaresSlope({1, 2}, {5, 5}), 0);
  EXPECT_TRUE(std::isnan(LeastSquaresSlope({2, 2}, {1, 3})));  // one distinct x
  EXPECT_TRUE(std::isnan(LeastSquaresSlope({1}, {1})));
  EXPECT_TRUE(std::isnan(LeastSquaresSlope({1, 2}, {1})));
}

TEST(LengthCurveTest, FinalExactCurveReadsTheFinalEvaluationPerLength) {
  PointResult r;
  for (auto [len, x] : {std::pair<int, double>{50, 0.9}, {100, 0.4}}) {
    LengthAccuracy* a = r.add_final();
    a->set_length(len);
    a->set_exact(x);
  }
  const std::vector<LengthPoint> c = FinalExactCurve(r, {50, 100, 150});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_DOUBLE_EQ(c[0].accuracy, 0.9);
  EXPECT_DOUBLE_EQ(c[1].accuracy, 0.4);
  EXPECT_TRUE(std::isnan(c[2].accuracy));
}

TEST(LengthCurveTest, CrossingLengthInterpolatesOnLogLength) {
  // 1.0 at 16, 0.5 at 64 (and 0 at 256): 0.9 is crossed a fifth of the way from 16 to 64 in log2, at
  // 2^(4 + 0.2 * 2) = 21.1; 0.5 exactly at 64.
  const std::vector<LengthPoint> c = {{64, 0.5}, {16, 1.0}, {256, 0.0}, {32, NAN}};
  const Crossing at9 = CrossingLength(c, 0.9);
  EXPECT_EQ(at9.censored, Crossing::Censored::kNo);
  EXPECT_NEAR(at9.length, std::exp2(4.4), 1e-9);
  EXPECT_NEAR(CrossingLength(c, 0.5).length, 64, 1e-9);
  EXPECT_EQ(CrossingText(at9), "about 21.1");
  // Never at the level, or at it everywhere: censored, at the grid's end.
  const Crossing below = CrossingLength(c, 1.1);
  EXPECT_EQ(below.censored, Crossing::Censored::kBelow);
  EXPECT_EQ(CrossingText(below), "< 16");
  const Crossing above = CrossingLength({{16, 1.0}, {64, 0.95}}, 0.9);
  EXPECT_EQ(above.censored, Crossing::Censored::kAbove);
  EXPECT_EQ(CrossingText(above), ">= 64");
  EXPECT_EQ(CrossingLength({}, 0.9).censored, Crossing::Censored::kBelow);
}

}  // namespace
}  // namespace mimetic::experiments
