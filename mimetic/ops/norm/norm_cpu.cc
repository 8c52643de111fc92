// Norm family: the fast CPU kernels. Rows are independent, so forward kernels run OpenMP over rows
// with contiguous, vectorised loops over the last dimension. Backward kernels also reduce dweight
// (and dbias) over rows: the rows are cut into a fixed number of blocks that does not depend on the
// thread count, each block sums into its own partial buffer, and the partials are added in block
// order, so the result has the same bits for any OMP_NUM_THREADS.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "mimetic/ops/cpu/fast_math.h"
#include "mimetic/ops/norm/norm.h"

namespace mimetic::ops {
namespace {

using core::DType;

// Forward loops smaller than this many elements stay on one thread (fork/join costs more).
constexpr int64_t kParallelMinElements = 1 << 15;
// Number of row blocks of a backward reduction (fewer when there are fewer rows).
constexpr int64_t kReduceBlocks = 64;

int64_t NumBlocks(int64_t rows) { return std::min(rows, kReduceBlocks); }
int64_t BlockBegin(int64_t block, int64_t blocks, int64_t rows) { return block * rows / blocks; }

// sum_b partial[b * d + i] in block order -> out[i]; zeros when there are no blocks.
template <typename T>
void SumBlocks(const std::vector<T>& partial, int64_t blocks, int64_t d, T* out) {
  for (int64_t i = 0; i < d; ++i) out[i] = T(0);
  for (int64_t b = 0; b < blocks; ++b) {
    const T* p = partial.data() + b * d;
    for (int64_t i = 0; i < d; ++i) out[i] += p[i];
  }
}

// sigmoid: fast_math's vectorisable one for f32 (libm's expf is a scalar call without -ffast-math).
inline float SigmoidVec(float z) { return fast_math::Sigmoid(z); }
inline double SigmoidVec(double z) { return 1.0 / (1.0 + std::exp(-z)); }

template <typename T>
void RmsNormFast(const T* x, const T* w, T* y, int64_t rows, int64_t d, T eps) {
  const T inv_d = T(1) / T(d);
#pragma omp parallel for schedule(static) if (rows * d >= kParallelMinElements)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    T ss = 0;
#pragma omp simd reduction(+ : ss)
    for (int64_t i = 0; i < d; ++i) ss += xr[i] * xr[i];
    const T rstd = T(1) / std::sqrt(ss * inv_d + eps);
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * rstd * w[i];
  }
}

template <typename T>
void RmsNormBackwardFast(const T* x, const T* w, const T* dy, T* dx, T* dw, int64_t rows, int64_t d, T eps) {
  const T inv_d = T(1) / T(d);
  const int64_t blocks = NumBlocks(rows);
  std::vector<T> partial(blocks * d);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    T* acc = partial.data() + b * d;
    std::fill(acc, acc + d, T(0));
    for (int64_t r = BlockBegin(b, blocks, rows); r < BlockBegin(b + 1, blocks, rows); ++r) {
      const T* xr = x + r * d;
      const T* gr = dy + r * d;
      T* dxr = dx + r * d;
      T ss = 0, dot = 0;
#pragma omp simd reduction(+ : ss, dot)
      for (int64_t i = 0; i < d; ++i) {
        ss += xr[i] * xr[i];
        dot += gr[i] * w[i] * xr[i];
      }
      const T rstd = T(1) / std::sqrt(ss * inv_d + eps);
      const T c = rstd * rstd * rstd * dot * inv_d;
#pragma omp simd
      for (int64_t i = 0; i < d; ++i) {
        dxr[i] = rstd * gr[i] * w[i] - xr[i] * c;
        acc[i] += gr[i] * xr[i] * rstd;
      }
    }
  }
  SumBlocks(partial, blocks, d, dw);
}

template <typename T>
void LayerNormFast(const T* x, const T* w, const T* bias, T* y, int64_t rows, int64_t d, T eps) {
  const T inv_d = T(1) / T(d);
#pragma omp parallel for schedule(static) if (rows * d >= kParallelMinElements)
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    T* yr = y + r * d;
    T sum = 0, var = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t i = 0; i < d; ++i) sum += xr[i];
    const T mean = sum * inv_d;
