// The two primitives the core transformations need themselves: a constant fill (seed cotangent,
// zeros for unused outputs) and same-shape accumulation (summing cotangents). The full op
// library, with broadcasting, lives in mimetic/ops.
//
//   Tensor one = Fill(loss.meta(), 1.0);
//   Tensor total = Accumulate(grad_a, grad_b);   // shapes and dtypes must match exactly
#ifndef MIMETIC_CORE_BUILTIN_OPS_H_
#define MIMETIC_CORE_BUILTIN_OPS_H_

#include <string>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

class FillOp : public Op {
 public:
  FillOp(TensorMeta meta, double value) : meta_(std::move(meta)), value_(value) {}
  const char* name() const override { return "fill"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  const TensorMeta& meta() const { return meta_; }
  double value() const { return value_; }

 private:
  TensorMeta meta_;
  double value_;
};

class AccumulateOp : public Op {
 public:
  const char* name() const override { return "accumulate"; }
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  // f32/f64: the reference's sums, split over OpenMP threads for large tensors.
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
};

// A tensor of `meta` with every element `value`.
Tensor Fill(const TensorMeta& meta, double value);
// a + b for tensors of identical metadata.
Tensor Accumulate(const Tensor& a, const Tensor& b);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_BUILTIN_OPS_H_
