// MaskedCrossEntropy's fast f32 path: vectorised exp, OpenMP over rows (cross_entropy.cc holds shape
// inference, the reference, which also serves f64, and the VJP).
#include <algorithm>
#include <cmath>
#include <vector>

#include "mimetic/core/status.h"
#include "mimetic/ops/cpu/fast_math.h"
#include "mimetic/ops/cross_entropy/cross_entropy.h"

namespace mimetic::ops {
namespace {

using core::DType;

// Below this many logits a parallel region costs more than it saves.
constexpr int64_t kParallelElements = 1 << 15;

// exp(x) for x <= 0 (the max-subtracted logits): fast_math's branch-free one, so loops over V vectorise.
using fast_math::Exp;

inline float RowMax(const float* x, int64_t v) {
  float mx = -INFINITY;
#pragma omp simd reduction(max : mx)
  for (int64_t i = 0; i < v; ++i) mx = std::max(mx, x[i]);
  return mx;
}

absl::Status FastForward(absl::Span<const Tensor> in, const Tensor& out) {
  const int64_t v = in[0].dim(-1);
  const int64_t rows = in[1].numel();
  ASSIGN_OR_RETURN(const double mask_sum, internal::CrossEntropyMaskSum(in[1], in[2], v));
  const float* x = in[0].data<float>();
  const int32_t* t = in[1].data<int32_t>();
  const float* m = in[2].data<float>();
  // Per-row terms, summed serially afterwards: a fixed order, so the same bits every run.
  std::vector<double> terms(rows);
#pragma omp parallel for schedule(static) if (rows * v >= kParallelElements)
  for (int64_t r = 0; r < rows; ++r) {
    if (m[r] == 0.f) {
      terms[r] = 0;
      continue;
    }
    const float* row = x + r * v;
    const float mx = RowMax(row, v);
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < v; ++i) s += Exp(row[i] - mx);
    terms[r] = static_cast<double>(m[r]) *
               (static_cast<double>(mx) + std::log(static_cast<double>(s)) - static_cast<double>(row[t[r]]));
  }
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) total += terms[r];
  out.mutable_data<float>()[0] = static_cast<float>(mask_sum == 0 ? 0.0 : total / mask_sum);
  return absl::OkStatus();
}

absl::Status FastBackward(absl::Span<const Tensor> in, const Tensor& out) {
  const int64_t v = in[0].dim(-1);
  const int64_t rows = in[1].numel();
  ASSIGN_OR_RETURN(const double mask_sum, internal::CrossEntropyMaskSum(in[1], in[2], v));
  const float* x = in[0].data<float>();
  const int32_t* t = in[1].data<int32_t>();
  const float* m = in[2].data<float>();
  const double scale = mask_sum == 0 ? 0.0 : static_cast<double>(in[3].data<float>()[0]) / mask_sum;
  float* dx = out.mutable_data<float>();
#pragma omp parallel for schedule(static) if (rows * v >= kParallelElements)
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = x + r * v;
    float* drow = dx + r * v;
    if (m[r] == 0.f || scale == 0) {
      std::fill(drow, drow + v, 0.f);
      continue;
    }
    // drow = exp(row - max) first, then one scaling pass: a single exp per logit.
    const float mx = RowMax(row, v);
    float s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < v; ++i) {
      const float e = Exp(row[i] - mx);
      drow[i] = e;
      s += e;
    }
    const double c = scale * static_cast<double>(m[r]);
    const float c_over_s = static_cast<float>(c / static_cast<double>(s));
#pragma omp simd
    for (int64_t i = 0; i < v; ++i) drow[i] *= c_over_s;
    drow[t[r]] -= static_cast<float>(c);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MaskedCrossEntropyOp::ComputeCpu(absl::Span<const Tensor> in,
                                              absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) return ComputeReference(in, out);  // f64: the reference
  return FastForward(in, out[0]);
}

absl::Status MaskedCrossEntropyBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                                      absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) return ComputeReference(in, out);  // f64: the reference
  return FastBackward(in, out[0]);
}

}  // namespace mimetic::ops
