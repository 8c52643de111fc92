// The norm family's CUDA kernels as core::CudaKernelFn: reads the op attributes and tensor shapes,
// calls the launchers of norm.cu (norm_kernels.h) on ctx.cuda_stream, and registers every op name
// of the family (forward and backward) at static initialisation.

#include <string>

#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/norm/norm.h"
#include "mimetic/ops/norm/norm_kernels.h"

namespace mimetic::ops::cuda {
namespace {

using core::DType;

int64_t Rows(const Tensor& x) { return x.numel() / x.dim(-1); }

template <typename T>
absl::Status RmsNormT(const RmsNormOp& op, void* stream, absl::Span<const Tensor> in,
                      absl::Span<const Tensor> out) {
  const int64_t d = in[0].dim(-1);
  return LaunchStatus(op, cuda_kernels::LaunchRmsNorm(In<T>(in[0]), In<T>(in[1]), Out<T>(out[0]), Rows(in[0]),
                                                      d, static_cast<T>(op.eps()), stream));
}

template <typename T>
absl::Status RmsNormBackwardT(const RmsNormBackwardOp& op, void* stream, absl::Span<const Tensor> in,
                              absl::Span<const Tensor> out) {
  const int64_t d = in[0].dim(-1);
  return LaunchStatus(op, cuda_kernels::LaunchRmsNormBackward(In<T>(in[0]), In<T>(in[1]), In<T>(in[2]),
                                                              Out<T>(out[0]), Out<T>(out[1]), Rows(in[0]), d,
                                                              static_cast<T>(op.eps()), stream));
}

template <typename T>
absl::Status LayerNormT(const LayerNormOp& op, void* stream, absl::Span<const Tensor> in,
                        absl::Span<const Tensor> out) {
  const int64_t d = in[0].dim(-1);
  return LaunchStatus(
      op, cuda_kernels::LaunchLayerNorm(In<T>(in[0]), In<T>(in[1]), In<T>(in[2]), Out<T>(out[0]), Rows(in[0]),
                                        d, static_cast<T>(op.eps()), stream));
}

template <typename T>
absl::Status LayerNormBackwardT(const LayerNormBackwardOp& op, void* stream, absl::Span<const Tensor> in,
                                absl::Span<const Tensor> out) {
  const int64_t d = in[0].dim(-1);
  return LaunchStatus(op, cuda_kernels::LaunchLayerNormBackward(
                              In<T>(in[0]), In<T>(in[1]), In<T>(in[2]), Out<T>(out[0]), Out<T>(out[1]),
                              Out<T>(out[2]), Rows(in[0]), d, static_cast<T>(op.eps()), stream));
}

template <typename T>
absl::Status GatedRmsNormT(const GatedRmsNormOp& op, void* stream, absl::Span<const Tensor> in,
                           absl::Span<const Tensor> out) {
  const int64_t e = in[0].dim(-1);
  return LaunchStatus(op, cuda_kernels::LaunchGatedRmsNorm(In<T>(in[0]), In<T>(in[1]), In<T>(in[2]),
                                                           Out<T>(out[0]), Rows(in[0]), e, op.group_size(),
                                                           static_cast<T>(op.eps()), stream));
}

template <typename T>
absl::Status GatedRmsNormBackwardT(const GatedRmsNormBackwardOp& op, void* stream,
                                   absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const int64_t e = in[0].dim(-1);
  return LaunchStatus(
      op, cuda_kernels::LaunchGatedRmsNormBackward(
              In<T>(in[0]), In<T>(in[1]), In<T>(in[2]), In<T>(in[3]), Out<T>(out[0]), Out<T>(out[1]),
              Out<T>(out[2]), Rows(in[0]), e, op.group_size(), static_cast<T>(op.eps()), stream));
}

// "rms_norm", RmsNormOp: (x (..., D), weight (D)) -> (y (..., D)).
absl::Status RmsNormCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                         absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  const auto& norm = static_cast<const RmsNormOp&>(op);
  if (in[0].dtype() == DType::kF64) return RmsNormT<double>(norm, ctx.cuda_stream, in, out);
  return RmsNormT<float>(norm, ctx.cuda_stream, in, out);
}

absl::Status RmsNormBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                 absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  const auto& norm = static_cast<const RmsNormBackwardOp&>(op);
  if (in[0].dtype() == DType::kF64) return RmsNormBackwardT<double>(norm, ctx.cuda_stream, in, out);
  return RmsNormBackwardT<float>(norm, ctx.cuda_stream, in, out);
}

absl::Status LayerNormCuda(const core::Op& op, const core::ExecContext& ctx,
                           absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  const auto& norm = static_cast<const LayerNormOp&>(op);
  if (in[0].dtype() == DType::kF64) return LayerNormT<double>(norm, ctx.cuda_stream, in, out);
  return LayerNormT<float>(norm, ctx.cuda_stream, in, out);
}

absl::Status LayerNormBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                   absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  const auto& norm = static_cast<const LayerNormBackwardOp&>(op);
  if (in[0].dtype() == DType::kF64) return LayerNormBackwardT<double>(norm, ctx.cuda_stream, in, out);
  return LayerNormBackwardT<float>(norm, ctx.cuda_stream, in, out);
}

absl::Status GatedRmsNormCuda(const core::Op& op, const core::ExecContext& ctx,
                              absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  const auto& norm = static_cast<const GatedRmsNormOp&>(op);
  if (in[0].dtype() == DType::kF64) return GatedRmsNormT<double>(norm, ctx.cuda_stream, in, out);
  return GatedRmsNormT<float>(norm, ctx.cuda_stream, in, out);
}

absl::Status GatedRmsNormBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                      absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  const auto& norm = static_cast<const GatedRmsNormBackwardOp&>(op);
  if (in[0].dtype() == DType::kF64) return GatedRmsNormBackwardT<double>(norm, ctx.cuda_stream, in, out);
  return GatedRmsNormBackwardT<float>(norm, ctx.cuda_stream, in, out);
}

// Registered under the op classes' name()s (norm.h).
const bool registered = [] {
  core::RegisterCudaKernel("rms_norm", &RmsNormCuda);
  core::RegisterCudaKernel("rms_norm_backward", &RmsNormBackwardCuda);
  core::RegisterCudaKernel("layer_norm", &LayerNormCuda);
  core::RegisterCudaKernel("layer_norm_backward", &LayerNormBackwardCuda);
  core::RegisterCudaKernel("gated_rms_norm", &GatedRmsNormCuda);
  core::RegisterCudaKernel("gated_rms_norm_backward", &GatedRmsNormBackwardCuda);
  return true;
}();
}  // namespace

}  // namespace mimetic::ops::cuda
