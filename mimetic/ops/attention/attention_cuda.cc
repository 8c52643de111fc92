// CUDA entry points of causal softmax / linear attention: read the op's kind and
// scale, the sizes (GetAttentionDims) and the device pointers, and call the launchers of
// attention.cu (attention_kernels.h) on ctx.cuda_stream. Registered for every op name at static
// initialisation. The softmax backward passes need 3·B·H·L values of scratch (row max, 1/sum,
// rowsum(w ∘ dw)), taken from the CUDA allocator per call: the block is freed on return while the
// kernels may still be queued, which is safe because all device work runs on the one stream of
// core/cuda_runtime (a later user of the block is enqueued after these kernels).

#include <cstdint>
#include <memory>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"
#include "mimetic/ops/attention/attention.h"
#include "mimetic/ops/attention/attention_kernels.h"
#include "mimetic/ops/cuda/cuda_glue.h"

namespace mimetic::ops::cuda {
namespace {

using core::DType;
using core::Tensor;

bool IsSoftmax(const core::Op& op) {
  return static_cast<const CausalAttentionOpBase&>(op).kind() == AttentionKind::kSoftmax;
}

// The op's scale in the kernels' precision (the fast CPU path rounds it to float likewise).
template <typename T>
T Scale(const core::Op& op) {
  return static_cast<T>(static_cast<const CausalAttentionOpBase&>(op).scale());
}

// Scratch for the backward launchers (softmax only; linear attention needs none).
template <typename T>
absl::StatusOr<std::shared_ptr<core::Storage>> BackwardScratch(bool softmax, const AttentionDims& d) {
  if (!softmax) return std::shared_ptr<core::Storage>();
  const int64_t n = AttentionBackwardScratchElements(d.batch, d.length, d.heads);
  return core::Storage::Allocate(static_cast<size_t>(n) * sizeof(T), core::Device::kCuda);
}

template <typename T>
T* ScratchData(const std::shared_ptr<core::Storage>& scratch) {
  return scratch == nullptr ? nullptr : static_cast<T*>(scratch->data());
}

template <typename T>
absl::Status Forward(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                     absl::Span<const Tensor> out) {
  const AttentionDims d = GetAttentionDims(in[0].meta(), &in[2].meta());
  return LaunchStatus(
      op, LaunchCausalAttentionForward(IsSoftmax(op), Scale<T>(op), In<T>(in[0]), In<T>(in[1]), In<T>(in[2]),
                                       Out<T>(out[0]), d.batch, d.length, d.heads, d.key_dim, d.value_dim,
                                       ctx.cuda_stream));
}

template <typename T>
absl::Status Backward(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                      absl::Span<const Tensor> out) {
  const AttentionDims d = GetAttentionDims(in[0].meta(), &in[2].meta());
  const bool softmax = IsSoftmax(op);
  ASSIGN_OR_RETURN(std::shared_ptr<core::Storage> scratch, BackwardScratch<T>(softmax, d));
  return LaunchStatus(op, LaunchCausalAttentionBackward(
                              softmax, Scale<T>(op), In<T>(in[0]), In<T>(in[1]), In<T>(in[2]), In<T>(in[3]),
                              Out<T>(out[0]), Out<T>(out[1]), Out<T>(out[2]), d.batch, d.length, d.heads,
                              d.key_dim, d.value_dim, ScratchData<T>(scratch), ctx.cuda_stream));
}

template <typename T>
absl::Status Weights(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                     absl::Span<const Tensor> out) {
  const AttentionDims d = GetAttentionDims(in[0].meta(), nullptr);
  return LaunchStatus(op, LaunchCausalAttentionWeights(IsSoftmax(op), Scale<T>(op), In<T>(in[0]),
                                                       In<T>(in[1]), Out<T>(out[0]), d.batch, d.length,
                                                       d.heads, d.key_dim, ctx.cuda_stream));
}

template <typename T>
absl::Status WeightsBackward(const core::Op& op, const core::ExecContext& ctx, absl::Span<const Tensor> in,
                             absl::Span<const Tensor> out) {
  const AttentionDims d = GetAttentionDims(in[0].meta(), nullptr);
  const bool softmax = IsSoftmax(op);
  ASSIGN_OR_RETURN(std::shared_ptr<core::Storage> scratch, BackwardScratch<T>(softmax, d));
  return LaunchStatus(
      op, LaunchCausalAttentionWeightsBackward(
              softmax, Scale<T>(op), In<T>(in[0]), In<T>(in[1]), In<T>(in[2]), Out<T>(out[0]), Out<T>(out[1]),
              d.batch, d.length, d.heads, d.key_dim, ScratchData<T>(scratch), ctx.cuda_stream));
}

// CausalAttentionOp. in: q, k (B, L, H, Pk), v (B, L, H, Pv). out: (B, L, H, Pv).
absl::Status LaunchCausalAttention(const core::Op& op, const core::ExecContext& ctx,
                                   absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  return in[0].dtype() == DType::kF64 ? Forward<double>(op, ctx, in, out) : Forward<float>(op, ctx, in, out);
}

// CausalAttentionBackwardOp. in: q, k, v, dout (B, L, H, Pv). out: dq, dk (B, L, H, Pk), dv (B, L, H, Pv).
absl::Status LaunchCausalAttentionBackward(const core::Op& op, const core::ExecContext& ctx,
                                           absl::Span<const core::Tensor> in,
                                           absl::Span<const core::Tensor> out) {
  return in[0].dtype() == DType::kF64 ? Backward<double>(op, ctx, in, out)
                                      : Backward<float>(op, ctx, in, out);
}

// CausalAttentionWeightsOp. in: q, k (B, L, H, Pk). out: weights (B, H, L, L), zeros above the diagonal.
absl::Status LaunchCausalAttentionWeights(const core::Op& op, const core::ExecContext& ctx,
                                          absl::Span<const core::Tensor> in,
                                          absl::Span<const core::Tensor> out) {
  return in[0].dtype() == DType::kF64 ? Weights<double>(op, ctx, in, out) : Weights<float>(op, ctx, in, out);
}

// CausalAttentionWeightsBackwardOp. in: q, k, dweights (B, H, L, L). out: dq, dk (B, L, H, Pk).
absl::Status LaunchCausalAttentionWeightsBackward(const core::Op& op, const core::ExecContext& ctx,
                                                  absl::Span<const core::Tensor> in,
                                                  absl::Span<const core::Tensor> out) {
  return in[0].dtype() == DType::kF64 ? WeightsBackward<double>(op, ctx, in, out)
                                      : WeightsBackward<float>(op, ctx, in, out);
}

// The names CausalAttention*Op::name() return for each kind (attention.cc).
[[maybe_unused]] const bool registered = [] {
  core::RegisterCudaKernel("causal_softmax_attention", &LaunchCausalAttention);
  core::RegisterCudaKernel("causal_linear_attention", &LaunchCausalAttention);
  core::RegisterCudaKernel("causal_softmax_attention_backward", &LaunchCausalAttentionBackward);
  core::RegisterCudaKernel("causal_linear_attention_backward", &LaunchCausalAttentionBackward);
  core::RegisterCudaKernel("causal_softmax_attention_weights", &LaunchCausalAttentionWeights);
  core::RegisterCudaKernel("causal_linear_attention_weights", &LaunchCausalAttentionWeights);
  core::RegisterCudaKernel("causal_softmax_attention_weights_backward",
                           &LaunchCausalAttentionWeightsBackward);
  core::RegisterCudaKernel("causal_linear_attention_weights_backward", &LaunchCausalAttentionWeightsBackward);
  return true;
}();

}  // namespace
}  // namespace mimetic::ops::cuda
