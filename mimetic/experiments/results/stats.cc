#include "mimetic/experiments/results/stats.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace mimetic::experiments {

Stat MeanSe(const std::vector<double>& values) {
  Stat s;
  double sum = 0;
  for (double v : values) {
    if (std::isfinite(v)) {
      sum += v;
      ++s.n;
    }
  }
  if (s.n == 0) {
    s.mean = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  s.mean = sum / s.n;
  if (s.n > 1) {
    double ss = 0;
    for (double v : values) {
      if (std::isfinite(v)) ss += (v - s.mean) * (v - s.mean);
    }
    s.se = std::sqrt(ss / (s.n - 1)) / std::sqrt(static_cast<double>(s.n));
  }
  return s;
}

std::string FormatStat(const Stat& s, int digits) {
  if (s.n == 0 || !std::isfinite(s.mean)) return "n/a";
  return absl::StrFormat("%.*f ± %.*f", digits, s.mean, digits, s.se);
}

}  // namespace mimetic::experiments
