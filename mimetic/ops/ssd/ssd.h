// SSD (Mamba 2, mamba_ssm: mamba2.py, ssd_minimal.py): the state-space-duality scan of a Mamba 2 mixer. One
// SSM per head h with a scalar decay A[h], head dim P, state size N; heads are split into G groups that share
// the input/output projections B and C (head h uses group g = h / (H/G)).
//
//   Δ[t,h]        = softplus(dt[t,h] + dt_bias[h])                     (identity above 20)
//   state[t,h]    = exp(Δ[t,h] A[h]) state[t-1,h] + Δ[t,h] x[t,h,:] ⊗ B[t,g,:]   (P x N), state[-1] = 0
//   y[t,h,:]      = state[t,h] C[t,g,:] + D[h] x[t,h,:]
//   last_state[h] = state[L-1,h]
//
//   SsdResult r = ops::Ssd(x, dt, A, Bm, Cm, D, dt_bias);
//   r.y;            // (B, L, H, P)
//   r.last_state;   // (B, H, P, N), for recurrent inference
//
// Backends: the reference is the sequential recurrence above (the oracle). The fast CPU path is
// the chunked SSD algorithm (mamba_ssm's ssd_minimal.py) with chunks of `chunk_size` steps: per chunk the
// quadratic intra-chunk form (C Bᵀ ∘ exp(segsum)) Δx, the chunk's state contribution, and state-to-output for
// the state entering the chunk; states are passed from chunk to chunk. The last chunk may be shorter (L need
// not be a multiple of chunk_size). Both passes hold only chunk-boundary states.
//
// Differentiable in every input through the SsdBackward primitive, which needs only the forward
// inputs (it recomputes the chunk states). The cotangent of last_state is honoured. Second
// derivatives are not supported (SsdBackward has no VJP).
#ifndef MIMETIC_OPS_SSD_SSD_H_
#define MIMETIC_OPS_SSD_SSD_H_

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

inline constexpr int64_t kSsdDefaultChunk = 64;

struct SsdResult {
  Tensor y;           // (B, L, H, P)
  Tensor last_state;  // (B, H, P, N) = state[L-1]
};

// All inputs share one dtype (f32 or f64).
//   x:       (B, L, H, P)  per-head input
//   dt:      (B, L, H)     time step before bias and softplus
//   A:       (H)           scalar decay per head (negative for a stable scan)
//   Bm, Cm:  (B, L, G, N)  input/output projections per group; H % G == 0
//   D:       (H)           skip connection per head
//   dt_bias: (H)
//   chunk_size >= 1: steps per chunk of the fast chunked algorithm (results do not depend on it
//   beyond rounding).
// Bad input gives error tensors whose status names "ssd" and the input shapes.
SsdResult Ssd(const Tensor& x, const Tensor& dt, const Tensor& A, const Tensor& Bm, const Tensor& Cm,
              const Tensor& D, const Tensor& dt_bias, int64_t chunk_size = kSsdDefaultChunk);

// Cotangents of Ssd's inputs (same metadata as the inputs).
struct SsdGrads {
  Tensor dx;        // (B, L, H, P)
  Tensor ddt;       // (B, L, H)
  Tensor dA;        // (H)
  Tensor dB;        // (B, L, G, N)
  Tensor dC;        // (B, L, G, N)
  Tensor dD;        // (H)
  Tensor ddt_bias;  // (H)
};

// The backward primitive given the forward inputs and the cotangents dy: (B, L, H, P) of y and
// dlast_state: (B, H, P, N) of last_state (an empty Tensor() means zero).
SsdGrads SsdBackward(const Tensor& x, const Tensor& dt, const Tensor& A, const Tensor& Bm, const Tensor& Cm,
                     const Tensor& D, const Tensor& dt_bias, const Tensor& dy, const Tensor& dlast_state,
                     int64_t chunk_size = kSsdDefaultChunk);

// Sizes of a validated call; shared by every backend.
struct SsdDims {
  int64_t batch = 0;       // B
  int64_t length = 0;      // L
  int64_t heads = 0;       // H
  int64_t head_dim = 0;    // P
  int64_t groups = 0;      // G
  int64_t state = 0;       // N
  int64_t chunk_size = 0;  // Q = min(chunk_size attribute, max(L, 1))

  int64_t heads_per_group() const { return heads / groups; }
  int64_t num_chunks() const { return (length + chunk_size - 1) / chunk_size; }
};

// Inputs [x, dt, A, Bm, Cm, D, dt_bias]; outputs {y (B, L, H, P), last_state (B, H, P, N)}.
class SsdOp : public core::Op {
 public:
  explicit SsdOp(int64_t chunk_size) : chunk_size_(chunk_size) {}
  const char* name() const override { return "ssd"; }
  size_t num_outputs() const override { return 2; }  // y, last_state
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  int64_t chunk_size() const { return chunk_size_; }

 private:
  int64_t chunk_size_;
};

// Inputs: SsdOp's inputs, then dy (B, L, H, P) and dlast_state (B, H, P, N).
// Outputs: {dx, ddt, dA, dB, dC, dD, ddt_bias}, each with its input's metadata.
class SsdBackwardOp : public core::Op {
 public:
  explicit SsdBackwardOp(int64_t chunk_size) : chunk_size_(chunk_size) {}
  const char* name() const override { return "ssd_backward"; }
  size_t num_outputs() const override { return 7; }  // dx, ddt, dA, dB, dC, dD, ddt_bias
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  int64_t chunk_size() const { return chunk_size_; }

 private:
  int64_t chunk_size_;
};

// The dims of a call InferMeta accepted (in: at least SsdOp's 7 inputs).
SsdDims GetSsdDims(absl::Span<const Tensor> in, int64_t chunk_size);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_SSD_SSD_H_
