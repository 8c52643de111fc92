// Small model specs of every mixer kind, shared by the models and init tests.
#ifndef MIMETIC_MODELS_TEST_SPECS_H_
#define MIMETIC_MODELS_TEST_SPECS_H_

#include <string>

#include "mimetic/models/spec.h"

namespace mimetic::models::testing {

inline ModelSpec MustParse(const std::string& text) {
  absl::StatusOr<ModelSpec> s = ParseModelSpec(text);
  if (!s.ok()) std::abort();
  return *s;
}

inline ModelSpec TinyMamba1(int n_layer = 2) {
  return MustParse("vocab_size: 13 d_model: 16 norm: LAYER_NORM pad_vocab_size_multiple: 1 n_layer: " +
                   std::to_string(n_layer) + " default_layer { mamba1 { d_state: 4 scan_chunk: 4 } }");
}
inline ModelSpec TinyMamba2(int n_layer = 2) {
  return MustParse("vocab_size: 13 d_model: 16 n_layer: " + std::to_string(n_layer) +
                   " default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 4 } }");
}
inline ModelSpec TinyAttention() {
  return MustParse("vocab_size: 13 d_model: 16 n_layer: 2 default_layer { attention { num_heads: 2 } }");
}
inline ModelSpec TinyLinearAttention() {
  return MustParse(
      "vocab_size: 13 d_model: 16 n_layer: 2 default_layer { linear_attention { head_dim: 8 } }");
}
// 4 layers, layer 2 softmax attention, layer 3 linear attention, with a GatedMLP.
inline ModelSpec TinyHybrid() {
  return MustParse(
      "vocab_size: 13 d_model: 16 d_intermediate: 24 n_layer: 4 default_layer { mamba2 { d_state: 8 headdim: "
      "8 "
      "chunk_size: 4 } } layer_overrides { index: 1 layer { mamba1 { d_state: 4 } } } "
      "layer_overrides { index: 2 layer { attention { num_heads: 1 } } } "
      "layer_overrides { index: 3 layer { linear_attention { head_dim: 4 num_heads: 2 } } }");
}

}  // namespace mimetic::models::testing

#endif  // MIMETIC_MODELS_TEST_SPECS_H_
