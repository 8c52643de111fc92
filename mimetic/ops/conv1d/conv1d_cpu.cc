// Causal depthwise conv1d: the fast CPU kernels (conv1d.cc holds shape inference, the reference and
// the VJP).
//
// The weight is transposed to (K, C) so every tap is a contiguous row; each output row
// (b, t) is bias + sum_k wT[k] * x[b, t-(K-1)+k], one vectorised pass over C with the taps unrolled
// (K = 2, 3, 4 are compiled specially), and rows run under OpenMP. The backward reduction over (b, t) for
// dweight and dbias cuts the B*L rows into a fixed number of blocks (independent of the thread count) whose
// partial sums are added in block order, so results have the same bits for any OMP_NUM_THREADS.
//
// The SiLU-fused variant (CausalConv1dSilu) writes each row's conv (kept for the backward) and its
// SiLU (silu.h's formulas) while the row is in cache; its backward forms a block's dout · SiLU'(conv)
// rows in scratch and runs the plain backward on them: the values Silu(CausalConv1d(...)) and its VJP
// (Mul(g, SiluGrad(conv)) into CausalConv1dBackward) give, without the activation's separate passes.
#include <algorithm>
#include <vector>

#include "mimetic/ops/conv1d/conv1d.h"
#include "mimetic/ops/elementwise/silu.h"

namespace mimetic::ops {
namespace {

using core::DType;

constexpr int64_t kParallelMinElements = 1 << 15;
constexpr int64_t kReduceBlocks = 64;

// (C, K) -> (K, C).
template <typename T>
std::vector<T> TransposeWeight(const T* w, int64_t c, int64_t k) {
  std::vector<T> wt(k * c);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t j = 0; j < k; ++j) wt[j * c + ch] = w[ch * k + j];
  }
  return wt;
}

// kK > 0: K known at compile time (the tap loops unroll into one fused pass over C); kK = 0: runtime
// k. Rows whose taps all lie inside the sequence take the fused pass; the first and last K-1 rows
// take per-tap passes that skip the taps outside. Both add the taps in ascending order.
template <typename T, int kK>
inline void ConvRow(const T* xt, const T* wt, const T* bias, int64_t t, int64_t c, int64_t k, T* o) {
  if (t >= k - 1) {
#pragma omp simd
    for (int64_t ch = 0; ch < c; ++ch) {
      T acc = bias[ch];
      for (int64_t j = 0; j < k; ++j) acc += wt[j * c + ch] * xt[(j - (k - 1)) * c + ch];
      o[ch] = acc;
    }
    return;
  }
#pragma omp simd
  for (int64_t ch = 0; ch < c; ++ch) o[ch] = bias[ch];
  for (int64_t j = k - 1 - t; j < k; ++j) {
    const T* xs = xt + (j - (k - 1)) * c;
    const T* wj = wt + j * c;
#pragma omp simd
    for (int64_t ch = 0; ch < c; ++ch) o[ch] += wj[ch] * xs[ch];
  }
}

// Output row (b, t) by ConvRow (xt: the current token, read by tap K-1); with kSilu the conv goes to
// pre and its SiLU to out.
template <typename T, int kK, bool kSilu>
void ConvFast(const T* x, const T* wt, const T* bias, T* out, T* pre, int64_t nb, int64_t l, int64_t c,
              int64_t k_rt) {
  const int64_t k = kK > 0 ? kK : k_rt;
#pragma omp parallel for collapse(2) schedule(static) if (nb * l * c >= kParallelMinElements)
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t t = 0; t < l; ++t) {
      T* o = out + (b * l + t) * c;
      if constexpr (kSilu) {
        T* p = pre + (b * l + t) * c;
        ConvRow<T, kK>(x + (b * l + t) * c, wt, bias, t, c, k, p);
#pragma omp simd
        for (int64_t ch = 0; ch < c; ++ch) o[ch] = silu::Fast(p[ch]);
      } else {
        ConvRow<T, kK>(x + (b * l + t) * c, wt, bias, t, c, k, o);
      }
    }
  }
}

