#include "mimetic/ops/cpu/blas.h"

#include <omp.h>

#include <vector>

#include "gtest/gtest.h"

namespace mimetic::ops::cpu {
namespace {

// A GEMM large enough that OpenBLAS would split it over threads (256^3).
void BigGemm() {
  const int64_t n = 256;
  std::vector<float> a(n * n, 1.0f), b(n * n, 1.0f), c(n * n);
  Gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  ASSERT_EQ(c[0], static_cast<float>(n));
}

// OpenBLAS's OpenMP build takes its thread count from OpenMP at each call outside a parallel
// region: this is the mechanism the scope has to defeat, checked here so that a different OpenBLAS
// build shows up.
TEST(SingleThreadedBlasTest, OpenBlasFollowsOpenMpAtEachCall) {
  omp_set_num_threads(2);
  openblas_set_num_threads(2);
  openblas_set_num_threads(1);
  omp_set_num_threads(2);
  BigGemm();
  EXPECT_EQ(openblas_get_num_threads(), 2) << "OpenBLAS kept its own count: not the OpenMP build?";
}

// Inside the scope a GEMM leaves OpenBLAS on one thread (the count it re-reads from OpenMP is 1),
// and both counts are back afterwards. (A scope that set OpenBLAS alone saw 2 after the GEMM: the
// GEMM had run on 2 threads.)
TEST(SingleThreadedBlasTest, HoldsAcrossGemmsAndRestoresBoth) {
  omp_set_num_threads(2);
  openblas_set_num_threads(2);
  {
    SingleThreadedBlas one;
    EXPECT_EQ(openblas_get_num_threads(), 1);
    BigGemm();
    EXPECT_EQ(openblas_get_num_threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 1);
  }
  EXPECT_EQ(openblas_get_num_threads(), 2);
  EXPECT_EQ(omp_get_max_threads(), 2);
  int in_region = 0;
#pragma omp parallel
  {
#pragma omp single
    in_region = omp_get_num_threads();
  }
  EXPECT_EQ(in_region, 2);
}

TEST(SingleThreadedBlasTest, RestoresOneThreadToo) {
  openblas_set_num_threads(1);
  omp_set_num_threads(1);
  {
    SingleThreadedBlas one;
    BigGemm();
  }
  EXPECT_EQ(openblas_get_num_threads(), 1);
  EXPECT_EQ(omp_get_max_threads(), 1);
}

}  // namespace
}  // namespace mimetic::ops::cpu
