// Mean and standard error over seeds, the statistic every summary, figure and claim reports, and the
// Student's t quantile that turns a standard error into a 95% interval for a few seeds.
//
//   Stat s = MeanSe({0.9, 0.8, 1.0});  // s.mean 0.9, s.se 0.0577, s.n 3
//   double half = HalfWidth95(s);       // t_{0.975, 2} * se = 4.303 * 0.0577 = 0.248
#ifndef MIMETIC_EXPERIMENTS_STATS_H_
#define MIMETIC_EXPERIMENTS_STATS_H_

#include <string>
#include <vector>

namespace mimetic::experiments {

struct Stat {
  double mean = 0;
  double se = 0;  // sample standard deviation / sqrt(n); 0 when n <= 1
  int n = 0;      // finite values counted (NaNs are skipped)
};

// NaN mean when no value is finite.
Stat MeanSe(const std::vector<double>& values);
// "0.912 ± 0.031" (or "n/a").
std::string FormatStat(const Stat& s, int digits = 3);

// The 0.975 quantile of Student's t with `df` degrees of freedom: a mean of n seeds lies within
// t_{0.975, n-1} standard errors of the truth 95% of the time. With 3 seeds that is 4.303, not 2 (two
// standard errors with 3 seeds is about an 82% interval). Exact to 3 decimals (the published table) for
// df 1..30, the Cornish-Fisher expansion above (error < 0.001); a fractional df (Welch's) is rounded
// down, which widens the interval; +infinity for df < 1 (one value has no spread to measure).
double StudentT975(double df);

// Half the width of the 95% interval of a mean over s.n values: StudentT975(n - 1) * se; +infinity
// when n < 2.
double HalfWidth95(const Stat& s);

// Welch-Satterthwaite degrees of freedom of the difference of two means, (va + vb)^2 / (va^2 / (na-1) +
// vb^2 / (nb-1)) with va = a.se^2: between min(na, nb) - 1 and na + nb - 2. na + nb - 2 when both
// standard errors are 0; 0 when either has fewer than 2 values.
double WelchDf(const Stat& a, const Stat& b);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_STATS_H_