// Same structure as ConvFast. dx of row t reads dout rows t .. t+K-1 (tap K-1-j of row t+j);
// dweight and dbias accumulate into per-block partials: the B*L rows are cut into a fixed number of
// blocks and the partials are added in block order. With silu_pre (the SiLU-fused op's conv output),
// dout is SiLU's cotangent: each block first forms g = dout · SiLU'(conv) for its rows and the K-1
// after in scratch, and reads g from there.
template <typename T, int kK>
void ConvBackwardFast(const T* x, const T* wt, const T* silu_pre, const T* dout, T* dx, T* dw, T* db,
                      int64_t nb, int64_t l, int64_t c, int64_t k_rt) {
  const int64_t k = kK > 0 ? kK : k_rt;
  const int64_t rows = nb * l;
  const int64_t blocks = std::min(rows, kReduceBlocks);
  // Per block: K rows of dweight (transposed, (K, C)) then one row of dbias.
  const int64_t stride = (k + 1) * c;
  std::vector<T> partial(blocks * stride);
#pragma omp parallel for schedule(static)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    T* acc = partial.data() + blk * stride;
    T* acc_b = acc + k * c;
    std::fill(acc, acc + stride, T(0));
    const int64_t begin = blk * rows / blocks, end = (blk + 1) * rows / blocks;
    // With silu_pre: g of rows begin .. end + K - 2, every element written below (new T[], not a
    // vector, which would zero it first).
    std::unique_ptr<T[]> gs;
    if (silu_pre != nullptr) {
      const int64_t ext = std::min(rows, end + k - 1);
      gs.reset(new T[(ext - begin) * c]);
      const T* dr = dout + begin * c;
      const T* pr = silu_pre + begin * c;
#pragma omp simd
      for (int64_t i = 0; i < (ext - begin) * c; ++i) gs[i] = dr[i] * silu::FastGrad(pr[i]);
    }
    for (int64_t r = begin; r < end; ++r) {
      const int64_t t = r % l;
      const T* g = silu_pre != nullptr ? &gs[(r - begin) * c] : dout + r * c;
      const T* xt = x + r * c;
      T* dxr = dx + r * c;
      if (t >= k - 1 && t + k - 1 < l) {
#pragma omp simd
        for (int64_t ch = 0; ch < c; ++ch) {
          T d = 0;
          for (int64_t j = 0; j < k; ++j) d += wt[j * c + ch] * g[((k - 1) - j) * c + ch];
          dxr[ch] = d;
          for (int64_t j = 0; j < k; ++j) acc[j * c + ch] += g[ch] * xt[(j - (k - 1)) * c + ch];
          acc_b[ch] += g[ch];
        }
        continue;
      }
      // dx: taps whose output position t + (K-1) - j lies inside the sequence.
#pragma omp simd
      for (int64_t ch = 0; ch < c; ++ch) dxr[ch] = T(0);
      for (int64_t j = std::max<int64_t>(0, t + k - l); j < k; ++j) {
        const T* gu = g + ((k - 1) - j) * c;
        const T* wj = wt + j * c;
#pragma omp simd
        for (int64_t ch = 0; ch < c; ++ch) dxr[ch] += wj[ch] * gu[ch];
      }
      // dweight, dbias: this output row against the inputs it read.
      for (int64_t j = std::max<int64_t>(0, k - 1 - t); j < k; ++j) {
        const T* xs = xt + (j - (k - 1)) * c;
        T* aj = acc + j * c;
#pragma omp simd
        for (int64_t ch = 0; ch < c; ++ch) aj[ch] += g[ch] * xs[ch];
      }
#pragma omp simd
      for (int64_t ch = 0; ch < c; ++ch) acc_b[ch] += g[ch];
    }
  }
  std::vector<T> total(stride, T(0));
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const T* p = partial.data() + blk * stride;
    for (int64_t i = 0; i < stride; ++i) total[i] += p[i];
  }
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t j = 0; j < k; ++j) dw[ch * k + j] = total[j * c + ch];
    db[ch] = total[k * c + ch];
  }
}

template <typename T, bool kSilu>
void ConvFastDispatch(const T* x, const T* w, const T* bias, T* out, T* pre, int64_t nb, int64_t l, int64_t c,
                      int64_t k) {
  const std::vector<T> wt = TransposeWeight(w, c, k);
  switch (k) {
    case 2:
      return ConvFast<T, 2, kSilu>(x, wt.data(), bias, out, pre, nb, l, c, k);
    case 3:
      return ConvFast<T, 3, kSilu>(x, wt.data(), bias, out, pre, nb, l, c, k);
    case 4:
      return ConvFast<T, 4, kSilu>(x, wt.data(), bias, out, pre, nb, l, c, k);
    default:
      return ConvFast<T, 0, kSilu>(x, wt.data(), bias, out, pre, nb, l, c, k);
  }
}

// silu_pre: null for the plain conv, the conv output for the SiLU-fused op.
template <typename T>
void ConvBackwardFastDispatch(const T* x, const T* w, const T* silu_pre, const T* dout, T* dx, T* dw, T* db,
                              int64_t nb, int64_t l, int64_t c, int64_t k) {
  const std::vector<T> wt = TransposeWeight(w, c, k);
  switch (k) {
    case 2:
      return ConvBackwardFast<T, 2>(x, wt.data(), silu_pre, dout, dx, dw, db, nb, l, c, k);
    case 3:
      return ConvBackwardFast<T, 3>(x, wt.data(), silu_pre, dout, dx, dw, db, nb, l, c, k);
    case 4:
      return ConvBackwardFast<T, 4>(x, wt.data(), silu_pre, dout, dx, dw, db, nb, l, c, k);
    default:
      return ConvBackwardFast<T, 0>(x, wt.data(), silu_pre, dout, dx, dw, db, nb, l, c, k);
  }
}

// out: (out) or, with silu, (SiLU(conv), conv).
template <typename T>
void ForwardCpu(bool silu, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t nb = x.dim(0), l = x.dim(1), c = x.dim(2), k = in[1].dim(1);
  const T *xp = x.data<T>(), *w = in[1].data<T>(), *bias = in[2].data<T>();
  if (silu) {
    ConvFastDispatch<T, true>(xp, w, bias, out[0].mutable_data<T>(), out[1].mutable_data<T>(), nb, l, c, k);
  } else {
    ConvFastDispatch<T, false>(xp, w, bias, out[0].mutable_data<T>(), nullptr, nb, l, c, k);
  }
}

// in: (x, weight, dout), or (x, weight, conv, dout) with silu.
template <typename T>
void BackwardCpu(bool silu, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t nb = x.dim(0), l = x.dim(1), c = x.dim(2), k = in[1].dim(1);
  ConvBackwardFastDispatch<T>(x.data<T>(), in[1].data<T>(), silu ? in[2].data<T>() : nullptr,
                              in[silu ? 3 : 2].data<T>(), out[0].mutable_data<T>(), out[1].mutable_data<T>(),
                              out[2].mutable_data<T>(), nb, l, c, k);
}

}  // namespace

absl::Status CausalConv1dOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ForwardCpu<double>(silu_, in, out);
  } else {
    ForwardCpu<float>(silu_, in, out);
  }
  return absl::OkStatus();
}

absl::Status CausalConv1dBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                                absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    BackwardCpu<double>(silu_, in, out);
  } else {
    BackwardCpu<float>(silu_, in, out);
  }
  return absl::OkStatus();
}

}  // namespace mimetic::ops
