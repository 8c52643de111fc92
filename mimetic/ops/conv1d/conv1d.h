// Causal depthwise 1-D convolution over the sequence axis (mamba_ssm's mamba_simple.py, used by Mamba 1 and
// Mamba 2): each channel c has its own K taps; tap K-1 multiplies the current token, tap 0 the token K-1
// steps back, and positions before the sequence start read as zero.
//
//   Tensor xc = CausalConv1d(x, w, b);   // x: (B, L, C), w: (C, K), b: (C) -> (B, L, C)
//
// The mimetic "identity conv" (the mimetic paper, Sec. 3) is w[:, K-1] = 1, w[:, :K-1] = 0, b = 0: out == x
// exactly.
#ifndef MIMETIC_OPS_CONV1D_CONV1D_H_
#define MIMETIC_OPS_CONV1D_CONV1D_H_

#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// out[b,t,c] = bias[c] + sum_{k=0}^{K-1} weight[c,k] * x[b, t-(K-1)+k, c], x[<0] = 0.
// x: (B, L, C) f32|f64; weight: (C, K); bias: (C); one dtype. -> (B, L, C)
Tensor CausalConv1d(const Tensor& x, const Tensor& weight, const Tensor& bias);

// The backward primitive the VJP calls: cotangents of (x, weight, bias) given dout (B, L, C).
// -> {dx (B, L, C), dweight (C, K), dbias (C)}
std::vector<Tensor> CausalConv1dBackward(const Tensor& x, const Tensor& weight, const Tensor& dout);

// SiLU(CausalConv1d(x, weight, bias)) in one pass (Mamba's conv and its activation): the values and
// gradients of Silu(CausalConv1d(x, weight, bias)), bit for bit on CPU, without the activation's own
// passes over memory (the conv is written once, for the backward, and not read back). -> (B, L, C)
Tensor CausalConv1dSilu(const Tensor& x, const Tensor& weight, const Tensor& bias);

// Its backward primitive: cotangents of (x, weight, bias) given conv = CausalConv1d(x, weight, bias)
// and dout (B, L, C), the cotangent of the activation.
std::vector<Tensor> CausalConv1dSiluBackward(const Tensor& x, const Tensor& weight, const Tensor& conv,
                                             const Tensor& dout);

// Inputs (x, weight, bias) -> (out); with silu ("causal_conv1d_silu") -> (SiLU(conv), conv), the
// second output kept for the VJP only (its cotangent is ignored: CausalConv1dSilu never returns it).
class CausalConv1dOp : public core::Op {
 public:
  explicit CausalConv1dOp(bool silu = false) : silu_(silu) {}
  const char* name() const override { return silu_ ? "causal_conv1d_silu" : "causal_conv1d"; }
  size_t num_outputs() const override { return silu_ ? 2 : 1; }
  bool VjpReadsOutputGrad(size_t output) const override { return output == 0; }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;

 private:
  bool silu_;
};

// Inputs (x, weight, dout) -> (dx, dweight, dbias); with silu ("causal_conv1d_silu_backward"), inputs
// (x, weight, conv, dout) and dout the cotangent of SiLU(conv). Not itself differentiable.
class CausalConv1dBackwardOp : public core::Op {
 public:
  explicit CausalConv1dBackwardOp(bool silu = false) : silu_(silu) {}
  const char* name() const override {
    return silu_ ? "causal_conv1d_silu_backward" : "causal_conv1d_backward";
  }
  size_t num_outputs() const override { return 3; }  // dx, dweight, dbias
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;

 private:
  bool silu_;
};

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_CONV1D_CONV1D_H_
