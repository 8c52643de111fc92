// Mean and standard error over seeds, the statistic every summary, figure and claim reports.
//
//   Stat s = MeanSe({0.9, 0.8, 1.0});  // s.mean 0.9, s.se 0.0577, s.n 3
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

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_STATS_H_
