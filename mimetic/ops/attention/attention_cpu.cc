// Causal softmax / linear attention: the fast CPU path.
//
// Per (b, h) head, with Q, K (L, Pk) and V, dO (L, Pv) the head's strided slices of the (B, L, H, P)
// tensors (row stride H*P, passed to OpenBLAS as the leading dimension, so nothing is copied):
//   forward   W = causal(scale Q Kᵀ)  (softmax rows or masked scores),  O = W V
//   backward  dW = dO Vᵀ,  dS = W ∘ (dW - rowsum(W ∘ dW)) (softmax) or dW (linear), masked,
//             dQ = scale dS K,  dK = scale dSᵀ Q,  dV = Wᵀ dO
// Every product is a GEMM over row (or column) blocks of kAttentionRowBlock, so a block of rows
// [i0, i1) touches only columns [0, i1) and the masked upper triangle is mostly skipped. W is
// recomputed in the backward pass; its (L, L) scratch is per thread. Linear attention switches to
// the chunked form (below) when that needs fewer multiply-adds (LinearAttentionUsesChunkedForm).
// The softmax's exp is a vectorised polynomial (Exp below), not libm's scalar expf.
//
// Threads: OpenMP over the B*H heads (static schedule). OpenBLAS (the pthread build) would start its
// own threads inside each GEMM above m·n·k ≈ 2.6e5, oversubscribing the cores, so it is held at one
// thread while the heads run in parallel. Results are deterministic: each head's arithmetic is the
// same whichever thread runs it.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "mimetic/ops/attention/attention.h"
#include "mimetic/ops/cpu/blas.h"
#include "mimetic/ops/cpu/fast_math.h"

