#include "mimetic/experiments/results/stats.h"

#include <array>
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

double StudentT975(double df) {
  if (!(df >= 1)) return std::numeric_limits<double>::infinity();
  // t_{0.975, df} for df = 1..30 (any statistics table, e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
  static constexpr std::array<double, 30> kTable = {
      12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,  //
      2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,  //
      2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  const double n = std::floor(df);
  if (n <= kTable.size()) return kTable[static_cast<size_t>(n) - 1];
  // Cornish-Fisher expansion of the t quantile in 1/df about the normal quantile z (Abramowitz and
  // Stegun 26.7.5).
  const double z = 1.959963984540054, z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * n) + (5 * z5 + 16 * z3 + 3 * z) / (96 * n * n) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * n * n * n);
}

double HalfWidth95(const Stat& s) {
  return s.n < 2 ? std::numeric_limits<double>::infinity() : StudentT975(s.n - 1) * s.se;
}

double WelchDf(const Stat& a, const Stat& b) {
  if (a.n < 2 || b.n < 2) return 0;
  const double va = a.se * a.se, vb = b.se * b.se;
  if (va + vb == 0) return a.n + b.n - 2;
  return (va + vb) * (va + vb) / (va * va / (a.n - 1) + vb * vb / (b.n - 1));
}

}  // namespace mimetic::experiments
