// Reductions and broadcasting: sums and means over an axis or everything, SumTo (the inverse of
// broadcasting, used by every binary VJP), BroadcastTo, Max and ArgMax.
//
//   Tensor loss = ops::MeanAll(ops::Square(err));     // err: (B, L, V) -> f32()
//   Tensor db = ops::SumTo(dy, bias.shape());          // dy: (B, L, E) -> (E)
//   Tensor m = ops::Max(logits, -1, /*keepdims=*/true);  // (B, L, V) -> (B, L, 1)
//
// Deterministic: the fast path splits a long reduction into blocks whose count depends only on
// the shape (never on the thread count) and adds the blocks' partial sums in order.
#ifndef MIMETIC_OPS_REDUCE_REDUCE_H_
#define MIMETIC_OPS_REDUCE_REDUCE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// x: (..., n, ...) f32|f64 -> x without axis (or with it as 1 when keepdims). Negative axis
// counts from the end. Mean over an empty axis is NaN.
Tensor Sum(const Tensor& x, int axis, bool keepdims = false);
Tensor Mean(const Tensor& x, int axis, bool keepdims = false);
// x: any shape -> rank 0.
Tensor SumAll(const Tensor& x);
Tensor MeanAll(const Tensor& x);
// Sums x over the dimensions along which `shape` would be broadcast to x's shape (right-aligned;
// missing or size-1 dims of `shape`); an error when `shape` does not broadcast to x's shape.
Tensor SumTo(const Tensor& x, const core::Shape& shape);
// Repeats x along missing or size-1 dimensions (numpy rules). VJP = SumTo.
Tensor BroadcastTo(const Tensor& x, const core::Shape& shape);
// Max over axis; the VJP goes to the first maximal element. An empty axis is an error.
Tensor Max(const Tensor& x, int axis, bool keepdims = false);
// Index of the first maximal element along axis -> i32, x's shape without axis. Zero gradient.
Tensor ArgMax(const Tensor& x, int axis);

// ---- Op classes (for backends and tests; use the functions above) ----

// Sum (or mean) over one axis. The kernels view x as (outer, n, inner).
class SumOp : public core::Op {
 public:
  SumOp(int axis, bool keepdims, bool mean) : axis_(axis), keepdims_(keepdims), mean_(mean) {}
  const char* name() const override { return mean_ ? "mean" : "sum"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int axis() const { return axis_; }
  bool keepdims() const { return keepdims_; }
  bool mean() const { return mean_; }

 private:
  int axis_;
  bool keepdims_;
  bool mean_;
};

class SumToOp : public core::Op {
 public:
  explicit SumToOp(core::Shape shape) : shape_(std::move(shape)) {}
  const char* name() const override { return "sum_to"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  const core::Shape& shape() const { return shape_; }

 private:
  core::Shape shape_;
};

class BroadcastToOp : public core::Op {
 public:
  explicit BroadcastToOp(core::Shape shape) : shape_(std::move(shape)) {}
  const char* name() const override { return "broadcast_to"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  const core::Shape& shape() const { return shape_; }

 private:
  core::Shape shape_;
};

// Max (arg = false: values in x's dtype) or ArgMax (arg = true: i32 indices) over one axis.
class MaxOp : public core::Op {
 public:
  MaxOp(int axis, bool keepdims, bool arg) : axis_(axis), keepdims_(keepdims), arg_(arg) {}
  const char* name() const override { return arg_ ? "argmax" : "max"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int axis() const { return axis_; }
  bool keepdims() const { return keepdims_; }
  bool arg() const { return arg_; }

 private:
  int axis_;
  bool keepdims_;
  bool arg_;
};

// Max's VJP: inputs (x, g) with g of Max's output size; output x-shaped, g at the first maximal
// element of each reduced line and 0 elsewhere.
class MaxBackwardOp : public core::Op {
 public:
  explicit MaxBackwardOp(int axis) : axis_(axis) {}
  const char* name() const override { return "max_backward"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int axis() const { return axis_; }

 private:
  int axis_;
};

namespace internal {
// axis in [-rank, rank) -> [0, rank), or InvalidArgument naming the axis and the rank.
absl::StatusOr<int> NormalizeAxis(int axis, int rank);
// x viewed as (outer, n, inner) around axis.
void SplitAroundAxis(const core::Shape& shape, int axis, int64_t* outer, int64_t* n, int64_t* inner);
}  // namespace internal

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_REDUCE_REDUCE_H_
