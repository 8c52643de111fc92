// The causal depthwise conv1d CUDA kernels as core::CudaKernelFn: reads the tensor shapes, calls the
// launchers of conv1d.cu (conv1d_kernels.h) on ctx.cuda_stream, and registers "causal_conv1d",
// "causal_conv1d_backward" and their SiLU-fused forms at static initialisation.

#include <string>

#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/conv1d/conv1d.h"
#include "mimetic/ops/conv1d/conv1d_kernels.h"
#include "mimetic/ops/cuda/cuda_glue.h"

namespace mimetic::ops::cuda {
namespace {

using core::DType;

// x: (B, L, C); weight: (C, K).
template <typename T>
absl::Status ForwardT(const core::Op& op, void* stream, absl::Span<const Tensor> in,
                      absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  return LaunchStatus(
      op, cuda_kernels::LaunchCausalConv1d(In<T>(x), In<T>(in[1]), In<T>(in[2]), Out<T>(out[0]), x.dim(0),
                                           x.dim(1), x.dim(2), in[1].dim(1), stream));
}

template <typename T>
absl::Status BackwardT(const core::Op& op, void* stream, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  return LaunchStatus(op, cuda_kernels::LaunchCausalConv1dBackward(
                              In<T>(x), In<T>(in[1]), In<T>(in[2]), Out<T>(out[0]), Out<T>(out[1]),
                              Out<T>(out[2]), x.dim(0), x.dim(1), x.dim(2), in[1].dim(1), stream));
}

// SiLU-fused: (x, weight, bias) -> (SiLU(conv), conv).
template <typename T>
absl::Status SiluForwardT(const core::Op& op, void* stream, absl::Span<const Tensor> in,
                          absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  return LaunchStatus(op, cuda_kernels::LaunchCausalConv1dSilu(In<T>(x), In<T>(in[1]), In<T>(in[2]),
                                                               Out<T>(out[0]), Out<T>(out[1]), x.dim(0),
                                                               x.dim(1), x.dim(2), in[1].dim(1), stream));
}

// (x, weight, conv, dout) -> (dx, dweight, dbias).
template <typename T>
absl::Status SiluBackwardT(const core::Op& op, void* stream, absl::Span<const Tensor> in,
                           absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  return LaunchStatus(
      op, cuda_kernels::LaunchCausalConv1dSiluBackward(In<T>(x), In<T>(in[1]), In<T>(in[2]), In<T>(in[3]),
                                                       Out<T>(out[0]), Out<T>(out[1]), Out<T>(out[2]),
                                                       x.dim(0), x.dim(1), x.dim(2), in[1].dim(1), stream));
}

// "causal_conv1d", CausalConv1dOp: (x (B, L, C), weight (C, K), bias (C)) -> (out (B, L, C)).
absl::Status CausalConv1dCuda(const core::Op& op, const core::ExecContext& ctx,
                              absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  if (in[0].dtype() == DType::kF64) return ForwardT<double>(op, ctx.cuda_stream, in, out);
  return ForwardT<float>(op, ctx.cuda_stream, in, out);
}

absl::Status CausalConv1dBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                      absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  if (in[0].dtype() == DType::kF64) return BackwardT<double>(op, ctx.cuda_stream, in, out);
  return BackwardT<float>(op, ctx.cuda_stream, in, out);
}

absl::Status CausalConv1dSiluCuda(const core::Op& op, const core::ExecContext& ctx,
                                  absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  if (in[0].dtype() == DType::kF64) return SiluForwardT<double>(op, ctx.cuda_stream, in, out);
  return SiluForwardT<float>(op, ctx.cuda_stream, in, out);
}

absl::Status CausalConv1dSiluBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                                          absl::Span<const core::Tensor> in,
                                          absl::Span<const core::Tensor> out) {
  RETURN_IF_ERROR(CheckDevice(op, in, out));
  if (in[0].dtype() == DType::kF64) return SiluBackwardT<double>(op, ctx.cuda_stream, in, out);
  return SiluBackwardT<float>(op, ctx.cuda_stream, in, out);
}

// Registered under the op classes' name()s (conv1d.h).
const bool registered = [] {
  core::RegisterCudaKernel("causal_conv1d", &CausalConv1dCuda);
  core::RegisterCudaKernel("causal_conv1d_backward", &CausalConv1dBackwardCuda);
  core::RegisterCudaKernel("causal_conv1d_silu", &CausalConv1dSiluCuda);
  core::RegisterCudaKernel("causal_conv1d_silu_backward", &CausalConv1dSiluBackwardCuda);
  return true;
}();
}  // namespace

}  // namespace mimetic::ops::cuda
