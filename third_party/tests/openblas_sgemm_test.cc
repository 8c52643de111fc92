// OpenBLAS links and computes: cblas_sgemm against a naive triple loop (accumulated in double) on
// odd sizes, every transpose combination, padded leading dimensions and nonzero beta.
//
// Tolerance: |C_blas - C_ref| <= 1e-5 * (sum_k |alpha A_ik B_kj| + |beta C_ij|) + 1e-6 per element,
// i.e. a few float ulps times sqrt(K)-ish accumulation error for K <= 100 (float eps is 1.2e-7).
#include <cblas.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mimetic::third_party_tests {
namespace {

// Deterministic values in [-1, 1) without global random state.
std::vector<float> Fill(int n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

struct Case {
  int m, n, k;
  bool trans_a, trans_b;
};

void CheckCase(const Case& c) {
  const float alpha = 0.75f, beta = -0.5f;
  // Row-major storage. op(A) is (m, k), op(B) is (k, n), C is (m, n). Leading dims padded by 3.
  const int a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
  const int b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
  const int lda = a_cols + 3, ldb = b_cols + 3, ldc = c.n + 3;
  const std::vector<float> a = Fill(a_rows * lda, 1), b = Fill(b_rows * ldb, 2);
  std::vector<float> cmat = Fill(c.m * ldc, 3);
  const std::vector<float> c0 = cmat;

  auto at = [&](int i, int p) { return c.trans_a ? a[p * lda + i] : a[i * lda + p]; };  // op(A)_ip
  auto bt = [&](int p, int j) { return c.trans_b ? b[j * ldb + p] : b[p * ldb + j]; };  // op(B)_pj

  cblas_sgemm(CblasRowMajor, c.trans_a ? CblasTrans : CblasNoTrans, c.trans_b ? CblasTrans : CblasNoTrans,
              c.m, c.n, c.k, alpha, a.data(), lda, b.data(), ldb, beta, cmat.data(), ldc);

  int bad = 0;
  for (int i = 0; i < c.m; ++i) {
    for (int j = 0; j < c.n; ++j) {
      double ref = beta * static_cast<double>(c0[i * ldc + j]);
      double magnitude = std::fabs(ref);
      for (int p = 0; p < c.k; ++p) {
        const double term = alpha * static_cast<double>(at(i, p)) * bt(p, j);
        ref += term;
        magnitude += std::fabs(term);
      }
      const double tolerance = 1e-5 * magnitude + 1e-6;
      if (std::fabs(cmat[i * ldc + j] - ref) > tolerance && ++bad <= 5) {
        ADD_FAILURE() << "C(" << i << "," << j << ") = " << cmat[i * ldc + j] << ", expected " << ref
                      << " +- " << tolerance;
      }
    }
  }
  EXPECT_EQ(bad, 0) << "m=" << c.m << " n=" << c.n << " k=" << c.k << " trans_a=" << c.trans_a
                    << " trans_b=" << c.trans_b;
  // Padding columns of C are untouched.
  for (int i = 0; i < c.m; ++i) {
    for (int j = c.n; j < ldc; ++j) ASSERT_EQ(cmat[i * ldc + j], c0[i * ldc + j]);
  }
}

TEST(OpenBlasSgemmTest, MatchesNaiveLoopOnOddSizesAndTransposes) {
  constexpr int kSizes[][3] = {{1, 1, 1}, {7, 5, 3}, {37, 53, 29}, {65, 17, 97}, {3, 129, 1}};
  for (const auto& size : kSizes) {
    for (bool trans_a : {false, true}) {
      for (bool trans_b : {false, true}) CheckCase({size[0], size[1], size[2], trans_a, trans_b});
    }
  }
}

TEST(OpenBlasSgemmTest, ReportsOpenBlasBuild) {
  // Proves we linked OpenBLAS itself, not the reference BLAS (which lacks openblas_get_config).
  const char* config = openblas_get_config();
  ASSERT_NE(config, nullptr);
  EXPECT_NE(std::string(config).find("OpenBLAS"), std::string::npos) << config;
  std::printf("OpenBLAS config: %s; threads: %d\n", config, openblas_get_num_threads());
}

}  // namespace
}  // namespace mimetic::third_party_tests
