// MaskedCrossEntropy: the training loss of every task, the mean next-token cross-entropy over the
// positions a loss mask selects (Jelassi et al. 2024: loss = sum(CE * m) / sum(m)).
//
//   Tensor loss = MaskedCrossEntropy(logits, batch.targets, batch.loss_mask);   // f32() scalar
//
// The log-softmax is fused and max-subtracted, so logits of any magnitude give finite losses.
// Where mask == 0 the target is ignored (it may be PAD, -100 or anything else); a target outside
// [0, V) where mask != 0 gives an error tensor naming the target, its position and V. The gradient
// flows to the logits only, through the MaskedCrossEntropyBackward primitive.
#ifndef MIMETIC_OPS_CROSS_ENTROPY_CROSS_ENTROPY_H_
#define MIMETIC_OPS_CROSS_ENTROPY_CROSS_ENTROPY_H_

#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// logits: (..., V) f32|f64; targets: (...) i32; mask: (...) same dtype as logits (0/1, or any
// weights). Returns a rank-0 tensor: sum_r mask_r * CE_r / sum_r mask_r, and 0 when sum(mask) == 0.
// CE_r = logsumexp(logits_r) - logits_r[targets_r].
Tensor MaskedCrossEntropy(const Tensor& logits, const Tensor& targets, const Tensor& mask);

// d loss / d logits for the upstream cotangent g (rank 0):
//   dlogits_r = g * mask_r / sum(mask) * (softmax(logits_r) - onehot(targets_r)), 0 when sum(mask) == 0.
Tensor MaskedCrossEntropyBackward(const Tensor& logits, const Tensor& targets, const Tensor& mask,
                                  const Tensor& g);

class MaskedCrossEntropyOp : public core::Op {
 public:
  const char* name() const override { return "masked_cross_entropy"; }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  // Cotangents {dlogits, none, none}: targets and mask are data, not parameters.
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
};

// Inputs {logits, targets, mask, g}; output dlogits with logits' metadata. Not differentiable itself
// (no second derivatives of the loss).
class MaskedCrossEntropyBackwardOp : public core::Op {
 public:
  const char* name() const override { return "masked_cross_entropy_backward"; }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
};

namespace internal {

// sum(mask) over the rows, after checking every target under a nonzero mask lies in [0, V); shared by
// the reference (cross_entropy.cc) and the fast path (cross_entropy_cpu.cc).
absl::StatusOr<double> CrossEntropyMaskSum(const Tensor& targets, const Tensor& mask, int64_t v);

}  // namespace internal

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_CROSS_ENTROPY_CROSS_ENTROPY_H_