namespace mimetic::ops {
namespace {

using core::DType;

using cpu::Gemm;  // cblas, row-major (cpu/blas.h)

// exp(x) for the softmax (arguments are x - rowmax <= 0): fast_math's vectorisable one for f32.
inline float Exp(float x) { return fast_math::Exp(x); }
inline double Exp(double x) { return std::exp(x); }

// The shapes and strides of one call.
struct Layout {
  int64_t B, L, H, Pk, Pv;
  int64_t ldk, ldv;  // row strides of the (L, Pk) and (L, Pv) head slices: H*Pk, H*Pv
  explicit Layout(const AttentionDims& d)
      : B(d.batch),
        L(d.length),
        H(d.heads),
        Pk(d.key_dim),
        Pv(d.value_dim),
        ldk(d.heads * d.key_dim),
        ldv(d.heads * d.value_dim) {}
  // Offsets of head (b, h)'s first row in a (B, L, H, Pk) and a (B, L, H, Pv) tensor.
  int64_t KeyOffset(int64_t bh) const { return (bh / H) * L * ldk + (bh % H) * Pk; }
  int64_t ValueOffset(int64_t bh) const { return (bh / H) * L * ldv + (bh % H) * Pv; }
};

// Rows [i0, i1) of the head's causal weights into w (row t at w + t * ldw), columns [0, i1):
// softmax_s(scale q_t·k_s) or scale q_t·k_s for s <= t, and 0 for t < s < i1.
template <typename T>
void WeightRows(AttentionKind kind, T scale, const Layout& y, const T* q, const T* k, int64_t i0, int64_t i1,
                T* w, int64_t ldw) {
  Gemm(false, true, i1 - i0, i1, y.Pk, scale, q + i0 * y.ldk, y.ldk, k, y.ldk, T(0), w + i0 * ldw, ldw);
  for (int64_t t = i0; t < i1; ++t) {
    T* row = w + t * ldw;
    if (kind == AttentionKind::kSoftmax) {
      T row_max = row[0];
#pragma omp simd reduction(max : row_max)
      for (int64_t s = 0; s <= t; ++s) row_max = row[s] > row_max ? row[s] : row_max;
      T total = 0;
#pragma omp simd reduction(+ : total)
      for (int64_t s = 0; s <= t; ++s) {
        row[s] = Exp(row[s] - row_max);
        total += row[s];
      }
      const T inv = T(1) / total;
#pragma omp simd
      for (int64_t s = 0; s <= t; ++s) row[s] *= inv;
    }
    std::fill(row + t + 1, row + i1, T(0));
  }
}

// Turns rows [i0, i1) of dw (columns [0, i1)) into d loss / d (scale q_t·k_s), without the scale:
// w ∘ (dw - rowsum(w ∘ dw)) for softmax, dw for linear; 0 for t < s < i1.
template <typename T>
void ScoreGradRows(AttentionKind kind, const T* w, int64_t ldw, int64_t i0, int64_t i1, T* dw, int64_t lddw) {
  for (int64_t t = i0; t < i1; ++t) {
    T* drow = dw + t * lddw;
    if (kind == AttentionKind::kSoftmax) {
      const T* row = w + t * ldw;
      T dot = 0;
#pragma omp simd reduction(+ : dot)
      for (int64_t s = 0; s <= t; ++s) dot += row[s] * drow[s];
#pragma omp simd
      for (int64_t s = 0; s <= t; ++s) drow[s] = row[s] * (drow[s] - dot);
    }
    std::fill(drow + t + 1, drow + i1, T(0));
  }
}

// Runs body(bh, scratch) for every head, each thread with its own scratch buffers of the given sizes.
template <typename T, typename Body>
void ForEachHead(const Layout& y, std::vector<int64_t> scratch_sizes, const Body& body) {
  const int64_t heads = y.B * y.H;
  const bool parallel = heads > 1 && omp_get_max_threads() > 1;
  // Each head's GEMMs run on the thread that calls them: OpenBLAS's OpenMP build (the one we link)
  // does not split a call made inside a parallel region. (This had set openblas_set_num_threads(1)
  // first, which in that build also set OpenMP to one thread: the heads ran one after another.)
#pragma omp parallel if (parallel)
  {
    std::vector<std::vector<T>> scratch;
    for (int64_t size : scratch_sizes) scratch.emplace_back(size);
#pragma omp for schedule(static)
    for (int64_t bh = 0; bh < heads; ++bh) body(bh, scratch);
  }
}

// The head's slices: Q, K (L, Pk) with row stride ldk; V, dO (L, Pv) with row stride ldv.
template <typename T>
struct Head {
  const T *q, *k, *v, *dout;
  T *dq, *dk, *dv;
};

// ---- Quadratic form (softmax attention; linear attention when it is cheaper, see attention.cc).

template <typename T>
void QuadraticForward(AttentionKind kind, T scale, const Layout& y, const Head<T>& h, T* out, T* w) {
  const int64_t L = y.L;
  for (int64_t i0 = 0; i0 < L; i0 += kAttentionRowBlock) {
    const int64_t i1 = std::min(L, i0 + kAttentionRowBlock);
    WeightRows(kind, scale, y, h.q, h.k, i0, i1, w, L);
    Gemm(false, false, i1 - i0, y.Pv, i1, T(1), w + i0 * L, L, h.v, y.ldv, T(0), out + i0 * y.ldv, y.ldv);
  }
}

// dQ by row blocks while W and dS fill, then dK and dV by column blocks. w, ds: (L, L) scratch.
template <typename T>
void QuadraticBackward(AttentionKind kind, T scale, const Layout& y, const Head<T>& h, T* w, T* ds) {
  const int64_t L = y.L;
  for (int64_t i0 = 0; i0 < L; i0 += kAttentionRowBlock) {
    const int64_t i1 = std::min(L, i0 + kAttentionRowBlock), n = i1 - i0;
    WeightRows(kind, scale, y, h.q, h.k, i0, i1, w, L);
    Gemm(false, true, n, i1, y.Pv, T(1), h.dout + i0 * y.ldv, y.ldv, h.v, y.ldv, T(0), ds + i0 * L, L);  // dW
    ScoreGradRows(kind, w, L, i0, i1, ds, L);
    Gemm(false, false, n, y.Pk, i1, scale, ds + i0 * L, L, h.k, y.ldk, T(0), h.dq + i0 * y.ldk, y.ldk);
  }
  // Column block [j0, j1) of dS and W is nonzero only in rows t >= j0, all of which are filled
  // (row t's block ends at or after j1, and entries above the diagonal were zeroed).
  for (int64_t j0 = 0; j0 < L; j0 += kAttentionRowBlock) {
    const int64_t j1 = std::min(L, j0 + kAttentionRowBlock), n = j1 - j0;
    Gemm(true, false, n, y.Pk, L - j0, scale, ds + j0 * L + j0, L, h.q + j0 * y.ldk, y.ldk, T(0),
         h.dk + j0 * y.ldk, y.ldk);
    Gemm(true, false, n, y.Pv, L - j0, T(1), w + j0 * L + j0, L, h.dout + j0 * y.ldv, y.ldv, T(0),
         h.dv + j0 * y.ldv, y.ldv);
  }
}

// ---- Chunked form of linear attention. Per block i of C = kAttentionRowBlock rows:
//   out_i = D_i V_i + scale Q_i S_{i-1},   D_i = scale tril(Q_i K_iᵀ) (the diagonal block),
//   S_i = S_{i-1} + K_iᵀ V_i  (Pk, Pv)      (the recurrent state after block i)
// and backwards, with G_j = sum_{i>j} Q_iᵀ dO_i (Pk, Pv):
//   dQ_i = scale tril(dO_i V_iᵀ) K_i + scale dO_i S_{i-1}ᵀ
//   dK_j = scale tril(dO_j V_jᵀ)ᵀ Q_j + scale V_j G_jᵀ,   dV_j = D_jᵀ dO_j + scale K_j G_j.

// The block's masked scores scale tril(Q_i K_iᵀ) (rows [i0, i1), columns [i0, i1)) into d (ld C).
template <typename T>
void DiagonalBlock(T scale, const Layout& y, const T* a, int64_t lda, const T* b, int64_t ldb, int64_t kdim,
                   int64_t i0, int64_t i1, T* d) {
  const int64_t n = i1 - i0, C = kAttentionRowBlock;
  Gemm(false, true, n, n, kdim, scale, a + i0 * lda, lda, b + i0 * ldb, ldb, T(0), d, C);
  for (int64_t r = 0; r < n; ++r) std::fill(d + r * C + r + 1, d + r * C + n, T(0));
}

// s: (Pk, Pv) state; d: (C, C) block.
template <typename T>
void ChunkedForward(T scale, const Layout& y, const Head<T>& h, T* out, T* s, T* d) {
  const int64_t L = y.L, C = kAttentionRowBlock;
  for (int64_t i0 = 0; i0 < L; i0 += C) {
    const int64_t i1 = std::min(L, i0 + C), n = i1 - i0;
    T* oi = out + i0 * y.ldv;
    DiagonalBlock(scale, y, h.q, y.ldk, h.k, y.ldk, y.Pk, i0, i1, d);
    Gemm(false, false, n, y.Pv, n, T(1), d, C, h.v + i0 * y.ldv, y.ldv, T(0), oi, y.ldv);
    if (i0 > 0) Gemm(false, false, n, y.Pv, y.Pk, scale, h.q + i0 * y.ldk, y.ldk, s, y.Pv, T(1), oi, y.ldv);
    if (i1 < L) {
      Gemm(true, false, y.Pk, y.Pv, n, T(1), h.k + i0 * y.ldk, y.ldk, h.v + i0 * y.ldv, y.ldv, T(i0 > 0), s,
           y.Pv);
    }
  }
}

// s: (Pk, Pv) state, then G; d, dd: (L, C) diagonal blocks of D and of tril(dO Vᵀ), block i at row i0.
template <typename T>
void ChunkedBackward(T scale, const Layout& y, const Head<T>& h, T* s, T* d, T* dd) {
  const int64_t L = y.L, C = kAttentionRowBlock;
  for (int64_t i0 = 0; i0 < L; i0 += C) {
    const int64_t i1 = std::min(L, i0 + C), n = i1 - i0;
    T* dqi = h.dq + i0 * y.ldk;
    DiagonalBlock(scale, y, h.q, y.ldk, h.k, y.ldk, y.Pk, i0, i1, d + i0 * C);
    DiagonalBlock(T(1), y, h.dout, y.ldv, h.v, y.ldv, y.Pv, i0, i1, dd + i0 * C);
    Gemm(false, false, n, y.Pk, n, scale, dd + i0 * C, C, h.k + i0 * y.ldk, y.ldk, T(0), dqi, y.ldk);
    if (i0 > 0)
      Gemm(false, true, n, y.Pk, y.Pv, scale, h.dout + i0 * y.ldv, y.ldv, s, y.Pv, T(1), dqi, y.ldk);
    if (i1 < L) {
      Gemm(true, false, y.Pk, y.Pv, n, T(1), h.k + i0 * y.ldk, y.ldk, h.v + i0 * y.ldv, y.ldv, T(i0 > 0), s,
           y.Pv);
    }
  }
  const int64_t last = L == 0 ? 0 : (L - 1) / C * C;
  for (int64_t j0 = last; j0 >= 0 && L > 0; j0 -= C) {  // s now holds G_j
    const int64_t j1 = std::min(L, j0 + C), n = j1 - j0;
    T *dkj = h.dk + j0 * y.ldk, *dvj = h.dv + j0 * y.ldv;
    Gemm(true, false, n, y.Pk, n, scale, dd + j0 * C, C, h.q + j0 * y.ldk, y.ldk, T(0), dkj, y.ldk);
    Gemm(true, false, n, y.Pv, n, T(1), d + j0 * C, C, h.dout + j0 * y.ldv, y.ldv, T(0), dvj, y.ldv);
    if (j1 < L) {
      Gemm(false, true, n, y.Pk, y.Pv, scale, h.v + j0 * y.ldv, y.ldv, s, y.Pv, T(1), dkj, y.ldk);
      Gemm(false, false, n, y.Pv, y.Pk, scale, h.k + j0 * y.ldk, y.ldk, s, y.Pv, T(1), dvj, y.ldv);
    }
    if (j0 > 0) {
      Gemm(true, false, y.Pk, y.Pv, n, T(1), h.q + j0 * y.ldk, y.ldk, h.dout + j0 * y.ldv, y.ldv, T(j1 < L),
           s, y.Pv);
    }
  }
}

template <typename T>
void Forward(AttentionKind kind, T scale, const Layout& y, const AttentionDims& dims, const T* q, const T* k,
             const T* v, T* out) {
  const bool chunked = kind == AttentionKind::kLinear && LinearAttentionUsesChunkedForm(dims);
  const int64_t C = kAttentionRowBlock;
  std::vector<int64_t> sizes =
      chunked ? std::vector<int64_t>{y.Pk * y.Pv, C * C} : std::vector<int64_t>{y.L * y.L};
  ForEachHead<T>(y, sizes, [&](int64_t bh, std::vector<std::vector<T>>& scratch) {
    const Head<T> h{
        q + y.KeyOffset(bh), k + y.KeyOffset(bh), v + y.ValueOffset(bh), nullptr, nullptr, nullptr, nullptr};
    if (chunked) {
      ChunkedForward(scale, y, h, out + y.ValueOffset(bh), scratch[0].data(), scratch[1].data());
    } else {
      QuadraticForward(kind, scale, y, h, out + y.ValueOffset(bh), scratch[0].data());
    }
  });
}

template <typename T>
void Backward(AttentionKind kind, T scale, const Layout& y, const AttentionDims& dims, const T* q, const T* k,
              const T* v, const T* dout, T* dq, T* dk, T* dv) {
  const bool chunked = kind == AttentionKind::kLinear && LinearAttentionUsesChunkedForm(dims);
  const int64_t C = kAttentionRowBlock, Lc = (y.L + C - 1) / C * C;
  std::vector<int64_t> sizes = chunked ? std::vector<int64_t>{y.Pk * y.Pv, Lc * C, Lc * C}
                                       : std::vector<int64_t>{y.L * y.L, y.L * y.L};
  ForEachHead<T>(y, sizes, [&](int64_t bh, std::vector<std::vector<T>>& scratch) {
    const Head<T> h{q + y.KeyOffset(bh),      k + y.KeyOffset(bh),  v + y.ValueOffset(bh),
                    dout + y.ValueOffset(bh), dq + y.KeyOffset(bh), dk + y.KeyOffset(bh),
                    dv + y.ValueOffset(bh)};
    if (chunked) {
      ChunkedBackward(scale, y, h, scratch[0].data(), scratch[1].data(), scratch[2].data());
    } else {
      QuadraticBackward(kind, scale, y, h, scratch[0].data(), scratch[1].data());
    }
  });
}

template <typename T>
void WeightsForward(AttentionKind kind, T scale, const Layout& y, const T* q, const T* k, T* out) {
  const int64_t L = y.L;
  ForEachHead<T>(y, {}, [&](int64_t bh, std::vector<std::vector<T>>&) {
    T* w = out + bh * L * L;
    for (int64_t i0 = 0; i0 < L; i0 += kAttentionRowBlock) {
      const int64_t i1 = std::min(L, i0 + kAttentionRowBlock);
      WeightRows(kind, scale, y, q + y.KeyOffset(bh), k + y.KeyOffset(bh), i0, i1, w, L);
      for (int64_t t = i0; t < i1; ++t) std::fill(w + t * L + i1, w + (t + 1) * L, T(0));
    }
  });
}

template <typename T>
void WeightsBackward(AttentionKind kind, T scale, const Layout& y, const T* q, const T* k, const T* dweights,
                     T* dq, T* dk) {
  const int64_t L = y.L;
  ForEachHead<T>(y, {L * L, L * L}, [&](int64_t bh, std::vector<std::vector<T>>& scratch) {
    const T *qh = q + y.KeyOffset(bh), *kh = k + y.KeyOffset(bh), *dwh = dweights + bh * L * L;
    T *dqh = dq + y.KeyOffset(bh), *dkh = dk + y.KeyOffset(bh);
    T *w = scratch[0].data(), *ds = scratch[1].data();
    for (int64_t i0 = 0; i0 < L; i0 += kAttentionRowBlock) {
      const int64_t i1 = std::min(L, i0 + kAttentionRowBlock);
      if (kind == AttentionKind::kSoftmax) WeightRows(kind, scale, y, qh, kh, i0, i1, w, L);
      for (int64_t t = i0; t < i1; ++t) std::copy(dwh + t * L, dwh + t * L + i1, ds + t * L);
      ScoreGradRows(kind, w, L, i0, i1, ds, L);
      Gemm(false, false, i1 - i0, y.Pk, i1, scale, ds + i0 * L, L, kh, y.ldk, T(0), dqh + i0 * y.ldk, y.ldk);
    }
    for (int64_t j0 = 0; j0 < L; j0 += kAttentionRowBlock) {
      const int64_t j1 = std::min(L, j0 + kAttentionRowBlock);
      Gemm(true, false, j1 - j0, y.Pk, L - j0, scale, ds + j0 * L + j0, L, qh + j0 * y.ldk, y.ldk, T(0),
           dkh + j0 * y.ldk, y.ldk);
    }
  });
}

}  // namespace

absl::Status CausalAttentionOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const AttentionDims dims = GetAttentionDims(in[0].meta(), &in[2].meta());
  const Layout y(dims);
  if (in[0].dtype() == DType::kF64) {
    Forward<double>(kind(), scale(), y, dims, in[0].data<double>(), in[1].data<double>(),
                    in[2].data<double>(), out[0].mutable_data<double>());
  } else {
    Forward<float>(kind(), static_cast<float>(scale()), y, dims, in[0].data<float>(), in[1].data<float>(),
                   in[2].data<float>(), out[0].mutable_data<float>());
  }
  return absl::OkStatus();
}

