// GEMMs of a model's Linear layers on small_gemm.h's register-blocked kernel, in place of OpenBLAS
// where it is faster: C (m x n) = op(A) op(B) with many rows and a short k (x Wᵀ and g W), or a small
// C summed over many rows (the weight gradient Aᵀ B). OpenBLAS packs both operands for every call
// and blocks for large squares; at the main job's shapes (8192 rows, k and n 32-128) that costs
// 10-40% (Zen 4, 1 thread: 77-97 GFLOP/s against 91-109 here; see panel_gemm_benchmark). Row blocks
// of A (or blocks of C's rows for Aᵀ B) are split over OpenMP threads; every C element is summed in
// k order by one thread, so the bits do not depend on the thread count.
//
//   if (cpu::PanelGemmSuits(ta, tb, m, n, k, n_multiple_of_vector)) {
//     cpu::PanelGemm<float>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);  // C = op(A) op(B)
//   }
#ifndef MIMETIC_OPS_CPU_PANEL_GEMM_H_
#define MIMETIC_OPS_CPU_PANEL_GEMM_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "mimetic/ops/cpu/blas.h"
#include "mimetic/ops/cpu/small_gemm.h"

namespace mimetic::ops::cpu {

// Columns of B per pass (a k x 256 panel of B stays in L2 while the row blocks stream past it).
constexpr int64_t kPanelCols = 256;
// Rows of A (of the long side k for Aᵀ B) per pass: 256 rows of A and B stay in L2.
constexpr int64_t kRowChunk = 256;

// Whether PanelGemm handles this product rather than OpenBLAS, from panel_gemm_benchmark on Zen 4
// (1 and 2 threads): op(A) with many rows and k <= 1024 (the Linear forward x Wᵀ and input gradient
// g W: 1.03-1.4x, up to 2.6x for narrow outputs on 2 threads), except k < 64 with n > 128 (0.9-0.97x
// on 1 thread); the weight gradient Aᵀ B only for a small C (m, n <= 128, or m <= 32 and n <= 256:
// 1.1-1.9x; for larger C, OpenBLAS's blocking wins up to 5x), with n a multiple of one vector (B's
// rows are read in place).
inline bool PanelGemmSuits(bool ta, bool tb, int64_t m, int64_t n, int64_t k, bool n_vector_multiple) {
  if (!ta) return m >= 64 && k <= 1024 && (k >= 64 || n <= 128);
  if (tb || !n_vector_multiple || k < 64) return false;
  return (m <= 128 && n <= 128) || (m <= 32 && n <= 256);
}

namespace internal {

// C rows [r0, r1) = A rows [r0, r1) Bp, Bp (k x np) the packed op(B) with zero columns n..np.
// Writes C in place when n is a multiple of the vector width, else through `scratch`.
template <typename T>
void PanelRows(int64_t r0, int64_t r1, int64_t n, int64_t np, int64_t k, const T* a, int64_t lda, const T* bp,
               T* c, int64_t ldc, std::vector<T>& scratch) {
  const bool in_place = n == np;  // Gemm writes whole vectors: only n's columns
  for (int64_t j0 = 0; j0 < np; j0 += kPanelCols) {
    const int64_t pw = std::min(kPanelCols, np - j0);
    if (in_place) {
      Gemm<T>(r1 - r0, pw, k, a + r0 * lda, lda, bp + j0, np, c + r0 * ldc + j0, ldc, false);
      continue;
    }
    scratch.resize((r1 - r0) * pw);
    Gemm<T>(r1 - r0, pw, k, a + r0 * lda, lda, bp + j0, np, scratch.data(), pw, false);
    const int64_t valid = std::min(pw, n - j0);
    for (int64_t r = r0; r < r1; ++r) {
      std::copy(&scratch[(r - r0) * pw], &scratch[(r - r0) * pw + valid], c + r * ldc + j0);
    }
  }
}

}  // namespace internal

// C_i (m_i x n) = A_iᵀ B for parts i sharing B: A_i (k x m_i, row stride lda_i), B (k x n, row
// stride ldb, n a multiple of the vector width), C_i row stride ldc: the weight gradients of a
// Linear layer's parts (or one, for PanelGemm). Chunks of kRowChunk rows of the A_i and B are read
// from memory once and then used from cache by every task (8 rows of one C_i); a task belongs to
// the same thread in every chunk (static schedule, same bounds), so one thread sums each element in
// k order, accumulating into C after the first chunk.
template <typename T>
void PanelGemmTParts(int64_t n, int64_t k, const std::vector<const T*>& a, const std::vector<int64_t>& m,
                     const std::vector<int64_t>& lda, const T* b, int64_t ldb, const std::vector<T*>& c,
                     int64_t ldc) {
  constexpr int64_t kCRows = 8;
  struct Task {
    size_t part;
    int64_t i0, rows;
  };
  std::vector<Task> tasks;
  for (size_t p = 0; p < a.size(); ++p) {
    for (int64_t i0 = 0; i0 < m[p]; i0 += kCRows) tasks.push_back({p, i0, std::min(kCRows, m[p] - i0)});
  }
  const int64_t num_tasks = static_cast<int64_t>(tasks.size());
#pragma omp parallel
  for (int64_t k0 = 0; k0 < k; k0 += kRowChunk) {
    const int64_t kk = std::min(kRowChunk, k - k0);
#pragma omp for schedule(static) nowait
    for (int64_t t = 0; t < num_tasks; ++t) {
      const Task& w = tasks[t];
      Gemm<T>(w.rows, n, kk, a[w.part] + k0 * lda[w.part] + w.i0, lda[w.part], b + k0 * ldb, ldb,
              c[w.part] + w.i0 * ldc, ldc, k0 > 0, Tri::kFull, /*transpose_a=*/true);
    }
  }
}

// C (m x n) = op(A) op(B), row-major with leading dimensions (beta = 0). Call only where
// PanelGemmSuits; m, n, k > 0.
template <typename T>
void PanelGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
               int64_t ldb, T* c, int64_t ldc) {
  constexpr int64_t W = Simd<T>::kWidth;
  if (!ta) {
    // Pack op(B) (k x n) into k x np rows padded with zeros: small next to A (m >> k).
    const int64_t np = RoundUp(n, W);
    std::vector<T> bp(k * np, T(0));
    for (int64_t kk = 0; kk < k; ++kk) {
      for (int64_t j = 0; j < n; ++j) bp[kk * np + j] = tb ? b[j * ldb + kk] : b[kk * ldb + j];
    }
    constexpr int64_t kRowsPerTask = 64;
    const int64_t tasks = (m + kRowsPerTask - 1) / kRowsPerTask;
#pragma omp parallel
    {
      std::vector<T> scratch;
#pragma omp for schedule(static)
      for (int64_t t = 0; t < tasks; ++t) {
        internal::PanelRows<T>(t * kRowsPerTask, std::min(m, (t + 1) * kRowsPerTask), n, np, k, a, lda,
                               bp.data(), c, ldc, scratch);
      }
    }
    return;
  }
  PanelGemmTParts<T>(n, k, {a}, {m}, {lda}, b, ldb, {c}, ldc);
}

