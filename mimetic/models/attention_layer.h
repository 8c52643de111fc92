// Attention mixers for hybrids and ablations.
//
// Softmax attention = mamba_ssm's MHA(num_heads, causal=True), no rotary (mamba_ssm modules/mha.py):
//   in_proj/weight (3 H P, D) [q | k | v]   in_proj/bias (3 H P)   out_proj/weight (D, H P)   out_proj/bias
//   (D)
// Linear attention (paper §4, Fig. 5): y_t = W_o sum_{s<=t} (q_t . k_s) v_s, no feature map:
//   q_proj/weight, k_proj/weight, v_proj/weight (H P, D)   out_proj/weight (D, H P)
#ifndef MIMETIC_MODELS_ATTENTION_LAYER_H_
#define MIMETIC_MODELS_ATTENTION_LAYER_H_

#include <string>

#include "absl/status/status.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/layer_init.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::models {

// Check the specs' fields; errors name "<at>attention.<field>" (spec.h BadSpecField).
absl::Status ValidateAttention(const AttentionSpec& s, const std::string& at, int64_t d_model);
absl::Status ValidateLinearAttention(const LinearAttentionSpec& s, const std::string& at, int64_t d_model);

absl::Status InitAttention(Key key, const AttentionSpec& s, int64_t d_model, int64_t out_proj_divisor_sq,
                           const std::string& prefix, NamedTensors* out);
absl::Status InitLinearAttention(Key key, const LinearAttentionSpec& s, int64_t d_model,
                                 int64_t out_proj_divisor_sq, const std::string& prefix, NamedTensors* out);

struct AttentionInternals {
  Tensor q, k, v;  // (B, L, H, P)
};

// u: (B, L, D) -> (B, L, D).
Tensor AttentionForward(const core::ParamTree& params, const std::string& prefix, const AttentionSpec& s,
                        int64_t d_model, const Tensor& u, AttentionInternals* internals = nullptr);
Tensor LinearAttentionForward(const core::ParamTree& params, const std::string& prefix,
                              const LinearAttentionSpec& s, int64_t d_model, const Tensor& u,
                              AttentionInternals* internals = nullptr);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_ATTENTION_LAYER_H_
