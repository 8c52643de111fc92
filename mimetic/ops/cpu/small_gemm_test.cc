#include "mimetic/ops/cpu/small_gemm.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"

namespace mimetic::ops::cpu {
namespace {

// C = [C +] op(A) B in double, restricted as `tri` says (entries outside stay untouched).
template <typename T>
void Naive(int64_t m, int64_t n, int64_t k, const std::vector<T>& a, int64_t lda, const std::vector<T>& b,
           int64_t ldb, std::vector<T>& c, int64_t ldc, bool accumulate, Tri tri, bool transpose_a) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (tri == Tri::kLowerC && j > i) continue;
      double s = accumulate ? c[i * ldc + j] : 0.0;
      for (int64_t p = 0; p < k; ++p) {
        if (tri == Tri::kLowerA && p > i) continue;
        if (tri == Tri::kUpperA && p < i) continue;
        s += double(transpose_a ? a[p * lda + i] : a[i * lda + p]) * double(b[p * ldb + j]);
      }
      c[i * ldc + j] = static_cast<T>(s);
    }
  }
}

template <typename T>
void CheckShape(int64_t m, int64_t n, int64_t k, Tri tri, bool transpose_a, bool accumulate, double tol) {
  SCOPED_TRACE(::testing::Message() << "m " << m << " n " << n << " k " << k << " tri " << int(tri)
                                    << " transpose_a " << transpose_a << " accumulate " << accumulate);
  const int64_t w = Simd<T>::kWidth, np = RoundUp(n, w);
  const int64_t lda = transpose_a ? m : k;
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + n * 17 + k));
  std::normal_distribution<double> normal;
  std::vector<T> a((transpose_a ? k : m) * lda), b(k * np), c(m * np);
  for (T& x : a) x = static_cast<T>(normal(rng));
  // Triangular A: the zeros are stored (the kernel reads the k inside a 4-row block).
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const bool zero = (tri == Tri::kLowerA && p > i) || (tri == Tri::kUpperA && p < i);
      if (zero) (transpose_a ? a[p * lda + i] : a[i * lda + p]) = T(0);
    }
  }
  for (T& x : b) x = static_cast<T>(normal(rng));
  for (T& x : c) x = static_cast<T>(normal(rng));
  std::vector<T> expected = c;
  Naive(m, np, k, a, lda, b, np, expected, np, accumulate, tri, transpose_a);
  Gemm<T>(m, np, k, a.data(), lda, b.data(), np, c.data(), np, accumulate, tri, transpose_a);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (tri == Tri::kLowerC && j > i) continue;  // not wanted: the kernel may write padding there
      ASSERT_NEAR(c[i * np + j], expected[i * np + j], tol * (1 + std::abs(double(expected[i * np + j]))))
          << "C[" << i << ", " << j << "]";
    }
  }
}

TEST(SmallGemmTest, MatchesNaiveProductForEveryShapeAndTriangle) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                         {3, 5, 7},
                         {4, 16, 4},
                         {17, 33, 9},
                         {64, 64, 64},
                         {5, 40, 0}}) {
    for (Tri tri : {Tri::kFull, Tri::kLowerA, Tri::kUpperA, Tri::kLowerC}) {
      if (tri != Tri::kFull && m != k && tri != Tri::kLowerC) continue;  // triangular A is square
      for (bool transpose_a : {false, true}) {
        for (bool accumulate : {false, true}) {
          CheckShape<float>(m, n, k, tri, transpose_a, accumulate, 1e-5);
          CheckShape<double>(m, n, k, tri, transpose_a, accumulate, 1e-13);
        }
      }
    }
  }
}

// Same inputs, same bits: the summation order is fixed.
TEST(SmallGemmTest, Deterministic) {
  const int64_t m = 19, n = 32, k = 23;
  std::vector<float> a(m * k), b(k * n), c1(m * n), c2(m * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(i % 7) - 3.1f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = float(i % 5) * 0.37f;
  Gemm<float>(m, n, k, a.data(), k, b.data(), n, c1.data(), n, false);
  Gemm<float>(m, n, k, a.data(), k, b.data(), n, c2.data(), n, false);
  EXPECT_EQ(c1, c2);
}

}  // namespace
}  // namespace mimetic::ops::cpu
