// CUDA kernels for core's builtin ops, "fill" (every dtype) and "accumulate" (f32, f64, i32),
// registered at static initialisation. Autodiff needs both (seed cotangents, zeros for unused
// outputs, summing cotangents), so every CUDA build links this library (see :cuda_backend).
#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/builtin_kernels.h"
#include "mimetic/ops/cuda/cuda_glue.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Tensor;

absl::Status FillCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor>,
                      absl::Span<const Tensor> out) {
  const auto& fill = static_cast<const core::FillOp&>(op);
  const Tensor& y = out[0];
  const int64_t n = y.numel();
  // The value is converted on the host exactly as FillOp::ComputeReference converts it.
  switch (y.dtype()) {
    case DType::kF32:
      return cuda::LaunchStatus(
          "fill",
          kernels::LaunchFillF32(cuda::Out<float>(y), static_cast<float>(fill.value()), n, ctx.cuda_stream));
    case DType::kF64:
      return cuda::LaunchStatus(
          "fill", kernels::LaunchFillF64(cuda::Out<double>(y), fill.value(), n, ctx.cuda_stream));
    case DType::kI32:
      return cuda::LaunchStatus(
          "fill", kernels::LaunchFillI32(cuda::Out<int32_t>(y), static_cast<int32_t>(fill.value()), n,
                                         ctx.cuda_stream));
  }
  return absl::InternalError("fill: unknown dtype");
}

absl::Status AccumulateCuda(const core::Op&, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                            absl::Span<const Tensor> out) {
  const Tensor& y = out[0];
  const int64_t n = y.numel();
  switch (y.dtype()) {
    case DType::kF32:
      return cuda::LaunchStatus("accumulate",
                                kernels::LaunchAccumulateF32(cuda::Out<float>(in[0]), cuda::Out<float>(in[1]),
                                                             cuda::Out<float>(y), n, ctx.cuda_stream));
    case DType::kF64:
      return cuda::LaunchStatus(
          "accumulate", kernels::LaunchAccumulateF64(cuda::Out<double>(in[0]), cuda::Out<double>(in[1]),
                                                     cuda::Out<double>(y), n, ctx.cuda_stream));
    case DType::kI32:
      return cuda::LaunchStatus(
          "accumulate", kernels::LaunchAccumulateI32(cuda::Out<int32_t>(in[0]), cuda::Out<int32_t>(in[1]),
                                                     cuda::Out<int32_t>(y), n, ctx.cuda_stream));
  }
  return absl::InternalError("accumulate: unknown dtype");
}

const bool registered = [] {
  core::RegisterCudaKernel("fill", &FillCuda);
  core::RegisterCudaKernel("accumulate", &AccumulateCuda);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops
