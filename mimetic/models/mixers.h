// The table of mixer kinds: one row per kind holding every function the rest of models/ calls for
// that kind (spec validation, mamba_ssm's default init, the forward pass, the attention map, the
// recurrent state and step). Spec resolution (spec.cc), the LM (lm.cc), attention maps
// (attention_maps.cc) and recurrent inference (recurrent.cc) look the kind up here instead of
// switching over it. Adding a mixer: a LayerSpec oneof case, one file with its functions, one row in
// mixers.cc (and, when it captures internals for maps, a member of LayerInternals in lm.h).
//
//   const Mixer* mixer = FindMixer(spec.layers(i));   // nullptr when the layer has no mixer
//   Tensor y = mixer->forward(params, "layers/3/mixer/", spec.layers(i), d_model, u, nullptr);
#ifndef MIMETIC_MODELS_MIXERS_H_
#define MIMETIC_MODELS_MIXERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/layer_init.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::models {

struct LayerInternals;  // lm.h
struct LayerMap;        // attention_maps.h
struct LayerState;      // recurrent.h

struct Mixer {
  LayerSpec::MixerCase mixer_case;
  const char* name;  // the LayerSpec oneof field: "mamba2"
  // Checks the layer's fields; errors name "<at><name>.<field>".
  absl::Status (*validate)(const LayerSpec& layer, const std::string& at, int64_t d_model);
  // Appends the mixer's parameters under `prefix` with mamba_ssm's default init; out_proj is
  // divided by sqrt(out_proj_divisor_sq) when it is > 0.
  absl::Status (*init)(Key key, const LayerSpec& layer, int64_t d_model, int64_t out_proj_divisor_sq,
                       const std::string& prefix, NamedTensors* out);
  // u (B, L, D) -> (B, L, D); fills the kind's member of `internals` when given.
  Tensor (*forward)(const core::ParamTree& params, const std::string& prefix, const LayerSpec& layer,
                    int64_t d_model, const Tensor& u, LayerInternals* internals);
  // The (L, L) attention map and decay mask of batch row `example` from what forward captured.
  absl::StatusOr<LayerMap> (*map)(const LayerInternals& internals, int64_t example);
  // Zero recurrent state for `batch` rows.
  void (*init_state)(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state);
  // One token per row: u (B, D) -> (B, D), advancing `state`.
  absl::StatusOr<std::vector<float>> (*step)(const core::ParamTree& params, const std::string& prefix,
                                             const LayerSpec& layer, int64_t d_model,
                                             const std::vector<float>& u, int64_t batch, LayerState* state);
};

// Every mixer kind, in the order of the LayerSpec oneof.
absl::Span<const Mixer> Mixers();
// The row for the layer's kind; nullptr when its mixer is unset.
const Mixer* FindMixer(const LayerSpec& layer);
const Mixer* FindMixer(LayerSpec::MixerCase mixer_case);
// "mamba1, mamba2, attention, linear_attention".
std::string MixerNames();

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_MIXERS_H_
