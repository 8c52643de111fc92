// The CUDA backend of the reductions: Sum / Mean / SumTo become one SumPlan (x collapsed with
// ops::internal::MakeLoopPlan into alternating kept and summed dims, as the fast CPU path does) for
// reduce.cu's block reduction; Max / ArgMax / MaxBackward view x as (outer, n, inner); BroadcastTo
// is a strided gather (shape.cu). Registered under every op name at static initialisation.

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/reduce/reduce_kernels.h"
#include "mimetic/ops/shape/shape_kernels.h"

namespace mimetic::ops::cuda {
namespace {

namespace k = ::mimetic::ops::cuda_kernels;
using core::DType;
using core::Shape;
using core::Tensor;

static_assert(static_cast<int>(DType::kF32) == k::kReduceF32 &&
              static_cast<int>(DType::kF64) == k::kReduceF64);

// y (of `target`, contiguous) = scale * x (of `x_shape`) summed over the dims along which target
// broadcasts to x_shape.
absl::Status SumToCuda(const core::Op& op, const core::ExecContext& ctx, const Tensor& x,
                       const Shape& x_shape, const Shape& target, const Tensor& y, double scale) {
  if (y.numel() == 0) return absl::OkStatus();
  const internal::LoopPlan loop = internal::MakeLoopPlan(
      x_shape, {internal::BroadcastStrides(target, x_shape), internal::BroadcastStrides(x_shape, x_shape)});
  const std::vector<int64_t>& y_strides = loop.strides[0];
  const std::vector<int64_t>& x_strides = loop.strides[1];
  size_t kept_end = loop.dims.size();
  k::SumPlan plan;
  // The innermost dim, when kept and unit-stride in both, is the contiguous run of the block's
  // columns.
  if (y_strides.back() == 1 && x_strides.back() == 1) {
    plan.inner = loop.dims.back();
    --kept_end;
  }
  for (size_t d = 0; d < kept_end; ++d) {
    const bool summed = y_strides[d] == 0;
    int& count = summed ? plan.summed_ndim : plan.kept_ndim;
    if (count >= k::kMaxReduceDims) {
      return absl::UnimplementedError(absl::StrCat("reduction of ", core::ShapeString(x_shape), " to ",
                                                   core::ShapeString(target), " has more than ",
                                                   k::kMaxReduceDims, " collapsed dims of one kind"));
    }
    if (summed) {
      plan.summed_dims[count] = loop.dims[d];
      plan.summed_x_strides[count] = x_strides[d];
    } else {
      plan.kept_dims[count] = loop.dims[d];
      plan.kept_x_strides[count] = x_strides[d];
      plan.kept_y_strides[count] = y_strides[d];
    }
    ++count;
  }
  return LaunchStatus(op, k::LaunchSum(static_cast<int>(x.dtype()), plan, DevicePtr(x), DevicePtr(y), scale,
                                       ctx.cuda_stream));
}

// SumOp (sum and mean): x viewed as (outer, n, inner) -> (outer, inner).
absl::Status LaunchSum(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const auto& sum = static_cast<const SumOp&>(op);
  ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(sum.axis(), in[0].rank()));
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  // As the reference: the mean multiplies by 1/n (NaN for an empty axis: 0 * inf).
  const double scale = sum.mean() ? 1.0 / static_cast<double>(n) : 1.0;
  return SumToCuda(op, ctx, in[0], {outer, n, inner}, {outer, 1, inner}, out[0], scale);
}

absl::Status LaunchSumTo(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                         absl::Span<const Tensor> out) {
  const auto& sum_to = static_cast<const SumToOp&>(op);
  return SumToCuda(op, ctx, in[0], in[0].shape(), sum_to.shape(), out[0], 1.0);
}

absl::Status LaunchBroadcastTo(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                               absl::Span<const Tensor> out) {
  const Shape& os = out[0].shape();
  if (out[0].numel() == 0) return absl::OkStatus();
  const internal::LoopPlan loop = internal::MakeLoopPlan(
      os, {internal::BroadcastStrides(in[0].shape(), os), internal::BroadcastStrides(os, os)});
  if (loop.dims.size() > static_cast<size_t>(k::kMaxCopyDims)) {
    return absl::UnimplementedError(absl::StrCat("broadcast to ", core::ShapeString(os), " collapses to ",
                                                 loop.dims.size(), " dims; the CUDA kernel supports ",
                                                 k::kMaxCopyDims));
  }
  k::GatherPlan plan;
  plan.ndim = static_cast<int>(loop.dims.size());
  for (int d = 0; d < plan.ndim; ++d) {
    plan.dims[d] = loop.dims[d];
    plan.src_strides[d] = loop.strides[0][d];
  }
  return LaunchStatus(op, k::LaunchGather(DevicePtr(in[0]), in[0].numel(), DevicePtr(out[0]), plan,
                                          static_cast<int>(core::DTypeSize(in[0].dtype())), ctx.cuda_stream));
}

absl::Status LaunchMax(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const auto& max = static_cast<const MaxOp&>(op);
  ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(max.axis(), in[0].rank()));
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  return LaunchStatus(
      op, k::LaunchMax(max.arg() ? k::kMaxIndices : k::kMaxValues, static_cast<int>(in[0].dtype()),
                       DevicePtr(in[0]), nullptr, DevicePtr(out[0]), outer, n, inner, ctx.cuda_stream));
}

absl::Status LaunchMaxBackward(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                               absl::Span<const Tensor> out) {
  const auto& max_backward = static_cast<const MaxBackwardOp&>(op);
  ASSIGN_OR_RETURN(const int axis, internal::NormalizeAxis(max_backward.axis(), in[0].rank()));
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  return LaunchStatus(
      op, k::LaunchMax(k::kMaxBackward, static_cast<int>(in[0].dtype()), DevicePtr(in[0]), DevicePtr(in[1]),
                       DevicePtr(out[0]), outer, n, inner, ctx.cuda_stream));
}

const bool registered = [] {
  core::RegisterCudaKernel("sum", &LaunchSum);
  core::RegisterCudaKernel("mean", &LaunchSum);
  core::RegisterCudaKernel("sum_to", &LaunchSumTo);
  core::RegisterCudaKernel("broadcast_to", &LaunchBroadcastTo);
  core::RegisterCudaKernel("max", &LaunchMax);
  core::RegisterCudaKernel("argmax", &LaunchMax);
  core::RegisterCudaKernel("max_backward", &LaunchMaxBackward);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops::cuda
