// The CUDA kernels of MaskedCrossEntropy and its backward, registered with
// the dispatcher at static initialisation. The kernels themselves live in cross_entropy.cu.

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cross_entropy/cross_entropy.h"
#include "mimetic/ops/cross_entropy/cross_entropy_kernels.h"
#include "mimetic/ops/cuda/cuda_glue.h"

namespace mimetic::ops {
namespace {

using core::DType;

using cuda::DevicePtr;
// The CPU op's message for the first bad target, so both backends fail alike.
absl::Status TargetStatus(const char* error, const cuda::TargetCheck& check, int64_t v) {
  if (error != nullptr) return absl::InternalError(absl::StrCat("CUDA error: ", error));
  if (check.checked && check.bad_row >= 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "target ", check.bad_target, " at flat position ", check.bad_row, " (mask ", check.bad_mask,
        ") is out of range; expected targets in [0, V) with V=", v, " wherever mask != 0"));
  }
  return absl::OkStatus();
}

// in = {logits (..., V), targets (...) i32, mask (...)}, out = {loss ()}. One warp (V <= 1024) or
// one block per row computes a max-subtracted logsumexp; a fixed grid of blocks sums its rows'
// terms into per-block partials that one block then sums in a fixed order (no atomics), so the loss
// has the same bits every run. Bad targets under a nonzero mask are flagged on the device and
// reported as InvalidArgument after the launch (not while the stream is captured into a graph).
absl::Status MaskedCrossEntropyCuda(const core::Op&, const core::ExecContext& ctx,
                                    absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  const Tensor& logits = in[0];   // (..., V)
  const Tensor& targets = in[1];  // (...) i32
  const Tensor& mask = in[2];     // (...)
  const int64_t v = logits.dim(-1);
  cuda::TargetCheck check;
  const char* error = cuda::LaunchMaskedCrossEntropyForward(
      logits.dtype() == DType::kF64, DevicePtr(logits), static_cast<const int32_t*>(DevicePtr(targets)),
      DevicePtr(mask), cuda::DevicePtr(out[0]), targets.numel(), v, ctx.cuda_stream, &check);
  return TargetStatus(error, check, v);
}

// in = {logits, targets, mask, g ()}, out = {dlogits (..., V)}: one block reduces sum(mask) to the
// scale g / sum(mask), then one warp or block per row writes its softmax-minus-onehot.
absl::Status MaskedCrossEntropyBackwardCuda(const core::Op&, const core::ExecContext& ctx,
                                            absl::Span<const core::Tensor> in,
                                            absl::Span<const core::Tensor> out) {
  const Tensor& logits = in[0];   // (..., V)
  const Tensor& targets = in[1];  // (...) i32
  const Tensor& mask = in[2];     // (...)
  const Tensor& g = in[3];        // ()
  const int64_t v = logits.dim(-1);
  cuda::TargetCheck check;
  const char* error = cuda::LaunchMaskedCrossEntropyBackward(
      logits.dtype() == DType::kF64, DevicePtr(logits), static_cast<const int32_t*>(DevicePtr(targets)),
      DevicePtr(mask), DevicePtr(g), cuda::DevicePtr(out[0]), targets.numel(), v, ctx.cuda_stream, &check);
  return TargetStatus(error, check, v);
}

const bool registered = [] {
  core::RegisterCudaKernel("masked_cross_entropy", &MaskedCrossEntropyCuda);
  core::RegisterCudaKernel("masked_cross_entropy_backward", &MaskedCrossEntropyBackwardCuda);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops
