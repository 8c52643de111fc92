// Shape primitives: reshape (a view), transpose, slice, pad, concat, split, stop_gradient.
// All of them take any dtype (f32, f64, i32).
//
//   Tensor h = ops::Reshape(x, {B, L, H, -1});         // x: (B, L, H*P) -> (B, L, H, P), no copy
//   Tensor t = ops::Transpose(h, {0, 2, 1, 3});        // -> (B, H, L, P)
//   std::vector<Tensor> zx = ops::Split(xz, -1, {E, E});  // (B, L, 2E) -> 2 x (B, L, E)
//   Tensor y = ops::Slice(x, 1, 0, L - 1);             // [0, L-1) along axis 1
#ifndef MIMETIC_OPS_SHAPE_SHAPE_H_
#define MIMETIC_OPS_SHAPE_SHAPE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// Same elements, new shape; one dimension may be -1 (inferred). A view: shares x's storage.
Tensor Reshape(const Tensor& x, core::Shape shape);
// out.shape[i] = x.shape[perm[i]]; copies. perm must be a permutation of 0..rank-1.
Tensor Transpose(const Tensor& x, std::vector<int> perm);
// Elements [start, end) along axis (negative axis counts from the end); 0 <= start <= end <= dim.
// VJP = Pad.
Tensor Slice(const Tensor& x, int axis, int64_t start, int64_t end);
// xs: same rank and dtype, equal sizes except along axis.
Tensor Concat(const std::vector<Tensor>& xs, int axis);
// Pieces of `sizes` along axis (they must add up to the dimension); one multi-output op.
// VJP = Concat of the cotangents.
std::vector<Tensor> Split(const Tensor& x, int axis, const std::vector<int64_t>& sizes);
// `before` and `after` zeros along axis (both >= 0). VJP = Slice.
Tensor Pad(const Tensor& x, int axis, int64_t before, int64_t after);
// A copy of x whose VJP is zero.
Tensor StopGradient(const Tensor& x);

// ---- Op classes (for backends and tests; use the functions above) ----

class ReshapeOp : public core::Op {
 public:
  explicit ReshapeOp(core::Shape shape) : shape_(std::move(shape)) {}
  const char* name() const override { return "reshape"; }
  std::string AttrString() const override;
  bool IsView() const override { return true; }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor>, absl::Span<const Tensor>) const override {
    return absl::OkStatus();  // a view: Call shares the input's storage
  }
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;

 private:
  core::Shape shape_;
};

class TransposeOp : public core::Op {
 public:
  explicit TransposeOp(std::vector<int> perm) : perm_(std::move(perm)) {}
  const char* name() const override { return "transpose"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  const std::vector<int>& perm() const { return perm_; }

 private:
  std::vector<int> perm_;
};

class SliceOp : public core::Op {
 public:
  SliceOp(int axis, int64_t start, int64_t end) : axis_(axis), start_(start), end_(end) {}
  const char* name() const override { return "slice"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int axis() const { return axis_; }
  int64_t start() const { return start_; }
  int64_t end() const { return end_; }

 private:
  int axis_;
  int64_t start_, end_;
};

class PadOp : public core::Op {
 public:
  PadOp(int axis, int64_t before, int64_t after) : axis_(axis), before_(before), after_(after) {}
  const char* name() const override { return "pad"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int axis() const { return axis_; }
  int64_t before() const { return before_; }
  int64_t after() const { return after_; }

 private:
  int axis_;
  int64_t before_, after_;
};

class ConcatOp : public core::Op {
 public:
  explicit ConcatOp(int axis) : axis_(axis) {}
  const char* name() const override { return "concat"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int axis() const { return axis_; }

 private:
  int axis_;
};

class SplitOp : public core::Op {
 public:
  SplitOp(int axis, std::vector<int64_t> sizes) : axis_(axis), sizes_(std::move(sizes)) {}
  const char* name() const override { return "split"; }
  size_t num_outputs() const override {
    return sizes_.empty() ? 1 : sizes_.size();
  }  // empty sizes: one error
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int axis() const { return axis_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }

 private:
  int axis_;
  std::vector<int64_t> sizes_;
};

class StopGradientOp : public core::Op {
 public:
  const char* name() const override { return "stop_gradient"; }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
};

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_SHAPE_SHAPE_H_
