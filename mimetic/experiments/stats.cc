#include "mimetic/experiments/stats.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace mimetic::experiments {

Stat MeanSe(const std::vector<double>& values) {
  double sum = 0;
  int n = 0;
  for (double v : values) {
    if (!std::isfinite(v)) continue;
    sum += v;
    ++n;
  }
  if (n == 0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, 0};
  }
  const double mean = sum / n;
  if (n == 1) return {mean, 0, 1};
  double squares = 0;
  for (double v : values) {
    if (std::isfinite(v)) squares += (v - mean) * (v - mean);
  }
  const double stddev = std::sqrt(squares / (n - 1));
  return {mean, stddev / std::sqrt(static_cast<double>(n)), n};
}

bool ClearlyGreater(const Stat& a, const Stat& b, double margin) {
  if (a.n == 0 || b.n == 0) return false;
  const double diff = a.mean - b.mean;
  return diff > margin && diff > 2 * std::sqrt(a.se * a.se + b.se * b.se);
}

bool NotClearlyDifferent(const Stat& a, const Stat& b, double tolerance) {
  if (a.n == 0 || b.n == 0) return false;
  const double diff = std::fabs(a.mean - b.mean);
  return diff <= tolerance || diff <= 2 * std::sqrt(a.se * a.se + b.se * b.se);
}

std::string FormatStat(const Stat& s, int digits) {
  if (s.n == 0) return "n/a (n=0)";
  if (s.n == 1) return absl::StrFormat("%.*f (n=1)", digits, s.mean);
  return absl::StrFormat("%.*f ± %.*f (n=%d)", digits, s.mean, digits, s.se, s.n);
}

}  // namespace mimetic::experiments
