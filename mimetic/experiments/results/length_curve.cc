#include "mimetic/experiments/results/length_curve.h"

#include <algorithm>
#include <cmath>

#include "mimetic/experiments/runner/point_run.h"

namespace mimetic::experiments {

std::vector<LengthPoint> FinalExactCurve(const PointResult& result, const std::vector<int>& lengths) {
  std::vector<LengthPoint> out;
  for (int len : lengths) out.push_back(LengthPoint{len, FinalExact(result, len)});
  return out;
}

double LengthAuc(const std::vector<LengthPoint>& curve) {
  if (curve.empty()) return NAN;
  double sum = 0;
  for (const LengthPoint& p : curve) {
    if (!std::isfinite(p.accuracy)) return NAN;
    sum += p.accuracy;
  }
  return sum / static_cast<double>(curve.size());
}

int LongestLengthAtLeast(const std::vector<LengthPoint>& curve, double threshold) {
  int longest = 0;
  for (const LengthPoint& p : curve) {
    if (std::isfinite(p.accuracy) && p.accuracy >= threshold) longest = std::max(longest, p.length);
  }
  return longest;
}

double LeastSquaresSlope(const std::vector<double>& xs, const std::vector<double>& ys) {
  if (xs.size() != ys.size() || xs.size() < 2) return NAN;
  double mx = 0, my = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    mx += xs[i];
    my += ys[i];
  }
  mx /= xs.size();
  my /= ys.size();
  double sxx = 0, sxy = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    sxx += (xs[i] - mx) * (xs[i] - mx);
    sxy += (xs[i] - mx) * (ys[i] - my);
  }
  return sxx > 0 ? sxy / sxx : NAN;
}

}  // namespace mimetic::experiments
