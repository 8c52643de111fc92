// Resolving and validating a ModelSpec, and the derived sizes every model function needs.
//
//   ASSIGN_OR_RETURN(ModelSpec spec, ResolveSpec(text_spec));   // layers listed in full, checked
//   Mamba2Dims dims = Mamba2DimsOf(spec.layers(0).mamba2(), spec.d_model());
#ifndef MIMETIC_MODELS_SPEC_H_
#define MIMETIC_MODELS_SPEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::models {

// Expands n_layer/default_layer/layer_overrides into `layers`, rounds d_intermediate up to a
// multiple of mlp_multiple_of, and validates every field; a bad field gives InvalidArgument naming
// it ("layers[3].mamba2.headdim = 48 does not divide ...").
absl::StatusOr<ModelSpec> ResolveSpec(const ModelSpec& spec);

// Parses a text-format ModelSpec and resolves it.
absl::StatusOr<ModelSpec> ParseModelSpec(const std::string& text);

// The resolved spec of a published checkpoint, by its Hugging Face name (configs checked against each
// repository's config.json; mamba_ssm models/config_mamba.py MambaConfig):
//   "state-spaces/mamba-130m"   Mamba 1, d_model 768, 24 layers, d_state 16, dt_rank 48
//   "state-spaces/mamba-370m"   Mamba 1, d_model 1024, 48 layers, d_state 16, dt_rank 64
//   "state-spaces/mamba2-130m"  Mamba 2, d_model 768, 24 layers, d_state 128, headdim 64, ngroups 1
// All: RMSNorm eps 1e-5, vocab 50277, residual_in_fp32, tied embeddings, no MLP; pad_vocab_size_multiple
// 8 (Mamba 1) or 16 (Mamba 2). An unknown name is NotFound listing the known names.
//   ASSIGN_OR_RETURN(ModelSpec spec, PretrainedSpec("state-spaces/mamba-130m"));
absl::StatusOr<ModelSpec> PretrainedSpec(const std::string& name);
// The names PretrainedSpec knows, in the order above.
std::vector<std::string> PretrainedNames();

// vocab_size rounded up to a multiple of pad_vocab_size_multiple.
int64_t PaddedVocab(const ModelSpec& spec);

struct Mamba1Dims {
  int64_t D, E, N, K, R;
};
Mamba1Dims Mamba1DimsOf(const Mamba1Spec& s, int64_t d_model);

// The in_proj and conv row layouts built from these sizes are in proj_layout.h.
struct Mamba2Dims {
  int64_t D, E, N, K, P, H, G;
};
Mamba2Dims Mamba2DimsOf(const Mamba2Spec& s, int64_t d_model);

struct AttentionDims {
  int64_t D, H, P;
};
AttentionDims AttentionDimsOf(const AttentionSpec& s, int64_t d_model);
AttentionDims LinearAttentionDimsOf(const LinearAttentionSpec& s, int64_t d_model);

// The layer's mixer kind as named in the spec: "mamba1", "mamba2", "attention", "linear_attention"
// (the names of mixers.h's table), or "unset".
std::string MixerKind(const LayerSpec& layer);

// InvalidArgument "model spec: <field> = <value>; expected <expected>", for validation messages.
absl::Status BadSpecField(const std::string& field, const std::string& value, const std::string& expected);

// "layers/3/" for layer 3.
std::string LayerPrefix(int layer);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_SPEC_H_