absl::Status CausalAttentionBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                                   absl::Span<const Tensor> out) const {
  const AttentionDims dims = GetAttentionDims(in[0].meta(), &in[2].meta());
  const Layout y(dims);
  if (in[0].dtype() == DType::kF64) {
    Backward<double>(kind(), scale(), y, dims, in[0].data<double>(), in[1].data<double>(),
                     in[2].data<double>(), in[3].data<double>(), out[0].mutable_data<double>(),
                     out[1].mutable_data<double>(), out[2].mutable_data<double>());
  } else {
    Backward<float>(kind(), static_cast<float>(scale()), y, dims, in[0].data<float>(), in[1].data<float>(),
                    in[2].data<float>(), in[3].data<float>(), out[0].mutable_data<float>(),
                    out[1].mutable_data<float>(), out[2].mutable_data<float>());
  }
  return absl::OkStatus();
}

absl::Status CausalAttentionWeightsOp::ComputeCpu(absl::Span<const Tensor> in,
                                                  absl::Span<const Tensor> out) const {
  const Layout y(GetAttentionDims(in[0].meta(), nullptr));
  if (in[0].dtype() == DType::kF64) {
    WeightsForward<double>(kind(), scale(), y, in[0].data<double>(), in[1].data<double>(),
                           out[0].mutable_data<double>());
  } else {
    WeightsForward<float>(kind(), static_cast<float>(scale()), y, in[0].data<float>(), in[1].data<float>(),
                          out[0].mutable_data<float>());
  }
  return absl::OkStatus();
}

absl::Status CausalAttentionWeightsBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                                          absl::Span<const Tensor> out) const {
  const Layout y(GetAttentionDims(in[0].meta(), nullptr));
  if (in[0].dtype() == DType::kF64) {
    WeightsBackward<double>(kind(), scale(), y, in[0].data<double>(), in[1].data<double>(),
                            in[2].data<double>(), out[0].mutable_data<double>(),
                            out[1].mutable_data<double>());
  } else {
    WeightsBackward<float>(kind(), static_cast<float>(scale()), y, in[0].data<float>(), in[1].data<float>(),
                           in[2].data<float>(), out[0].mutable_data<float>(), out[1].mutable_data<float>());
  }
  return absl::OkStatus();
}

}  // namespace mimetic::ops
