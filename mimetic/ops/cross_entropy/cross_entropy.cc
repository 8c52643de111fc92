#include "mimetic/ops/cross_entropy/cross_entropy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "mimetic/core/xt_view.h"
#include "xtensor/xview.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;
using core::XtViewOrDie;

// Checks logits (..., V), targets (...) i32 and mask (...) of logits' dtype.
absl::Status CheckInputs(absl::Span<const TensorMeta> in) {
  const TensorMeta& logits = in[0];
  const TensorMeta& targets = in[1];
  const TensorMeta& mask = in[2];
  if (logits.dtype == DType::kI32 || logits.shape.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("logits are ", logits.DebugString(), "; expected (..., V) f32 or f64 logits"));
  }
  const Shape rows(logits.shape.begin(), logits.shape.end() - 1);
  if (targets.dtype != DType::kI32 || targets.shape != rows) {
    return absl::InvalidArgumentError(absl::StrCat("targets are ", targets.DebugString(),
                                                   "; expected i32 targets ", ShapeString(rows),
                                                   " (the logits' shape without V)"));
  }
  if (mask.dtype != logits.dtype || mask.shape != rows) {
    return absl::InvalidArgumentError(absl::StrCat("mask is ", mask.DebugString(), "; expected a ",
                                                   core::DTypeName(logits.dtype), ShapeString(rows),
                                                   " mask (the logits' dtype and shape without V)"));
  }
  return absl::OkStatus();
}

// sum(mask), after checking every target under a nonzero mask lies in [0, V).
template <typename T>
absl::StatusOr<double> MaskSum(const Tensor& targets, const Tensor& mask, int64_t v) {
  const int32_t* t = targets.data<int32_t>();
  const T* m = mask.data<T>();
  const int64_t rows = targets.numel();
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (m[r] != T(0) && (t[r] < 0 || t[r] >= v)) {
      return absl::InvalidArgumentError(
          absl::StrCat("target ", t[r], " at flat position ", r, " (mask ", static_cast<double>(m[r]),
                       ") is out of range; expected targets in [0, V) with V=", v, " wherever mask != 0"));
    }
    sum += static_cast<double>(m[r]);
  }
  return sum;
}

// ---- Reference: double precision, std::exp, one row at a time. ----

// log sum_i exp(x_i) over one row x (V), shifted by the row's max so that no exp overflows.
template <typename Row>
double ReferenceLogSumExp(const Row& x) {
  const int64_t v = x.size();
  double mx = -INFINITY;
  for (int64_t i = 0; i < v; ++i) mx = std::max(mx, static_cast<double>(x(i)));
  double s = 0;
  for (int64_t i = 0; i < v; ++i) s += std::exp(static_cast<double>(x(i)) - mx);
  return mx + std::log(s);
}

// loss = sum_r m_r (logsumexp(x_r) - x_{r, t_r}) / sum_r m_r over the rows r of the logits; 0 when
// every m_r is 0.
template <typename T>
absl::Status ReferenceForward(absl::Span<const Tensor> in, const Tensor& out) {
  const int64_t rows = in[1].numel(), v = in[0].dim(-1);
  ASSIGN_OR_RETURN(const double mask_sum, MaskSum<T>(in[1], in[2], v));
  const XtView<const T, 2> x = core::ReshapedXtViewOrDie<const T>(in[0], {rows, v});  // (rows, V) logits
  const XtView<const int32_t, 1> t =
      core::ReshapedXtViewOrDie<const int32_t>(in[1], {rows});                     // (rows) targets
  const XtView<const T, 1> m = core::ReshapedXtViewOrDie<const T>(in[2], {rows});  // (rows) mask
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (m(r) == T(0)) continue;
    const double lse = ReferenceLogSumExp(xt::row(x, r));
    total += static_cast<double>(m(r)) * (lse - static_cast<double>(x(r, t(r))));
  }
  XtViewOrDie<T, 0>(out)() = static_cast<T>(mask_sum == 0 ? 0.0 : total / mask_sum);
  return absl::OkStatus();
}

