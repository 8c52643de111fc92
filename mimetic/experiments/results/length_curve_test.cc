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

}  // namespace
}  // namespace mimetic::experiments
