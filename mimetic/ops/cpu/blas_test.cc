#include "mimetic/ops/cpu/blas.h"

#include <omp.h>

#include "gtest/gtest.h"

namespace mimetic::ops::cpu {
namespace {

// Inside the scope OpenBLAS has one thread and an OpenMP parallel region still gets every thread;
// both counts are back afterwards.
TEST(SingleThreadedBlasTest, KeepsOpenMpThreadsAndRestoresBoth) {
  omp_set_num_threads(2);
  openblas_set_num_threads(2);
  {
    SingleThreadedBlas one;
    EXPECT_EQ(openblas_get_num_threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 2);
    int in_region = 0;
#pragma omp parallel
    {
#pragma omp single
      in_region = omp_get_num_threads();
    }
    EXPECT_EQ(in_region, 2);
  }
  EXPECT_EQ(openblas_get_num_threads(), 2);
  EXPECT_EQ(omp_get_max_threads(), 2);
}

TEST(SingleThreadedBlasTest, NoOpWhenOpenBlasHasOneThread) {
  omp_set_num_threads(2);
  openblas_set_num_threads(1);
  omp_set_num_threads(2);
  {
    SingleThreadedBlas one;
    EXPECT_EQ(openblas_get_num_threads(), 1);
    EXPECT_EQ(omp_get_max_threads(), 2);
  }
  EXPECT_EQ(omp_get_max_threads(), 2);
}

}  // namespace
}  // namespace mimetic::ops::cpu
