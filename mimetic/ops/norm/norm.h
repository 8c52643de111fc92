// Normalisation primitives: RMSNorm and LayerNorm over the last dimension (mamba_ssm's mixer_seq_simple.py)
// and Mamba 2's gated, grouped RMSNorm (mamba_ssm's mamba2.py). Each is one fused primitive with a fused
// backward primitive that returns every input cotangent at once.
//
//   Tensor h = RmsNorm(x, w, 1e-5);                       // x: (B, L, D), w: (D)
//   Tensor o = GatedRmsNorm(y, z, w, /*group_size=*/E, 1e-5);  // y, z: (B, L, E), w: (E)
//
// Every function accepts f32 or f64 (all inputs of one dtype) and returns an error tensor naming the
// op and the input shapes when the inputs do not fit.
#ifndef MIMETIC_OPS_NORM_NORM_H_
#define MIMETIC_OPS_NORM_NORM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// x: (..., D); weight: (D). y = x / sqrt(mean(x^2) + eps) * weight. -> (..., D)
Tensor RmsNorm(const Tensor& x, const Tensor& weight, double eps);
// x: (..., D); weight, bias: (D). y = (x - mean) / sqrt(var + eps) * weight + bias with the biased
// variance (as torch.nn.LayerNorm). -> (..., D)
Tensor LayerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps);
// Mamba 2's RMSNormGated with norm_before_gate=False: n = y * silu(z); per group of `group_size`
// consecutive channels of the last dim: out = n / sqrt(mean_group(n^2) + eps) * weight.
// y, z: (..., E); weight: (E); E % group_size == 0 (else error naming E and group_size). -> (..., E)
Tensor GatedRmsNorm(const Tensor& y, const Tensor& z, const Tensor& weight, int64_t group_size, double eps);

// Backward primitives (what the VJPs call). Each returns the cotangents of the forward's inputs, in
// the forward's input order, given dout (the cotangent of the forward's output, same shape).
// -> {dx (..., D), dweight (D)}
std::vector<Tensor> RmsNormBackward(const Tensor& x, const Tensor& weight, const Tensor& dout, double eps);
// -> {dx (..., D), dweight (D), dbias (D)}
std::vector<Tensor> LayerNormBackward(const Tensor& x, const Tensor& weight, const Tensor& dout, double eps);
// -> {dy (..., E), dz (..., E), dweight (E)}
std::vector<Tensor> GatedRmsNormBackward(const Tensor& y, const Tensor& z, const Tensor& weight,
                                         const Tensor& dout, int64_t group_size, double eps);

// The op classes (public so the CUDA kernels can read the attributes).

// Inputs (x, weight) -> (y).
class RmsNormOp : public core::Op {
 public:
  explicit RmsNormOp(double eps) : eps_(eps) {}
  const char* name() const override { return "rms_norm"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  double eps() const { return eps_; }

 private:
  double eps_;
};

// Inputs (x, weight, dout) -> (dx, dweight). Not itself differentiable.
class RmsNormBackwardOp : public core::Op {
 public:
  explicit RmsNormBackwardOp(double eps) : eps_(eps) {}
  const char* name() const override { return "rms_norm_backward"; }
  size_t num_outputs() const override { return 2; }  // dx, dweight
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  double eps() const { return eps_; }

 private:
  double eps_;
};

// Inputs (x, weight, bias) -> (y).
class LayerNormOp : public core::Op {
 public:
  explicit LayerNormOp(double eps) : eps_(eps) {}
  const char* name() const override { return "layer_norm"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  double eps() const { return eps_; }

 private:
  double eps_;
};

// Inputs (x, weight, dout) -> (dx, dweight, dbias). Not itself differentiable.
class LayerNormBackwardOp : public core::Op {
 public:
  explicit LayerNormBackwardOp(double eps) : eps_(eps) {}
  const char* name() const override { return "layer_norm_backward"; }
  size_t num_outputs() const override { return 3; }  // dx, dweight, dbias
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  double eps() const { return eps_; }

 private:
  double eps_;
};

// Inputs (y, z, weight) -> (out).
class GatedRmsNormOp : public core::Op {
 public:
  GatedRmsNormOp(int64_t group_size, double eps) : group_size_(group_size), eps_(eps) {}
  const char* name() const override { return "gated_rms_norm"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int64_t group_size() const { return group_size_; }
  double eps() const { return eps_; }

 private:
  int64_t group_size_;
  double eps_;
};

// Inputs (y, z, weight, dout) -> (dy, dz, dweight). Not itself differentiable.
class GatedRmsNormBackwardOp : public core::Op {
 public:
  GatedRmsNormBackwardOp(int64_t group_size, double eps) : group_size_(group_size), eps_(eps) {}
  const char* name() const override { return "gated_rms_norm_backward"; }
  size_t num_outputs() const override { return 3; }  // dy, dz, dweight
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  int64_t group_size() const { return group_size_; }
  double eps() const { return eps_; }

 private:
  int64_t group_size_;
  double eps_;
};

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_NORM_NORM_H_
