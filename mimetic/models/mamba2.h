// The Mamba 2 mixer (mamba_ssm modules/mamba2.py; rows in proj_layout.h): one in_proj giving [z | x | B | C |
// dt]
// -> causal depthwise conv over the xBC channels -> SiLU -> SSD with scalar A per head + D skip
// -> gated RMSNorm RMS(y * SiLU(z)) * w (norm_before_gate=False) -> out_proj.
//
// Parameters under `prefix`, named as mamba_ssm's checkpoints:
//   in_proj/weight (2E + 2GN + H, D)   conv1d/weight (E + 2GN, 1, K)   conv1d/bias (E + 2GN)
//   dt_bias (H)   A_log (H)   D (H)   norm/weight (E)   out_proj/weight (D, E)
#ifndef MIMETIC_MODELS_MAMBA2_H_
#define MIMETIC_MODELS_MAMBA2_H_

#include <string>

#include "absl/status/status.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/layer_init.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::models {

// Checks the spec's fields; errors name "<at>mamba2.<field>" (spec.h BadSpecField).
absl::Status ValidateMamba2(const Mamba2Spec& s, const std::string& at, int64_t d_model);

absl::Status InitMamba2(Key key, const Mamba2Spec& s, int64_t d_model, int64_t out_proj_divisor_sq,
                        const std::string& prefix, NamedTensors* out);

struct Mamba2Internals {
  Tensor x;         // (B, L, H, P) scan input
  Tensor delta;     // (B, L, H) softplus(dt + dt_bias)
  Tensor A;         // (H)
  Tensor Bm;        // (B, L, G, N)
  Tensor Cm;        // (B, L, G, N)
  Tensor conv_in;   // (B, L, E + 2GN)
  Tensor conv_out;  // (B, L, E + 2GN) before SiLU
};

// u: (B, L, D) -> (B, L, D).
Tensor Mamba2Forward(const core::ParamTree& params, const std::string& prefix, const Mamba2Spec& s,
                     int64_t d_model, const Tensor& u, Mamba2Internals* internals = nullptr);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_MAMBA2_H_
