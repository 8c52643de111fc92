// The arithmetic of one training step, counted from the model's sizes, so that benchmarks can report
// GFLOP/s against the machine's peak. 2 flops per multiply-add; T = batch x length tokens.
//   GEMMs:  Mamba 1  2 T (D 2E + E (R + 2N) + R E + E D)   (in_proj, x_proj, dt_proj, out_proj)
//           Mamba 2  2 T (D (2E + 2GN + H) + E D)          (in_proj, out_proj)
//           tied LM head  2 T D V (V the padded vocabulary)
//           forward x1; forward + backward x3 (dX and dW each cost a forward GEMM).
//   Scan:   Mamba 1  9 T E N forward, 27 T E N forward + backward (selective_scan_benchmark's count);
//           Mamba 2  the chunked SSD's products with the causal halves of the q x q blocks, per chunk
//                    of q steps (ssd_benchmark's count):
//                      forward   G N q(q+1) + H (4 q N P + P q(q+1))
//                      backward  G N q(q+1) + H (10 q N P + 2 P q(q+1) + 2 N q(q+1))
//   Not counted (O(T E) each): conv, SiLU, softplus, gating, norms, embedding, loss, optimizer.
//
//   ASSIGN_OR_RETURN(double f, TrainStepFlops(spec, /*batch=*/64, /*length=*/128));
#ifndef MIMETIC_MODELS_FLOPS_H_
#define MIMETIC_MODELS_FLOPS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "mimetic/models/spec.h"

namespace mimetic::models {

// One Mamba 1 mixer layer's flops over `batch` rows of `length` tokens (backward: forward + backward).
double Mamba1LayerFlops(const Mamba1Dims& d, int64_t batch, int64_t length, bool backward);
// One Mamba 2 mixer layer's flops; the SSD is counted chunk by chunk (the last chunk may be short).
double Mamba2LayerFlops(const Mamba2Dims& d, int64_t chunk, int64_t batch, int64_t length, bool backward);

// Forward + backward of the whole language model of a resolved spec (Mamba layers and the tied
// head). Unimplemented for attention, linear attention and MLP layers, which are not counted yet.
absl::StatusOr<double> TrainStepFlops(const ModelSpec& spec, int64_t batch, int64_t length);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_FLOPS_H_
