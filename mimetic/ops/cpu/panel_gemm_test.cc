#include "mimetic/ops/cpu/panel_gemm.h"

#include <omp.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace mimetic::ops::cpu {
namespace {

struct Case {
  bool ta, tb;
  int64_t m, n, k;
};

// Operands of op(A) (m x k) op(B) (k x n) with leading dimensions wider than needed (pad 3), so that
// the kernel must honour lda, ldb and ldc.
template <typename T>
struct Operands {
  int64_t lda, ldb, ldc;
  std::vector<T> a, b, c;
  explicit Operands(const Case& s) {
    lda = (s.ta ? s.m : s.k) + 3;
    ldb = (s.tb ? s.k : s.n) + 3;
    ldc = s.n + 3;
    std::mt19937 rng(static_cast<uint32_t>(s.m * 131 + s.n * 17 + s.k + s.ta * 7 + s.tb * 3));
    std::normal_distribution<double> normal;
    a.resize((s.ta ? s.k : s.m) * lda);
    b.resize((s.tb ? s.n : s.k) * ldb);
    c.assign(s.m * ldc, T(-7));  // the padding columns must stay -7
    for (T& v : a) v = static_cast<T>(normal(rng));
    for (T& v : b) v = static_cast<T>(normal(rng));
  }
  // op(A) op(B) in double.
  double Reference(const Case& s, int64_t i, int64_t j) const {
    double sum = 0;
    for (int64_t p = 0; p < s.k; ++p) {
      const double x = s.ta ? a[p * lda + i] : a[i * lda + p];
      const double y = s.tb ? b[j * ldb + p] : b[p * ldb + j];
      sum += x * y;
    }
    return sum;
  }
};

template <typename T>
void CheckAgainstReference(const Case& s, double tol) {
  SCOPED_TRACE(::testing::Message() << "ta " << s.ta << " tb " << s.tb << " m " << s.m << " n " << s.n
                                    << " k " << s.k);
  Operands<T> o(s);
  PanelGemm<T>(s.ta, s.tb, s.m, s.n, s.k, o.a.data(), o.lda, o.b.data(), o.ldb, o.c.data(), o.ldc);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      // Error bound of a k-term dot product: k eps sum |x y| ~ k eps sqrt(k) for unit normals.
      ASSERT_NEAR(o.c[i * o.ldc + j], o.Reference(s, i, j), tol * s.k) << "at (" << i << ", " << j << ")";
    }
    for (int64_t j = s.n; j < o.ldc; ++j)
      ASSERT_EQ(o.c[i * o.ldc + j], T(-7)) << "padding (" << i << ", " << j << ")";
  }
}

// Shapes with tails (PanelGemm is correct at any shape; Suits only says where it is faster): m not
// a multiple of 8 or of the 64-row tasks,
// n not a multiple of the vector (padded B and scratch C), n over one 256-column panel, k over one
// 256-row chunk of the weight gradient.
std::vector<Case> Cases() {
  std::vector<Case> cases;
  for (bool tb : {false, true}) {
    for (int64_t m : {64, 67, 200}) {
      for (int64_t n : {1, 8, 16, 30, 64, 300}) {
        for (int64_t k : {1, 7, 64, 129}) cases.push_back({false, tb, m, n, k});
      }
    }
  }
  for (int64_t m : {1, 9, 64, 130}) {
    for (int64_t n : {16, 32, 48, 256}) {
      for (int64_t k : {64, 300, 520}) cases.push_back({true, false, m, n, k});
    }
  }
  return cases;
}

TEST(PanelGemmTest, MatchesDoubleReferenceF32) {
  for (const Case& s : Cases()) {
    CheckAgainstReference<float>(s, 1e-6);
  }
}

TEST(PanelGemmTest, MatchesDoubleReferenceF64) {
  for (const Case& s : Cases()) {
    CheckAgainstReference<double>(s, 1e-14);
  }
}

TEST(PanelGemmTest, SameBitsOnOneAndTwoThreads) {
  for (const Case& s : {Case{false, true, 8192, 328, 64}, Case{false, false, 1000, 64, 128},
                        Case{true, false, 128, 64, 8192}}) {
    Operands<float> one(s), two(s);
    omp_set_num_threads(1);
    PanelGemm<float>(s.ta, s.tb, s.m, s.n, s.k, one.a.data(), one.lda, one.b.data(), one.ldb, one.c.data(),
                     one.ldc);
    omp_set_num_threads(2);
    PanelGemm<float>(s.ta, s.tb, s.m, s.n, s.k, two.a.data(), two.lda, two.b.data(), two.ldb, two.c.data(),
                     two.ldc);
    EXPECT_EQ(one.c, two.c) << "m " << s.m << " n " << s.n << " k " << s.k;
  }
}

// FastGemm runs a small-C reduction that PanelGemm does not take (Mamba 1's dt_proj weight gradient)
// on one OpenBLAS thread: the bits are those of OpenBLAS on 2 threads, and OpenBLAS's thread count is
// restored afterwards.
TEST(PanelGemmTest, FastGemmSmallReductionKeepsOpenBlasBitsAndThreads) {
  const Case s{true, false, 128, 4, 8192};
  ASSERT_FALSE(PanelGemmSuits(s.ta, s.tb, s.m, s.n, s.k, false));
  Operands<float> fast(s), blas(s);
  openblas_set_num_threads(2);
  Gemm(s.ta, s.tb, s.m, s.n, s.k, 1.0f, blas.a.data(), blas.lda, blas.b.data(), blas.ldb, 0.0f, blas.c.data(),
       blas.ldc);
  FastGemm<float>(s.ta, s.tb, s.m, s.n, s.k, fast.a.data(), fast.lda, fast.b.data(), fast.ldb, fast.c.data(),
                  fast.ldc);
  EXPECT_EQ(fast.c, blas.c);
  EXPECT_EQ(openblas_get_num_threads(), 2);
}

TEST(PanelGemmTest, SuitsOnlySkinnyProducts) {
  EXPECT_TRUE(PanelGemmSuits(false, true, 8192, 328, 64, false));     // x W_inᵀ at the main job
  EXPECT_FALSE(PanelGemmSuits(false, true, 8192, 328, 2048, false));  // long k: OpenBLAS
  EXPECT_FALSE(PanelGemmSuits(false, false, 8192, 512, 32, true));    // short k, wide C: OpenBLAS
  EXPECT_FALSE(PanelGemmSuits(false, false, 16, 64, 64, true));       // too few rows to pay the packing
  EXPECT_TRUE(PanelGemmSuits(true, false, 128, 64, 8192, true));      // W_out's gradient
  EXPECT_FALSE(PanelGemmSuits(true, false, 128, 30, 8192, false));    // B's rows not whole vectors
  EXPECT_FALSE(PanelGemmSuits(true, false, 256, 512, 8192, true));    // a large C: OpenBLAS
  EXPECT_FALSE(PanelGemmSuits(true, true, 128, 64, 8192, true));
}

}  // namespace
}  // namespace mimetic::ops::cpu
