// Register-blocked small GEMM for the fast CPU kernels: C (m x n) = [C +] op(A) B on row-major
// scratch blocks whose sides are 16-256 (SSD's chunk products P, N, q), with kGemmRows rows x 2 vectors
// of accumulators in registers. At these sizes it runs about as fast as single-threaded cblas_sgemm,
// skips the zero triangles of causal q x q blocks (Tri), and never starts OpenBLAS threads from
// inside an OpenMP loop. Summation order is fixed: same bits on every run. n, ldb and ldc must be
// multiples of Simd<T>::kWidth (pad scratch rows with RoundUp).
//
//   constexpr int64_t W = cpu::Simd<float>::kWidth;
//   std::vector<float> b(k * cpu::RoundUp(n, W)), c(m * cpu::RoundUp(n, W));
//   cpu::Gemm<float>(m, cpu::RoundUp(n, W), k, a, lda, b.data(), cpu::RoundUp(n, W), c.data(),
//                    cpu::RoundUp(n, W), /*accumulate=*/false);
#ifndef MIMETIC_OPS_CPU_SMALL_GEMM_H_
#define MIMETIC_OPS_CPU_SMALL_GEMM_H_

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mimetic::ops::cpu {

// The vector and register block that fit the target's registers: with AVX-512, 64-byte vectors and
// 8 rows x 2 vectors of accumulators (16 of 32 zmm registers); otherwise (AVX2: 16 ymm registers)
// 32-byte vectors and 4 rows x 2 vectors, since 64-byte vectors there are register pairs and 8 x 2 of
// them spill to the stack on every step of k (measured: the whole training step ~15x slower). Each C
// element still sums over k in the same order, so the bits do not depend on the choice.
#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64;
inline constexpr int kGemmRows = 8;
#else
inline constexpr int kVectorBytes = 32;
inline constexpr int kGemmRows = 4;
#endif

// One vector of T (GCC vector extension; kVectorBytes wide).
template <typename T>
struct Simd {
  static constexpr int64_t kWidth = kVectorBytes / sizeof(T);
  typedef T V __attribute__((vector_size(kVectorBytes)));
  static V Load(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof(V));
    return v;
  }
  static void Store(T* p, const V& v) { std::memcpy(p, &v, sizeof(V)); }
};

inline int64_t RoundUp(int64_t n, int64_t w) { return (n + w - 1) / w * w; }

// Which part of a GEMM is needed. kLowerA / kUpperA: A[i,k] is zero for k > i / k < i (the zeros
// must be stored for the k inside a 4-row block); kLowerC: only C[i, j <= i] is wanted.
enum class Tri { kFull, kLowerA, kUpperA, kLowerC };

template <typename T, int R, int NV>
inline void GemmBlock(int64_t kb, int64_t ke, const T* A, int64_t sai, int64_t sak, const T* B, int64_t ldb,
                      T* C, int64_t ldc, bool accumulate) {
  using S = Simd<T>;
  using V = typename S::V;
  V c[R][NV];
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) c[r][v] = accumulate ? S::Load(C + r * ldc + v * S::kWidth) : V{};
  }
  for (int64_t k = kb; k < ke; ++k) {
    V b[NV];
    for (int v = 0; v < NV; ++v) b[v] = S::Load(B + k * ldb + v * S::kWidth);
    for (int r = 0; r < R; ++r) {
      const T a = A[r * sai + k * sak];
      for (int v = 0; v < NV; ++v) c[r][v] += a * b[v];
    }
  }
  for (int r = 0; r < R; ++r) {
    for (int v = 0; v < NV; ++v) S::Store(C + r * ldc + v * S::kWidth, c[r][v]);
  }
}

template <typename T, int R>
inline void GemmRows(int64_t kb, int64_t ke, const T* A, int64_t sai, int64_t sak, const T* B, int64_t ldb,
                     T* C, int64_t ldc, int64_t ncols, bool accumulate) {
  constexpr int64_t W = Simd<T>::kWidth;
  int64_t j = 0;
  for (; j + 2 * W <= ncols; j += 2 * W) {
    GemmBlock<T, R, 2>(kb, ke, A, sai, sak, B + j, ldb, C + j, ldc, accumulate);
  }
  for (; j < ncols; j += W) GemmBlock<T, R, 1>(kb, ke, A, sai, sak, B + j, ldb, C + j, ldc, accumulate);
}

// GemmRows for a row count known only at run time, 1 <= rows <= R (a matrix's last, short row block).
template <typename T, int R>
inline void GemmRowsUpTo(int64_t rows, int64_t kb, int64_t ke, const T* A, int64_t sai, int64_t sak,
                         const T* B, int64_t ldb, T* C, int64_t ldc, int64_t ncols, bool accumulate) {
  if constexpr (R > 1) {
    if (rows < R) return GemmRowsUpTo<T, R - 1>(rows, kb, ke, A, sai, sak, B, ldb, C, ldc, ncols, accumulate);
  }
  GemmRows<T, R>(kb, ke, A, sai, sak, B, ldb, C, ldc, ncols, accumulate);
}

// C (m x n) = [C +] op(A) (m x k) B (k x n), row-major with leading dimensions, op(A) = Aᵀ (stored
// k x m) when transpose_a. n, ldb and ldc are multiples of Simd<T>::kWidth (padded scratch rows).
template <typename T>
void Gemm(int64_t m, int64_t n, int64_t k, const T* A, int64_t lda, const T* B, int64_t ldb, T* C,
          int64_t ldc, bool accumulate, Tri tri = Tri::kFull, bool transpose_a = false) {
  constexpr int64_t W = Simd<T>::kWidth;
  const int64_t sai = transpose_a ? 1 : lda, sak = transpose_a ? lda : 1;
  for (int64_t i = 0; i < m; i += kGemmRows) {
    const int64_t rows = std::min<int64_t>(kGemmRows, m - i);
    const int64_t kb = tri == Tri::kUpperA ? i : 0;
    const int64_t ke = tri == Tri::kLowerA ? std::min(k, i + rows) : k;
    const int64_t nc = tri == Tri::kLowerC ? std::min(n, RoundUp(i + rows, W)) : n;
    const T* a = A + i * sai;
    T* c = C + i * ldc;
    GemmRowsUpTo<T, kGemmRows>(rows, kb, ke, a, sai, sak, B, ldb, c, ldc, nc, accumulate);
  }
}

}  // namespace mimetic::ops::cpu

#endif  // MIMETIC_OPS_CPU_SMALL_GEMM_H_
