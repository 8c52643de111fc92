#include "mimetic/experiments/results/length_curve.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
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

Crossing CrossingLength(std::vector<LengthPoint> curve, double level) {
  curve.erase(
      std::remove_if(curve.begin(), curve.end(),
                     [](const LengthPoint& p) { return !std::isfinite(p.accuracy) || p.length <= 0; }),
      curve.end());
  std::sort(curve.begin(), curve.end(),
            [](const LengthPoint& a, const LengthPoint& b) { return a.length < b.length; });
  if (curve.empty()) return Crossing{0, Crossing::Censored::kBelow};
  int last = -1;
  for (size_t i = 0; i < curve.size(); ++i) {
    if (curve[i].accuracy >= level) last = static_cast<int>(i);
  }
  if (last < 0) return Crossing{static_cast<double>(curve.front().length), Crossing::Censored::kBelow};
  if (last + 1 == static_cast<int>(curve.size())) {
    return Crossing{static_cast<double>(curve.back().length), Crossing::Censored::kAbove};
  }
  const LengthPoint& a = curve[last];
  const LengthPoint& b = curve[last + 1];
  // a.accuracy >= level > b.accuracy, so the fraction is in [0, 1).
  const double t = (a.accuracy - level) / (a.accuracy - b.accuracy);
  const double log_len = std::log2(a.length) + t * (std::log2(b.length) - std::log2(a.length));
  return Crossing{std::exp2(log_len), Crossing::Censored::kNo};
}

std::string CrossingText(const Crossing& c) {
  switch (c.censored) {
    case Crossing::Censored::kBelow:
      return absl::StrFormat("< %g", c.length);
    case Crossing::Censored::kAbove:
      return absl::StrFormat(">= %g", c.length);
    case Crossing::Censored::kNo:
      break;
  }
  return absl::StrFormat("about %.1f", c.length);
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
