#include "mimetic/experiments/bench/machine_peak.h"

#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

TEST(MachinePeakTest, NamesTheCpu) { EXPECT_FALSE(CpuModel().empty()); }

// Any working CPU does more than 0.1 GFLOP/s in either measurement, and far less than 100 TFLOP/s.
TEST(MachinePeakTest, FmaLoopAndSgemmGiveFiniteRates) {
  const double fma = FmaPeakGflops(/*threads=*/1, /*iterations=*/2'000'000, /*repeats=*/1);
  EXPECT_GT(fma, 0.1) << FmaIsa();
  EXPECT_LT(fma, 1e5);
  const double blas = SgemmGflops(/*n=*/256, /*threads=*/1, /*repeats=*/1);
  EXPECT_GT(blas, 0.1);
  EXPECT_LT(blas, 1e5);
}

}  // namespace
}  // namespace mimetic::experiments
