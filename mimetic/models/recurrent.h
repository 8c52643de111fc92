// Recurrent inference: one token at a time with explicit state (mamba_ssm's step() of modules/mamba_simple.py
// and modules/mamba2.py): a conv ring buffer and SSM state for Mamba layers, a KV cache for softmax
// attention, a running sum of k ⊗ v for linear attention. Step's logits equal the full forward's logits at
// the same position.
//
//   ASSIGN_OR_RETURN(RecurrentState state, InitRecurrentState(spec, /*batch=*/1));
//   for (int32_t tok : prompt) ASSIGN_OR_RETURN(logits, Step(params, spec, {tok}, &state));
//   ASSIGN_OR_RETURN(std::vector<int32_t> out, GreedyGenerate(params, spec, prompt, 50, /*stop=*/eos));
#ifndef MIMETIC_MODELS_RECURRENT_H_
#define MIMETIC_MODELS_RECURRENT_H_

#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::models {

struct LayerState {
  std::vector<float> conv;  // (B, C, K) newest input last
  std::vector<float> ssm;   // Mamba 1: (B, E, N); Mamba 2: (B, H, P, N); linear attention: (B, H, P, P)
  std::vector<float> keys, values;  // softmax attention: (B, t, H, P) each, grown per step
  int64_t steps = 0;
};

struct RecurrentState {
  int64_t batch = 0;
  std::vector<LayerState> layers;
};

absl::StatusOr<RecurrentState> InitRecurrentState(const ModelSpec& spec, int64_t batch);

// tokens: one token per batch row. Returns logits (B, padded vocab) row-major.
absl::StatusOr<std::vector<float>> Step(const core::ParamTree& params, const ModelSpec& spec,
                                        const std::vector<int32_t>& tokens, RecurrentState* state);

// The recurrent pieces of each layer kind (the rows of mixers.h): zero state for `batch` rows, and
// one step u (B, D) -> (B, D) of the mixer whose parameters are under `prefix`.
void Mamba1InitState(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state);
void Mamba2InitState(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state);
void AttentionInitState(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state);
void LinearAttentionInitState(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state);
absl::StatusOr<std::vector<float>> Mamba1Step(const core::ParamTree& params, const std::string& prefix,
                                              const LayerSpec& layer, int64_t d_model,
                                              const std::vector<float>& u, int64_t batch, LayerState* state);
absl::StatusOr<std::vector<float>> Mamba2Step(const core::ParamTree& params, const std::string& prefix,
                                              const LayerSpec& layer, int64_t d_model,
                                              const std::vector<float>& u, int64_t batch, LayerState* state);
absl::StatusOr<std::vector<float>> AttentionStep(const core::ParamTree& params, const std::string& prefix,
                                                 const LayerSpec& layer, int64_t d_model,
                                                 const std::vector<float>& u, int64_t batch,
                                                 LayerState* state);
absl::StatusOr<std::vector<float>> LinearAttentionStep(const core::ParamTree& params,
                                                       const std::string& prefix, const LayerSpec& layer,
                                                       int64_t d_model, const std::vector<float>& u,
                                                       int64_t batch, LayerState* state);

// Feeds `prompt` (batch 1), then appends argmax tokens until `max_new` tokens or `stop_token`.
// Returns only the generated tokens.
absl::StatusOr<std::vector<int32_t>> GreedyGenerate(const core::ParamTree& params, const ModelSpec& spec,
                                                    const std::vector<int32_t>& prompt, int64_t max_new,
                                                    int32_t stop_token);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_RECURRENT_H_