#pragma omp simd reduction(+ : var)
    for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const T rstd = T(1) / std::sqrt(var * inv_d + eps);
#pragma omp simd
    for (int64_t i = 0; i < d; ++i) yr[i] = (xr[i] - mean) * rstd * w[i] + bias[i];
  }
}

template <typename T>
void LayerNormBackwardFast(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, int64_t rows, int64_t d,
                           T eps) {
  const T inv_d = T(1) / T(d);
  const int64_t blocks = NumBlocks(rows);
  std::vector<T> partial_w(blocks * d), partial_b(blocks * d);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    T* acc_w = partial_w.data() + b * d;
    T* acc_b = partial_b.data() + b * d;
    std::fill(acc_w, acc_w + d, T(0));
    std::fill(acc_b, acc_b + d, T(0));
    for (int64_t r = BlockBegin(b, blocks, rows); r < BlockBegin(b + 1, blocks, rows); ++r) {
      const T* xr = x + r * d;
      const T* gr = dy + r * d;
      T* dxr = dx + r * d;
      T sum = 0, var = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t i = 0; i < d; ++i) sum += xr[i];
      const T mean = sum * inv_d;
#pragma omp simd reduction(+ : var)
      for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
      const T rstd = T(1) / std::sqrt(var * inv_d + eps);
      T mg = 0, mgx = 0;
#pragma omp simd reduction(+ : mg, mgx)
      for (int64_t i = 0; i < d; ++i) {
        const T g = gr[i] * w[i];
        mg += g;
        mgx += g * (xr[i] - mean);
      }
      mg *= inv_d;
      mgx *= inv_d * rstd;
#pragma omp simd
      for (int64_t i = 0; i < d; ++i) {
        const T xhat = (xr[i] - mean) * rstd;
        dxr[i] = rstd * (gr[i] * w[i] - mg - xhat * mgx);
        acc_w[i] += gr[i] * xhat;
        acc_b[i] += gr[i];
      }
    }
  }
  SumBlocks(partial_w, blocks, d, dw);
  SumBlocks(partial_b, blocks, d, db);
}

template <typename T>
void GatedRmsNormFast(const T* y, const T* z, const T* w, T* out, int64_t rows, int64_t e, int64_t g, T eps) {
  const T inv_g = T(1) / T(g);
#pragma omp parallel for schedule(static) if (rows * e >= kParallelMinElements)
  for (int64_t r = 0; r < rows; ++r) {
    const T* yr = y + r * e;
    const T* zr = z + r * e;
    T* o = out + r * e;
    // n = y silu(z), written to the output row first and normalised in place per group.
#pragma omp simd
    for (int64_t i = 0; i < e; ++i) o[i] = yr[i] * zr[i] * SigmoidVec(zr[i]);
    for (int64_t g0 = 0; g0 < e; g0 += g) {
      T* og = o + g0;
      T ss = 0;
#pragma omp simd reduction(+ : ss)
      for (int64_t i = 0; i < g; ++i) ss += og[i] * og[i];
      const T rstd = T(1) / std::sqrt(ss * inv_g + eps);
      const T* wg = w + g0;
#pragma omp simd
      for (int64_t i = 0; i < g; ++i) og[i] = og[i] * rstd * wg[i];
    }
  }
}

