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
#include "mimetic/ops/builtin_kernels.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Tensor;

template <typename T>
T* DevicePtr(const Tensor& t) {
  return static_cast<T*>(t.storage()->data());
}

absl::Status Check(const char* error, const char* what) {
  if (error == nullptr) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " kernel: ", error));
}

absl::Status FillCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor>,
                      absl::Span<const Tensor> out) {
  const auto& fill = static_cast<const core::FillOp&>(op);
  const Tensor& y = out[0];
  const int64_t n = y.numel();
  // The value is converted on the host exactly as FillOp::ComputeReference converts it.
  switch (y.dtype()) {
    case DType::kF32:
      return Check(
          kernels::LaunchFillF32(DevicePtr<float>(y), static_cast<float>(fill.value()), n, ctx.cuda_stream),
          "fill");
    case DType::kF64:
      return Check(kernels::LaunchFillF64(DevicePtr<double>(y), fill.value(), n, ctx.cuda_stream), "fill");
    case DType::kI32:
      return Check(kernels::LaunchFillI32(DevicePtr<int32_t>(y), static_cast<int32_t>(fill.value()), n,
                                          ctx.cuda_stream),
                   "fill");
  }
  return absl::InternalError("fill: unknown dtype");
}

absl::Status AccumulateCuda(const core::Op&, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                            absl::Span<const Tensor> out) {
  const Tensor& y = out[0];
  const int64_t n = y.numel();
  switch (y.dtype()) {
    case DType::kF32:
      return Check(kernels::LaunchAccumulateF32(DevicePtr<float>(in[0]), DevicePtr<float>(in[1]),
                                                DevicePtr<float>(y), n, ctx.cuda_stream),
                   "accumulate");
    case DType::kF64:
      return Check(kernels::LaunchAccumulateF64(DevicePtr<double>(in[0]), DevicePtr<double>(in[1]),
                                                DevicePtr<double>(y), n, ctx.cuda_stream),
                   "accumulate");
    case DType::kI32:
      return Check(kernels::LaunchAccumulateI32(DevicePtr<int32_t>(in[0]), DevicePtr<int32_t>(in[1]),
                                                DevicePtr<int32_t>(y), n, ctx.cuda_stream),
                   "accumulate");
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
