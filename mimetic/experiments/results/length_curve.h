// Summaries of accuracy against evaluation length, as the paper's Figs. 7 and 9 use them: the area
// under the accuracy-vs-length curve and the longest length a model still copies, plus the slope of
// a least-squares line (how fast that length grows with log N).
//
//   std::vector<LengthPoint> c = {{50, 1.0}, {100, 0.8}, {150, 0.3}, {200, 0.0}};
//   double auc = LengthAuc(c);                  // 0.525: mean exact accuracy over L, 2L, 3L, 4L
//   int longest = LongestLengthAtLeast(c, 0.5);  // 100
//   double slope = LeastSquaresSlope({3, 4, 5}, {100, 150, 200});  // 50
#ifndef MIMETIC_EXPERIMENTS_LENGTH_CURVE_H_
#define MIMETIC_EXPERIMENTS_LENGTH_CURVE_H_

#include <string>
#include <vector>

#include "mimetic/experiments/config/experiment.pb.h"

namespace mimetic::experiments {

struct LengthPoint {
  int length = 0;
  double accuracy = 0;
};

// A run's final exact accuracy at each eval length of `lengths` (NaN where it was not evaluated).
std::vector<LengthPoint> FinalExactCurve(const PointResult& result, const std::vector<int>& lengths);

// The generalisation "area under the curve" (Fig. 7a): the mean accuracy over the curve's lengths,
// each length weighing the same, in [0, 1]; with eval lengths L, 2L, 3L, 4L it is the area under the
// accuracy-vs-length step curve over them divided by its width. NaN when any accuracy is NaN or the
// curve is empty: a partial curve would make areas of different runs incomparable.
double LengthAuc(const std::vector<LengthPoint>& curve);

// The longest evaluated length whose accuracy is >= `threshold` (0 when none is), read in length order.
// Lengths beyond a failing one still count: accuracy is not always monotone in length.
int LongestLengthAtLeast(const std::vector<LengthPoint>& curve, double threshold);

// Where a curve of accuracy against length falls through `level`, the way a reader reads a plotted curve
// ("fits up to about L"): interpolated linearly in log2(length) between the last point at or above the
// level and the next one. A curve below the level already at its shortest length is censored below
// (the crossing is shorter than anything measured); one at or above it at its longest length is
// censored above (longer than anything measured); `length` is then that end of the grid.
struct Crossing {
  enum class Censored { kNo, kBelow, kAbove };
  double length = 0;
  Censored censored = Censored::kNo;
};
// Points with NaN accuracy are skipped; the curve is read in length order. An empty curve is censored
// below with length 0.
Crossing CrossingLength(std::vector<LengthPoint> curve, double level);
// "about 23.5", "< 8" (censored below) or ">= 64" (censored above).
std::string CrossingText(const Crossing& c);

// The slope of the least-squares line through (xs[i], ys[i]); NaN with fewer than two distinct xs or
// sizes that differ.
double LeastSquaresSlope(const std::vector<double>& xs, const std::vector<double>& ys);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_LENGTH_CURVE_H_