template <typename T>
void GatedRmsNormBackwardFast(const T* y, const T* z, const T* w, const T* dout, T* dy, T* dz, T* dw,
                              int64_t rows, int64_t e, int64_t g, T eps) {
  const T inv_g = T(1) / T(g);
  const int64_t blocks = NumBlocks(rows);
  std::vector<T> partial(blocks * e);
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b) {
    T* acc = partial.data() + b * e;
    std::fill(acc, acc + e, T(0));
    std::vector<T> n(e), s(e);  // this row's y silu(z) and sigmoid(z)
    for (int64_t r = BlockBegin(b, blocks, rows); r < BlockBegin(b + 1, blocks, rows); ++r) {
      const T* yr = y + r * e;
      const T* zr = z + r * e;
      const T* gr = dout + r * e;
      T* dyr = dy + r * e;
      T* dzr = dz + r * e;
      T* np = n.data();
      T* sp = s.data();
#pragma omp simd
      for (int64_t i = 0; i < e; ++i) {
        sp[i] = SigmoidVec(zr[i]);
        np[i] = yr[i] * zr[i] * sp[i];
      }
      for (int64_t g0 = 0; g0 < e; g0 += g) {
        T ss = 0, dot = 0;
#pragma omp simd reduction(+ : ss, dot)
        for (int64_t i = g0; i < g0 + g; ++i) {
          ss += np[i] * np[i];
          dot += gr[i] * w[i] * np[i];
        }
        const T rstd = T(1) / std::sqrt(ss * inv_g + eps);
        const T c = rstd * rstd * rstd * dot * inv_g;
#pragma omp simd
        for (int64_t i = g0; i < g0 + g; ++i) {
          const T dn = rstd * gr[i] * w[i] - np[i] * c;
          dyr[i] = dn * zr[i] * sp[i];
          dzr[i] = dn * yr[i] * sp[i] * (T(1) + zr[i] * (T(1) - sp[i]));
          acc[i] += gr[i] * np[i] * rstd;
        }
      }
    }
  }
  SumBlocks(partial, blocks, e, dw);
}

int64_t Rows(const Tensor& x) { return x.numel() / x.dim(-1); }

}  // namespace

absl::Status RmsNormOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    RmsNormFast<double>(in[0].data<double>(), in[1].data<double>(), out[0].mutable_data<double>(), rows, d,
                        eps_);
  } else {
    RmsNormFast<float>(in[0].data<float>(), in[1].data<float>(), out[0].mutable_data<float>(), rows, d,
                       static_cast<float>(eps_));
  }
  return absl::OkStatus();
}

absl::Status RmsNormBackwardOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    RmsNormBackwardFast<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                                out[0].mutable_data<double>(), out[1].mutable_data<double>(), rows, d, eps_);
  } else {
    RmsNormBackwardFast<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                               out[0].mutable_data<float>(), out[1].mutable_data<float>(), rows, d,
                               static_cast<float>(eps_));
  }
  return absl::OkStatus();
}

absl::Status LayerNormOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    LayerNormFast<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                          out[0].mutable_data<double>(), rows, d, eps_);
  } else {
    LayerNormFast<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                         out[0].mutable_data<float>(), rows, d, static_cast<float>(eps_));
  }
  return absl::OkStatus();
}

absl::Status LayerNormBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                             absl::Span<const Tensor> out) const {
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    LayerNormBackwardFast<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                                  out[0].mutable_data<double>(), out[1].mutable_data<double>(),
                                  out[2].mutable_data<double>(), rows, d, eps_);
  } else {
    LayerNormBackwardFast<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                                 out[0].mutable_data<float>(), out[1].mutable_data<float>(),
                                 out[2].mutable_data<float>(), rows, d, static_cast<float>(eps_));
  }
  return absl::OkStatus();
}

absl::Status GatedRmsNormOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int64_t e = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    GatedRmsNormFast<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                             out[0].mutable_data<double>(), rows, e, group_size_, eps_);
  } else {
    GatedRmsNormFast<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                            out[0].mutable_data<float>(), rows, e, group_size_, static_cast<float>(eps_));
  }
  return absl::OkStatus();
}

absl::Status GatedRmsNormBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                                absl::Span<const Tensor> out) const {
  const int64_t e = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    GatedRmsNormBackwardFast<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                                     in[3].data<double>(), out[0].mutable_data<double>(),
                                     out[1].mutable_data<double>(), out[2].mutable_data<double>(), rows, e,
                                     group_size_, eps_);
  } else {
    GatedRmsNormBackwardFast<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                                    in[3].data<float>(), out[0].mutable_data<float>(),
                                    out[1].mutable_data<float>(), out[2].mutable_data<float>(), rows, e,
                                    group_size_, static_cast<float>(eps_));
  }
  return absl::OkStatus();
}

}  // namespace mimetic::ops
