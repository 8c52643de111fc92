// Mean and standard error over seeds, and the comparisons the per-figure claims are decided by.
//
//   Stat mimetic = MeanSe({0.91, 0.88, 0.95});   // {0.913, 0.020, 3}
//   Stat standard = MeanSe({0.10, 0.31, 0.22});
//   bool better = ClearlyGreater(mimetic, standard, /*margin=*/0.2);
//   std::string text = FormatStat(mimetic);     // "0.913 ± 0.020 (n=3)"
#ifndef MIMETIC_EXPERIMENTS_STATS_H_
#define MIMETIC_EXPERIMENTS_STATS_H_

#include <string>
#include <vector>

namespace mimetic::experiments {

struct Stat {
  double mean = 0;  // NaN when n == 0
  double se = 0;    // sample standard error: stddev (n - 1 denominator) / sqrt(n); 0 when n == 1
  int n = 0;        // how many finite values went in
};

// Mean and standard error of the finite values of `values`; NaN and +-inf (a seed that did not run or
// diverged) are left out and not counted in n. No finite value: {NaN, NaN, 0}.
Stat MeanSe(const std::vector<double>& values);

// a.mean exceeds b.mean by more than `margin` AND by more than two standard errors of the difference,
// 2 * sqrt(a.se^2 + b.se^2). False when either has no values.
bool ClearlyGreater(const Stat& a, const Stat& b, double margin = 0);

// |a.mean - b.mean| is within `tolerance` or within two standard errors of the difference: the run
// cannot tell a and b apart. False when either has no values.
bool NotClearlyDifferent(const Stat& a, const Stat& b, double tolerance = 0);

// "0.913 ± 0.020 (n=3)" with `digits` decimals; "0.913 (n=1)" for one value; "n/a (n=0)" for none.
std::string FormatStat(const Stat& s, int digits = 3);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_STATS_H_
