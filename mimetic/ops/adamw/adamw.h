// Fused AdamW update of one parameter leaf (Loshchilov & Hutter; PyTorch's torch.optim.AdamW
// semantics: decoupled weight decay applied before the Adam step).
//
//   // scalars: (4) f32 = [lr, 1 - beta1^t, 1 - beta2^t, grad_scale] (per step, so Jit replays
//   // one graph for every step)
//   AdamWResult r = AdamWUpdate(param, grad, m, v, scalars, {0.9, 0.999, 1e-8, 0.1});
//
//   g  = grad * grad_scale                       (global-norm clipping folded in)
//   p  = p * (1 - lr * weight_decay)
//   m  = beta1 m + (1 - beta1) g
//   v  = beta2 v + (1 - beta2) g^2
//   p -= (lr / bc1) * m / (sqrt(v) / sqrt(bc2) + eps)
// Not differentiable (an optimizer step).
#ifndef MIMETIC_OPS_ADAMW_ADAMW_H_
#define MIMETIC_OPS_ADAMW_ADAMW_H_

#include <string>

#include "mimetic/core/op.h"

namespace mimetic::ops {

using core::Tensor;

struct AdamWHyper {
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

struct AdamWResult {
  Tensor param, m, v;
};

// param, grad, m, v: same shape, f32 or f64; scalars: (4) of the same dtype.
AdamWResult AdamWUpdate(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                        const Tensor& scalars, const AdamWHyper& hyper);

class AdamWOp : public core::Op {
 public:
  explicit AdamWOp(AdamWHyper hyper) : hyper_(hyper) {}
  const char* name() const override { return "adamw"; }
  size_t num_outputs() const override { return 3; }  // param, m, v
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  const AdamWHyper& hyper() const { return hyper_; }

 private:
  AdamWHyper hyper_;
};

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_ADAMW_ADAMW_H_
