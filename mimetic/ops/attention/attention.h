// Causal attention: softmax attention (the hybrid model's attention layer: mamba_ssm's
// MHA with causal=True, no rotary) and un-kernelized causal linear attention (the mimetic paper's
// Fig. 5 ablation), with their backward primitives and their (B, H, L, L) attention maps (the mimetic paper's
// Eq. 8).
//
//   softmax: out[b,t,h,:] = sum_{s<=t} softmax_s(scale * q_t·k_s) v_s
//   linear:  out[b,t,h,:] = sum_{s<=t} (q_t·k_s) v_s          (no feature map, no normalizer)
//
//   Tensor y = CausalSoftmaxAttention(q, k, v, 1.0 / std::sqrt(P));   // q, k, v (B, L, H, P)
//   Tensor w = CausalSoftmaxAttentionWeights(q, k, 1.0 / std::sqrt(P)); // (B, H, L, L), rows sum to 1
//   Tensor z = CausalLinearAttention(q, k, v);       // q, k (B, L, H, Pk), v (B, L, H, Pv)
//
// Every function is differentiable in q, k and v (weights: in q and k). The VJPs are the *Backward
// primitives below, which recompute the (L, L) probabilities per (b, h) from q and k rather than
// keeping (B, H, L, L) alive between the forward and the backward pass. Second derivatives are not
// supported (the backward primitives have no VJP).
//
// Fast CPU path (attention_cpu.cc): OpenMP over the B*H heads (static schedule), per head OpenBLAS
// GEMMs on the strided (L, P) slices (leading dimension H*P, no copies) into an (L, L) scratch,
// computed in row blocks of kAttentionRowBlock so most of the masked upper triangle is skipped.
// Linear attention uses either that quadratic form or the chunked one (quadratic within a block,
// a recurrent (Pk, Pv) state between blocks), whichever needs fewer multiply-adds for the shape
// (LinearAttentionUsesChunkedForm); both are all GEMMs.
#ifndef MIMETIC_OPS_ATTENTION_ATTENTION_H_
#define MIMETIC_OPS_ATTENTION_ATTENTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// Rows of the (L, L) score matrix one GEMM computes in the fast CPU path; a row block [i0, i1)
// multiplies only columns [0, i1), which skips most of the masked upper triangle.
inline constexpr int64_t kAttentionRowBlock = 32;

// ---- Softmax attention. All float inputs share one dtype (f32 or f64); scale must be finite.
// q, k: (B, L, H, Pk); v: (B, L, H, Pv) -> (B, L, H, Pv). (The model uses Pk == Pv == P.)
Tensor CausalSoftmaxAttention(const Tensor& q, const Tensor& k, const Tensor& v, double scale);
// The attention probabilities: (B, H, L, L), w[b,h,t,s] = softmax_s(scale q_t·k_s) for s <= t, 0 above.
Tensor CausalSoftmaxAttentionWeights(const Tensor& q, const Tensor& k, double scale);
// Backward of CausalSoftmaxAttention given dout: (B, L, H, Pv). Returns {dq, dk, dv}.
std::vector<Tensor> CausalSoftmaxAttentionBackward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                   const Tensor& dout, double scale);
// Backward of CausalSoftmaxAttentionWeights given dweights: (B, H, L, L) (entries above the
// diagonal are ignored). Returns {dq, dk}.
std::vector<Tensor> CausalSoftmaxAttentionWeightsBackward(const Tensor& q, const Tensor& k,
                                                          const Tensor& dweights, double scale);

// ---- Un-kernelized causal linear attention.
// q, k: (B, L, H, Pk); v: (B, L, H, Pv) -> (B, L, H, Pv); Pk may differ from Pv.
Tensor CausalLinearAttention(const Tensor& q, const Tensor& k, const Tensor& v);
// Its map: (B, H, L, L), w[b,h,t,s] = q_t·k_s for s <= t, 0 above.
Tensor CausalLinearAttentionWeights(const Tensor& q, const Tensor& k);
// Backward of CausalLinearAttention given dout: (B, L, H, Pv). Returns {dq, dk, dv}.
std::vector<Tensor> CausalLinearAttentionBackward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                  const Tensor& dout);
// Backward of CausalLinearAttentionWeights given dweights: (B, H, L, L). Returns {dq, dk}.
std::vector<Tensor> CausalLinearAttentionWeightsBackward(const Tensor& q, const Tensor& k,
                                                         const Tensor& dweights);

// ---- The primitives. One class per role; `kind` picks softmax or linear (the op's name says which).
// Linear attention always has scale 1: its weights are the raw scores scale * q_t·k_s, masked.
enum class AttentionKind : uint8_t { kSoftmax, kLinear };

class CausalAttentionOpBase : public core::Op {
 public:
  CausalAttentionOpBase(AttentionKind kind, double scale) : kind_(kind), scale_(scale) {}
  std::string AttrString() const override;
  AttentionKind kind() const { return kind_; }
  double scale() const { return scale_; }

 private:
  AttentionKind kind_;
  double scale_;
};

// in: q, k (B, L, H, Pk), v (B, L, H, Pv). out: (B, L, H, Pv).
class CausalAttentionOp : public CausalAttentionOpBase {
 public:
  using CausalAttentionOpBase::CausalAttentionOpBase;
  const char* name() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
};

// in: q, k, v, dout (B, L, H, Pv). out: dq, dk (B, L, H, Pk), dv (B, L, H, Pv).
class CausalAttentionBackwardOp : public CausalAttentionOpBase {
 public:
  using CausalAttentionOpBase::CausalAttentionOpBase;
  const char* name() const override;
  size_t num_outputs() const override { return 3; }  // dq, dk, dv
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
};

// in: q, k (B, L, H, Pk). out: weights (B, H, L, L).
class CausalAttentionWeightsOp : public CausalAttentionOpBase {
 public:
  using CausalAttentionOpBase::CausalAttentionOpBase;
  const char* name() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
};

// in: q, k (B, L, H, Pk), dweights (B, H, L, L). out: dq, dk (B, L, H, Pk).
class CausalAttentionWeightsBackwardOp : public CausalAttentionOpBase {
 public:
  using CausalAttentionOpBase::CausalAttentionOpBase;
  const char* name() const override;
  size_t num_outputs() const override { return 2; }  // dq, dk
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
};

// The sizes of a validated call, shared by every backend (and the CUDA launchers).
struct AttentionDims {
  int64_t batch = 0, length = 0, heads = 0, key_dim = 0, value_dim = 0;  // B, L, H, Pk, Pv
};
AttentionDims GetAttentionDims(const core::TensorMeta& q, const core::TensorMeta* v);

// Whether the fast CPU path computes linear attention (forward and backward) in the chunked form:
// per block of kAttentionRowBlock rows, the diagonal block quadratically and all earlier blocks
// through the recurrent (Pk, Pv) state, ~L·C·(Pk + Pv) + 2·L·Pk·Pv multiply-adds against the
// quadratic form's ~L²·(Pk + Pv)/2. Picked by that count: chunked when Pk·Pv is small against
// L·(Pk + Pv) (e.g. L 103 at P 32), quadratic for wide heads (P 64 at L 103, the paper's P 1024).
// Measured (B 64, L 103, H 1, one thread, forward / forward+backward): P 32 chunked 0.63 / 2.2 ms vs
// quadratic 0.82 / 2.7 ms; P 64 chunked 1.72 / 5.7 ms vs quadratic 1.58 / 5.3 ms.
bool LinearAttentionUsesChunkedForm(const AttentionDims& d);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_ATTENTION_ATTENTION_H_
