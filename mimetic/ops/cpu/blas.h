// The one cblas wrapper of the CPU kernels: row-major GEMM for float and double with the edge cases
// OpenBLAS leaves to the caller (an empty C returns at once; k == 0 with beta == 0 zero-fills C,
// which is then never read).
//
//   // C (m, n) = A (m, k) Bᵀ (n, k): a row-major product, B transposed.
//   cpu::Gemm(/*trans_a=*/false, /*trans_b=*/true, m, n, k, 1.0f, a, k, b, k, 0.0f, c, n);
#ifndef MIMETIC_OPS_CPU_BLAS_H_
#define MIMETIC_OPS_CPU_BLAS_H_

#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <initializer_list>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace mimetic::ops::cpu {

namespace internal {
inline bool GemmIsTrivial(int64_t m, int64_t n, int64_t k, bool beta_is_zero, int64_t ldc, float* c_f,
                          double* c_d) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  if (beta_is_zero) {
    for (int64_t i = 0; i < m; ++i) {
      if (c_f != nullptr) std::fill(c_f + i * ldc, c_f + i * ldc + n, 0.0f);
      if (c_d != nullptr) std::fill(c_d + i * ldc, c_d + i * ldc + n, 0.0);
    }
  }
  return true;
}
}  // namespace internal

// OK when every GEMM dimension and leading dimension fits cblas's int; else an error naming it.
inline absl::Status CheckBlasDims(std::initializer_list<int64_t> dims) {
  for (int64_t v : dims) {
    if (v > INT_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("a GEMM dimension of ", v, " exceeds the BLAS limit of ", INT_MAX));
    }
  }
  return absl::OkStatus();
}

// OpenBLAS on one thread for a scope, for GEMMs called outside a parallel region that run faster
// unsplit. We link OpenBLAS's OpenMP build, which takes its thread count from OpenMP at every call
// made outside a parallel region (it resets its own count to omp_get_max_threads()), so
// openblas_set_num_threads(1) alone does not hold past the next GEMM: OpenMP's count is set to 1
// as well, and both are restored on exit. Parallel regions opened inside the scope run on one
// thread. (GEMMs called from inside our own parallel regions need no scope: that build runs them
// on the calling thread.)
class SingleThreadedBlas {
 public:
  SingleThreadedBlas() : blas_threads_(openblas_get_num_threads()), omp_threads_(omp_get_max_threads()) {
    openblas_set_num_threads(1);  // also sets OpenMP's count to 1 in the OpenMP build
    omp_set_num_threads(1);       // said outright: the call above does not promise it
  }
  ~SingleThreadedBlas() {
    openblas_set_num_threads(blas_threads_);
    omp_set_num_threads(omp_threads_);
  }
  SingleThreadedBlas(const SingleThreadedBlas&) = delete;
  SingleThreadedBlas& operator=(const SingleThreadedBlas&) = delete;

 private:
  int blas_threads_, omp_threads_;
};

// C (m, n) = alpha op(A) op(B) + beta C, row-major with leading dimensions; op(X) = Xᵀ when trans_x.
inline void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (internal::GemmIsTrivial(m, n, k, beta == 0, ldc, c, nullptr)) return;
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

inline void Gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
                 int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (internal::GemmIsTrivial(m, n, k, beta == 0, ldc, nullptr, c)) return;
  cblas_dgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n,
              k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace mimetic::ops::cpu

#endif  // MIMETIC_OPS_CPU_BLAS_H_