// C sizes (m n) below which a reduction Aᵀ B that PanelGemm does not take runs OpenBLAS on one thread.
constexpr int64_t kSmallC = 4096;

// C (m x n) = op(A) op(B) (beta = 0) on whichever kernel is faster for the shape: PanelGemm where
// PanelGemmSuits, else OpenBLAS. The one place that choice is made (MatMul, LinearParts).
template <typename T>
void FastGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
              int64_t ldb, T* c, int64_t ldc) {
  if (PanelGemmSuits(ta, tb, m, n, k, n % Simd<T>::kWidth == 0)) {
    PanelGemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  // Aᵀ B into a small C (a weight gradient summed over many rows, e.g. Mamba 1's dt_proj: 128 x 4 over
  // 8192 rows): OpenBLAS splits C over its threads and runs ~1.5x slower on 2 than on 1 (a warm loop
  // on Zen 4: 0.45-0.54 vs 0.32 ms per call). One thread; each C element is summed by one thread
  // either way (same bits).
  std::optional<SingleThreadedBlas> one_thread;
  if (ta && !tb && m * n <= kSmallC) one_thread.emplace();
  Gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, T(0), c, ldc);
}

// C (m x n) = Σ_i A_i B_i with A_i (m x k_i, row stride k_i) and B_i (k_i x n, row stride ldb_i):
// the input gradient Σ_i g_i W_i of a Linear layer computed in parts (W_i the rows of W that made
// output part i). Each 64-row tile gathers its rows of the A_i side by side (64 x Σk_i, in cache)
// and runs one GEMM over the whole Σk_i against the B_i stacked: the accumulators stay in registers
// across the parts (short parts such as Mamba's dt would otherwise reload C per part), C is
// written once, and every element is summed in part order. For many rows m (>= 64).
template <typename T>
void PanelGemmSum(int64_t m, int64_t n, const std::vector<const T*>& a, const std::vector<int64_t>& k,
                  const std::vector<const T*>& b, const std::vector<int64_t>& ldb, T* c, int64_t ldc) {
  const int64_t np = RoundUp(n, Simd<T>::kWidth);
  std::vector<int64_t> offset(a.size() + 1, 0);
  for (size_t i = 0; i < a.size(); ++i) offset[i + 1] = offset[i] + k[i];
  const int64_t kt = offset.back();
  // The B_i stacked (kt x np, zero columns n..np).
  std::vector<T> bp(kt * np, T(0));
  for (size_t i = 0; i < a.size(); ++i) {
    for (int64_t kk = 0; kk < k[i]; ++kk) {
      std::copy(b[i] + kk * ldb[i], b[i] + kk * ldb[i] + n, &bp[(offset[i] + kk) * np]);
    }
  }
  constexpr int64_t kRowsPerTask = 64;
  const int64_t tasks = (m + kRowsPerTask - 1) / kRowsPerTask;
#pragma omp parallel
  {
    std::vector<T> ap, scratch;
#pragma omp for schedule(static)
    for (int64_t t = 0; t < tasks; ++t) {
      const int64_t r0 = t * kRowsPerTask, rows = std::min(m, r0 + kRowsPerTask) - r0;
      ap.resize(rows * kt);
      for (int64_t r = 0; r < rows; ++r) {
        for (size_t i = 0; i < a.size(); ++i) {
          std::copy(a[i] + (r0 + r) * k[i], a[i] + (r0 + r + 1) * k[i], &ap[r * kt + offset[i]]);
        }
      }
      internal::PanelRows<T>(0, rows, n, np, kt, ap.data(), kt, bp.data(), c + r0 * ldc, ldc, scratch);
    }
  }
}

}  // namespace mimetic::ops::cpu

#endif  // MIMETIC_OPS_CPU_PANEL_GEMM_H_
