// The CUDA backend of the fused AdamW update: reads AdamWOp's hyperparameters and runs adamw.cu's
// single kernel over the leaf on ctx.cuda_stream. Registered under "adamw" at static initialisation.

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/adamw/adamw.h"
#include "mimetic/ops/adamw/adamw_kernels.h"
#include "mimetic/ops/cuda/cuda_glue.h"

namespace mimetic::ops::cuda {
namespace {

namespace k = ::mimetic::ops::cuda_kernels;
using core::DType;
using core::Tensor;

static_assert(static_cast<int>(DType::kF32) == k::kAdamWF32 && static_cast<int>(DType::kF64) == k::kAdamWF64);

// AdamWOp: in = {param, grad, m, v, scalars (4)}, out = {param, m, v}; one kernel over the leaf.
absl::Status AdamWCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const AdamWHyper& h = static_cast<const AdamWOp&>(op).hyper();
  const char* error = k::LaunchAdamW(static_cast<int>(in[0].dtype()), DevicePtr(in[0]), DevicePtr(in[1]),
                                     DevicePtr(in[2]), DevicePtr(in[3]), DevicePtr(in[4]), DevicePtr(out[0]),
                                     DevicePtr(out[1]), DevicePtr(out[2]), in[0].numel(), h.beta1, h.beta2,
                                     h.eps, h.weight_decay, ctx.cuda_stream);
  if (error == nullptr) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("CUDA kernel of 'adamw' failed: ", error));
}

const bool registered = [] {
  core::RegisterCudaKernel("adamw", &AdamWCuda);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops::cuda
