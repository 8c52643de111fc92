// The language model: embedding -> n_layer pre-norm residual blocks (mixer, optional GatedMLP)
// -> final norm -> LM head tied to the embedding (mamba_ssm MixerModel + MambaLMHeadModel, mamba_ssm
// models/mixer_seq_simple.py).
//
//   ASSIGN_OR_RETURN(ModelSpec spec, ParseModelSpec("vocab_size: 30 d_model: 64 n_layer: 2 "
//                                                   "default_layer { mamba2 { d_state: 16 headdim: 16 } }"));
//   ASSIGN_OR_RETURN(ParamTree params, Init(Key::FromSeed(0), spec));
//   Tensor logits = Apply(params, spec, tokens);   // tokens (B, L) i32 -> (B, L, padded vocab)
//
// Paths: embedding/weight, layers/{i}/norm/{weight,bias}, layers/{i}/mixer/..., layers/{i}/norm2/...,
// layers/{i}/mlp/{fc1,fc2}/weight, norm_f/{weight,bias}, lm_head/weight (untied only) — mamba_ssm's
// checkpoint names with "backbone." dropped and '.' written '/'.
#ifndef MIMETIC_MODELS_LM_H_
#define MIMETIC_MODELS_LM_H_

#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/key.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/attention_layer.h"
#include "mimetic/models/mamba1.h"
#include "mimetic/models/mamba2.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::models {

// What a mamba_ssm MambaLMHeadModel holds after construction, for a resolved spec (ResolveSpec):
// the layers' PyTorch default init, then the model-level _init_weights passes: embedding
// N(0, initializer_range^2), Linear biases zero, out_proj/fc2 divided by sqrt(n_layer) (the last
// pass, MambaLMHeadModel's, uses n_residuals_per_layer = 1 with or without a GatedMLP; see
// mamba_ssm models/mixer_seq_simple.py). Each parameter's key is FoldIn(key, path).
absl::StatusOr<core::ParamTree> Init(core::Key key, const ModelSpec& spec);

// What each layer's mixer computed internally (filled when requested), for attention maps.
struct LayerInternals {
  LayerSpec::MixerCase kind = LayerSpec::MIXER_NOT_SET;
  Mamba1Internals mamba1;
  Mamba2Internals mamba2;
  AttentionInternals attention;
};

// tokens: (B, L) i32 -> logits (B, L, PaddedVocab(spec)). A bad input or missing parameter gives
// an error tensor naming it. `internals`, when given, receives one entry per layer.
core::Tensor Apply(const core::ParamTree& params, const ModelSpec& spec, const core::Tensor& tokens,
                   std::vector<LayerInternals>* internals = nullptr);

// Apply with the error as a Status; also checks token range and the tree's structure up front.
absl::StatusOr<core::Tensor> ApplyChecked(const core::ParamTree& params, const ModelSpec& spec,
                                          const core::Tensor& tokens);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_LM_H_
