// Reverse-mode differentiation by tracing: ValueAndGrad(f) runs f once while a tape records every
// primitive that depends on the parameters, then walks the tape backwards calling each op's Vjp.
// Vjp rules are ordinary primitive calls, so the backward pass is itself recorded by any outer
// tracer: a ValueAndGrad inside Jit captures forward and backward in one graph, and nesting two
// ValueAndGrads gives second derivatives.
//
//   auto loss_fn = [](const ParamTree& p, absl::Span<const Tensor> batch) {
//     return ops::Mean(ops::Square(ops::MatMul(batch[0], p.Get("w").value())));
//   };
//   ASSIGN_OR_RETURN(ValueAndGradResult r, ValueAndGrad(loss_fn)(params, {x}));
//   r.value;   // f32() scalar
//   r.grads;   // same paths, shapes and dtypes as params
#ifndef MIMETIC_CORE_AUTODIFF_H_
#define MIMETIC_CORE_AUTODIFF_H_

#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

using LossFn = std::function<Tensor(const ParamTree& params, absl::Span<const Tensor> inputs)>;

struct ValueAndGradResult {
  Tensor value;     // the scalar loss
  ParamTree grads;  // d value / d params, same structure as params
};

class ValueAndGradFn {
 public:
  explicit ValueAndGradFn(LossFn f) : f_(std::move(f)) {}
  // Fails when f's result is an error, is not a single-element floating tensor, or a Vjp fails.
  absl::StatusOr<ValueAndGradResult> operator()(const ParamTree& params, absl::Span<const Tensor> inputs) const;

 private:
  LossFn f_;
};

inline ValueAndGradFn ValueAndGrad(LossFn f) { return ValueAndGradFn(std::move(f)); }

// Lower level: cotangents of `wrt` for `output` (any shape) given its cotangent `seed`, where
// `output` was computed from `wrt` by `f` under a tape. Used by ValueAndGrad and by tests of VJPs.
absl::StatusOr<std::vector<Tensor>> Vjp(const std::function<std::vector<Tensor>(absl::Span<const Tensor>)>& f,
                                        absl::Span<const Tensor> wrt, absl::Span<const Tensor> seeds);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_AUTODIFF_H_