// dx_{r,i} = g m_r / sum(m) (softmax(x_r)_i - [i == t_r]), with g the loss's cotangent; 0 on rows
// with m_r = 0.
template <typename T>
absl::Status ReferenceBackward(absl::Span<const Tensor> in, const Tensor& out) {
  const int64_t rows = in[1].numel(), v = in[0].dim(-1);
  ASSIGN_OR_RETURN(const double mask_sum, MaskSum<T>(in[1], in[2], v));
  const XtView<const T, 2> x = core::ReshapedXtViewOrDie<const T>(in[0], {rows, v});  // (rows, V) logits
  const XtView<const int32_t, 1> t =
      core::ReshapedXtViewOrDie<const int32_t>(in[1], {rows});                     // (rows) targets
  const XtView<const T, 1> m = core::ReshapedXtViewOrDie<const T>(in[2], {rows});  // (rows) mask
  const T g = XtViewOrDie<const T, 0>(in[3])();                                    // () the loss's cotangent
  XtView<T, 2> dx = core::ReshapedXtViewOrDie<T>(out, {rows, v});                  // (rows, V)
  const double scale = mask_sum == 0 ? 0.0 : static_cast<double>(g) / mask_sum;
  for (int64_t r = 0; r < rows; ++r) {
    if (m(r) == T(0) || scale == 0) {
      xt::row(dx, r) = T(0);
      continue;
    }
    const double lse = ReferenceLogSumExp(xt::row(x, r));
    const double c = scale * static_cast<double>(m(r));
    for (int64_t i = 0; i < v; ++i) {
      dx(r, i) = static_cast<T>(c * (std::exp(static_cast<double>(x(r, i)) - lse) - (i == t(r) ? 1.0 : 0.0)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<TensorMeta>> MaskedCrossEntropyOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  if (in.size() != 3) return absl::InvalidArgumentError(absl::StrCat("expected 3 inputs, got ", in.size()));
  RETURN_IF_ERROR(CheckInputs(in));
  return std::vector<TensorMeta>{TensorMeta{{}, in[0].dtype, in[0].device}};
}

absl::Status MaskedCrossEntropyOp::ComputeReference(absl::Span<const Tensor> in,
                                                    absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) return ReferenceForward<double>(in, out[0]);
  return ReferenceForward<float>(in, out[0]);
}

std::vector<Tensor> MaskedCrossEntropyOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                              absl::Span<const Tensor> out_grads) const {
  return {MaskedCrossEntropyBackward(in[0], in[1], in[2], out_grads[0]), Tensor(), Tensor()};
}

absl::StatusOr<std::vector<TensorMeta>> MaskedCrossEntropyBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  if (in.size() != 4) return absl::InvalidArgumentError(absl::StrCat("expected 4 inputs, got ", in.size()));
  RETURN_IF_ERROR(CheckInputs(in));
  if (in[3].dtype != in[0].dtype || !in[3].shape.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("g is ", in[3].DebugString(), "; expected a rank-0 ",
                                                   core::DTypeName(in[0].dtype), " cotangent"));
  }
  return std::vector<TensorMeta>{in[0]};
}

absl::Status MaskedCrossEntropyBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                            absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) return ReferenceBackward<double>(in, out[0]);
  return ReferenceBackward<float>(in, out[0]);
}

absl::StatusOr<double> internal::CrossEntropyMaskSum(const Tensor& targets, const Tensor& mask, int64_t v) {
  if (mask.dtype() == DType::kF64) return MaskSum<double>(targets, mask, v);
  return MaskSum<float>(targets, mask, v);
}

Tensor MaskedCrossEntropy(const Tensor& logits, const Tensor& targets, const Tensor& mask) {
  return core::Call(std::make_shared<MaskedCrossEntropyOp>(), {logits, targets, mask})[0];
}

Tensor MaskedCrossEntropyBackward(const Tensor& logits, const Tensor& targets, const Tensor& mask,
                                  const Tensor& g) {
  return core::Call(std::make_shared<MaskedCrossEntropyBackwardOp>(), {logits, targets, mask, g})[0];
}

}  // namespace mimetic::ops
