// Selective scan (Mamba 1, mamba_ssm: selective_scan_ref, selective_scan_bwd_kernel.cuh): the input-dependent
// linear recurrence of a Mamba 1 mixer, one diagonal SSM per channel d with state size N, with an exact
// backward pass.
//
//   dt[t,d]     = softplus(delta[t,d] + delta_bias[d])     (or delta + delta_bias without softplus)
//   h[t,d,n]    = exp(dt[t,d] A[d,n]) h[t-1,d,n] + dt[t,d] B[t,n] u[t,d],     h[-1] = 0
//   y[t,d]      = (sum_n C[t,n] h[t,d,n] + D[d] u[t,d]) * silu(z[t,d])        (gate only when z given)
//   last_state  = h[L-1]
//
//   SelectiveScanResult r = ops::SelectiveScan(u, delta, A, Bm, Cm, D, z, delta_bias,
//                                              /*delta_softplus=*/true);
//   r.y;            // (B, L, E)
//   r.last_state;   // (B, E, N), for recurrent inference
//
// Differentiable in every input. The VJP is the SelectiveScanBackward primitive, which needs only
// the forward inputs: it recomputes the states chunk by chunk (chunk_size steps; boundary states
// O(B·E·N·L/chunk_size)), so neither pass ever holds the O(B·L·E·N) states (the reference
// implementations, the test oracles, do). The cotangent of last_state is honoured too.
// Second derivatives are not supported (SelectiveScanBackward has no VJP).
#ifndef MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_H_
#define MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// Steps per recomputation chunk of the backward pass (an attribute so tests can use small chunks).
inline constexpr int64_t kSelectiveScanDefaultChunk = 64;

struct SelectiveScanResult {
  Tensor y;           // (B, L, E)
  Tensor last_state;  // (B, E, N) = h[L-1]
};

// All float inputs share one dtype (f32 or f64).
//   u:          (B, L, E)  the scan input (x_c after conv + SiLU)
//   delta:      (B, L, E)  time step before bias and softplus
//   A:          (E, N)     state matrix (diagonal per channel; negative for a stable scan)
//   Bm, Cm:     (B, L, N)  input/output projections, shared over channels (Mamba 1)
//   D:          (E)        skip connection
//   z:          (B, L, E)  gate, or an empty Tensor() for no gate
//   delta_bias: (E)        or an empty Tensor() for none
//   delta_softplus: dt = softplus(delta + delta_bias), identity above 20 (as the CUDA kernels).
//   chunk_size: steps per recomputation chunk of the backward (>= 1); trades recomputation for
//     scratch memory and never changes a result bit on CPU.
// Bad input gives error tensors whose status names "selective_scan" and the shapes.
SelectiveScanResult SelectiveScan(const Tensor& u, const Tensor& delta, const Tensor& A, const Tensor& Bm,
                                  const Tensor& Cm, const Tensor& D, const Tensor& z,
                                  const Tensor& delta_bias, bool delta_softplus,
                                  int64_t chunk_size = kSelectiveScanDefaultChunk);

// Cotangents of SelectiveScan's inputs; dz / ddelta_bias are empty Tensor()s when z / delta_bias were.
struct SelectiveScanGrads {
  Tensor du;           // (B, L, E)
  Tensor ddelta;       // (B, L, E)
  Tensor dA;           // (E, N)
  Tensor dB;           // (B, L, N)
  Tensor dC;           // (B, L, N)
  Tensor dD;           // (E)
  Tensor dz;           // (B, L, E) or empty
  Tensor ddelta_bias;  // (E) or empty
};

// The backward primitive (as mamba_ssm's selective_scan_bwd_kernel.cuh) given the forward inputs and the
// cotangents
//   dy: (B, L, E) of y, and dlast_state: (B, E, N) of last_state (or an empty Tensor() for zero).
SelectiveScanGrads SelectiveScanBackward(const Tensor& u, const Tensor& delta, const Tensor& A,
                                         const Tensor& Bm, const Tensor& Cm, const Tensor& D, const Tensor& z,
                                         const Tensor& delta_bias, const Tensor& dy,
                                         const Tensor& dlast_state, bool delta_softplus,
                                         int64_t chunk_size = kSelectiveScanDefaultChunk);

// Static attributes shared by the forward and backward ops. The ops' inputs are the present ones of
// [u, delta, A, Bm, Cm, D, z?, delta_bias?] (the backward appends dy, dlast_state).
struct SelectiveScanAttrs {
  bool has_z = false;
  bool has_delta_bias = false;
  bool delta_softplus = false;
  int64_t chunk_size = kSelectiveScanDefaultChunk;

  int num_forward_inputs() const { return 6 + (has_z ? 1 : 0) + (has_delta_bias ? 1 : 0); }
  int z_index() const { return has_z ? 6 : -1; }
  int delta_bias_index() const { return has_delta_bias ? 6 + (has_z ? 1 : 0) : -1; }
  std::string ToString() const;
};

// Outputs {y (B, L, E), last_state (B, E, N)}.
class SelectiveScanOp : public core::Op {
 public:
  explicit SelectiveScanOp(SelectiveScanAttrs attrs) : attrs_(attrs) {}
  const char* name() const override { return "selective_scan"; }
  size_t num_outputs() const override { return 2; }  // y, last_state
  std::string AttrString() const override { return attrs_.ToString(); }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  const SelectiveScanAttrs& attrs() const { return attrs_; }

 private:
  SelectiveScanAttrs attrs_;
};

// Inputs: the forward op's inputs, then dy (B, L, E) and dlast_state (B, E, N).
// Outputs: one cotangent per forward input, in the same order and with the same metadata.
class SelectiveScanBackwardOp : public core::Op {
 public:
  explicit SelectiveScanBackwardOp(SelectiveScanAttrs attrs) : attrs_(attrs) {}
  const char* name() const override { return "selective_scan_backward"; }
  size_t num_outputs() const override {
    return attrs_.num_forward_inputs();
  }  // one cotangent per forward input
  std::string AttrString() const override { return attrs_.ToString(); }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  const SelectiveScanAttrs& attrs() const { return attrs_; }

 private:
  SelectiveScanAttrs attrs_;
};

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_H_
