// LinearParts: a Linear layer's product x Wᵀ returned in parts along the output axis, computed as
// one product per part (no (..., S) activation written and then split), with a fused backward:
// dx = Σ_i g_i W_i summed tile by tile in one pass (no separate accumulation of the parts' input
// gradients) and dW written whole (no concatenation of the parts' weight gradients).
//
//   // x (B, L, D), w (E + E + N, D) -> z (B, L, E), xs (B, L, E), b (B, L, N)
//   std::vector<Tensor> zxb = LinearParts(x, w, {E, E, N});
//
// CPU only (the CUDA path keeps one MatMul per part; see models/param_access.cc). The forward runs
// the same GEMMs as MatMul(x, W_i, false, true) per part, so its bits equal the per-part products.
#ifndef MIMETIC_OPS_LINEAR_PARTS_LINEAR_PARTS_H_
#define MIMETIC_OPS_LINEAR_PARTS_LINEAR_PARTS_H_

#include <string>
#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// x (..., K) f32|f64, w (S, K) same dtype, sizes > 0 with Σ sizes = S -> y_i (..., sizes[i]) =
// x @ w[o_i : o_i + sizes[i]]ᵀ with o_i = Σ_{j<i} sizes[j].
std::vector<Tensor> LinearParts(const Tensor& x, const Tensor& w, std::vector<int64_t> sizes);

// (dx, dw) of LinearParts from the parts' cotangents g_i (..., sizes[i]).
std::vector<Tensor> LinearPartsBackward(const Tensor& x, const Tensor& w, const std::vector<Tensor>& g);

class LinearPartsOp : public core::Op {
 public:
  explicit LinearPartsOp(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {}
  const char* name() const override { return "linear_parts"; }
  size_t num_outputs() const override { return sizes_.size(); }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  const std::vector<int64_t>& sizes() const { return sizes_; }

 private:
  std::vector<int64_t> sizes_;
};

// Inputs (x, w, g_0, ..., g_{n-1}) -> (dx, dw).
class LinearPartsBackwardOp : public core::Op {
 public:
  explicit LinearPartsBackwardOp(std::vector<int64_t> sizes) : sizes_(std::move(sizes)) {}
  const char* name() const override { return "linear_parts_backward"; }
  size_t num_outputs() const override { return 2; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;

 private:
  std::vector<int64_t> sizes_;
};

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_LINEAR_PARTS_LINEAR_PARTS_H_
