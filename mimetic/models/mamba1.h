// The Mamba 1 mixer (mamba_ssm modules/mamba_simple.py; rows in proj_layout.h): in_proj -> causal depthwise
// conv
// -> SiLU -> x_proj (dt_low | B | C) -> dt_proj + softplus -> selective scan -> y * SiLU(z) -> out_proj.
//
// Parameters under `prefix` ("layers/3/mixer/"), named as mamba_ssm's checkpoints:
//   in_proj/weight (2E, D)   conv1d/weight (E, 1, K)   conv1d/bias (E)   x_proj/weight (R + 2N, E)
//   dt_proj/weight (E, R)    dt_proj/bias (E)          A_log (E, N)      D (E)     out_proj/weight (D, E)
#ifndef MIMETIC_MODELS_MAMBA1_H_
#define MIMETIC_MODELS_MAMBA1_H_

#include <string>

#include "absl/status/status.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/layer_init.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::models {

// mamba_ssm's defaults after the model-level _init_weights pass: out_proj re-drawn and divided by
// out_proj_divisor_sq (n_layer, see lm.h); Linear biases (none here) zero; conv bias kept.
// Checks the spec's fields; errors name "<at>mamba1.<field>" (spec.h BadSpecField).
absl::Status ValidateMamba1(const Mamba1Spec& s, const std::string& at, int64_t d_model);

absl::Status InitMamba1(Key key, const Mamba1Spec& s, int64_t d_model, int64_t out_proj_divisor_sq,
                        const std::string& prefix, NamedTensors* out);

// What the scan saw, for attention maps and init tests (paper Eq. 8; attention_maps.h).
struct Mamba1Internals {
  Tensor xc;        // (B, L, E) scan input after conv + SiLU
  Tensor delta;     // (B, L, E) after softplus(dt + bias)
  Tensor A;         // (E, N)
  Tensor Bm;        // (B, L, N)
  Tensor Cm;        // (B, L, N)
  Tensor conv_in;   // (B, L, E) conv input
  Tensor conv_out;  // (B, L, E) conv output before SiLU
};

// u: (B, L, D) -> (B, L, D). Errors come back as an error tensor naming the op and shapes.
Tensor Mamba1Forward(const core::ParamTree& params, const std::string& prefix, const Mamba1Spec& s,
                     int64_t d_model, const Tensor& u, Mamba1Internals* internals = nullptr);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_MAMBA1_H_
