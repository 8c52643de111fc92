#include "mimetic/models/spec.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/text_format.h"
#include "mimetic/models/mixers.h"

namespace mimetic::models {
namespace {

absl::Status Bad(const std::string& field, const std::string& value, const std::string& expected) {
  return BadSpecField(field, value, expected);
}

absl::Status ValidateLayer(const LayerSpec& layer, int i, int64_t d_model) {
  const std::string at = absl::StrCat("layers[", i, "].");
  const Mixer* mixer = FindMixer(layer);
  if (mixer == nullptr) return Bad(at + "mixer", "unset", absl::StrCat("one of ", MixerNames()));
  return mixer->validate(layer, at, d_model);
}

}  // namespace

absl::StatusOr<ModelSpec> ResolveSpec(const ModelSpec& in) {
  ModelSpec spec = in;
  if (spec.layers_size() == 0) {
    if (spec.n_layer() < 1) {
      return Bad("n_layer", absl::StrCat(spec.n_layer()), ">= 1 (or list `layers` explicitly)");
    }
    if (!spec.has_default_layer()) return Bad("default_layer", "unset", "a layer spec when n_layer is used");
    for (int i = 0; i < spec.n_layer(); ++i) *spec.add_layers() = spec.default_layer();
  } else if (spec.n_layer() != 0 && spec.n_layer() != spec.layers_size()) {
    return Bad("n_layer", absl::StrCat(spec.n_layer()),
               absl::StrCat("0 or the number of listed layers (", spec.layers_size(), ")"));
  }
  for (const LayerOverride& o : spec.layer_overrides()) {
    if (o.index() < 0 || o.index() >= spec.layers_size()) {
      return Bad("layer_overrides.index", absl::StrCat(o.index()),
                 absl::StrCat("a layer index in [0, ", spec.layers_size(), ")"));
    }
    *spec.mutable_layers(o.index()) = o.layer();
  }
  spec.clear_layer_overrides();
  spec.clear_default_layer();
  spec.set_n_layer(spec.layers_size());
  if (spec.vocab_size() < 1) return Bad("vocab_size", absl::StrCat(spec.vocab_size()), ">= 1");
  if (spec.d_model() < 1) return Bad("d_model", absl::StrCat(spec.d_model()), ">= 1");
  if (spec.pad_vocab_size_multiple() < 1) {
    return Bad("pad_vocab_size_multiple", absl::StrCat(spec.pad_vocab_size_multiple()), ">= 1");
  }
  if (!(spec.norm_eps() > 0)) return Bad("norm_eps", absl::StrCat(spec.norm_eps()), "> 0");
  if (spec.d_intermediate() < 0) return Bad("d_intermediate", absl::StrCat(spec.d_intermediate()), ">= 0");
  if (spec.mlp_multiple_of() < 1) return Bad("mlp_multiple_of", absl::StrCat(spec.mlp_multiple_of()), ">= 1");
  // GatedMLP's hidden_features rounded up as in mamba_ssm modules/mlp.py (multiple_of = 128).
  const int64_t m = spec.mlp_multiple_of();
  spec.set_d_intermediate(static_cast<int32_t>((spec.d_intermediate() + m - 1) / m * m));
  for (int i = 0; i < spec.layers_size(); ++i) {
    absl::Status s = ValidateLayer(spec.layers(i), i, spec.d_model());
    if (!s.ok()) return s;
  }
  return spec;
}

absl::StatusOr<ModelSpec> ParseModelSpec(const std::string& text) {
  ModelSpec spec;
  if (!google::protobuf::TextFormat::ParseFromString(text, &spec)) {
    return absl::InvalidArgumentError("model spec: text-format parse error (see stderr for the line)");
  }
  return ResolveSpec(spec);
}

int64_t PaddedVocab(const ModelSpec& spec) {
  const int64_t m = spec.pad_vocab_size_multiple();
  return (spec.vocab_size() + m - 1) / m * m;
}

Mamba1Dims Mamba1DimsOf(const Mamba1Spec& s, int64_t d_model) {
  const int64_t r = s.dt_rank() > 0 ? s.dt_rank() : (d_model + 15) / 16;
  return Mamba1Dims{d_model, s.expand() * d_model, s.d_state(), s.d_conv(), r};
}

Mamba2Dims Mamba2DimsOf(const Mamba2Spec& s, int64_t d_model) {
  const int64_t e = s.expand() * d_model;
  return Mamba2Dims{d_model, e, s.d_state(), s.d_conv(), s.headdim(), e / s.headdim(), s.ngroups()};
}

AttentionDims AttentionDimsOf(const AttentionSpec& s, int64_t d_model) {
  const int64_t p = s.head_dim() > 0 ? s.head_dim() : d_model / s.num_heads();
  return AttentionDims{d_model, s.num_heads(), p};
}

AttentionDims LinearAttentionDimsOf(const LinearAttentionSpec& s, int64_t d_model) {
  return AttentionDims{d_model, s.num_heads(), s.head_dim()};
}

std::string MixerKind(const LayerSpec& layer) {
  const Mixer* mixer = FindMixer(layer);
  return mixer == nullptr ? "unset" : mixer->name;
}

absl::Status BadSpecField(const std::string& field, const std::string& value, const std::string& expected) {
  return absl::InvalidArgumentError(
      absl::StrCat("model spec: ", field, " = ", value, "; expected ", expected));
}

std::string LayerPrefix(int layer) { return absl::StrCat("layers/", layer, "/"); }

namespace {

// mamba_ssm's MambaConfig as the state-spaces checkpoints' config.json sets it: RMSNorm (eps 1e-5),
// residual in fp32, tied head, no MLP, GPT-NeoX vocabulary of 50277 tokens.
ModelSpec MambaConfigBase(int d_model, int n_layer, int pad_vocab_size_multiple) {
  ModelSpec spec;
  spec.set_vocab_size(50277);
  spec.set_d_model(d_model);
  spec.set_n_layer(n_layer);
  spec.set_norm(RMS_NORM);
  spec.set_norm_eps(1e-5);
  spec.set_residual_in_fp32(true);
  spec.set_tie_embeddings(true);
  spec.set_pad_vocab_size_multiple(pad_vocab_size_multiple);
  spec.set_d_intermediate(0);
  return spec;
}

// Mamba 1 checkpoints: config.json {"d_model", "n_layer", "vocab_size": 50277, "ssm_cfg": {},
// "rms_norm": true, "residual_in_fp32": true, "fused_add_norm": true, "pad_vocab_size_multiple": 8};
// ssm_cfg {} leaves the Mamba module's defaults (d_state 16, d_conv 4, expand 2, dt_rank "auto"
// = ceil(d_model / 16), which HF's converted configs list as time_step_rank 48 / 64).
ModelSpec Mamba1Preset(int d_model, int n_layer) {
  ModelSpec spec = MambaConfigBase(d_model, n_layer, 8);
  Mamba1Spec* m = spec.mutable_default_layer()->mutable_mamba1();
  m->set_d_state(16);
  m->set_d_conv(4);
  m->set_expand(2);
  m->set_dt_rank(0);
  return spec;
}

// state-spaces/mamba2-130m config.json: {"d_model": 768, "d_intermediate": 0, "n_layer": 24,
// "vocab_size": 50277, "ssm_cfg": {"layer": "Mamba2"}, "attn_layer_idx": [], "rms_norm": true,
// "residual_in_fp32": true, "fused_add_norm": true, "pad_vocab_size_multiple": 16,
// "tie_embeddings": true}; ssm_cfg leaves the Mamba2 module's defaults (mamba_ssm modules/mamba2.py: d_state
// 128, headdim 64, ngroups 1, d_conv 4, expand 2). The module's chunk_size 256 changes only the SSD's
// blocking, not its result, so mimetic's default chunk is kept.
ModelSpec Mamba2Preset(int d_model, int n_layer) {
  ModelSpec spec = MambaConfigBase(d_model, n_layer, 16);
  Mamba2Spec* m = spec.mutable_default_layer()->mutable_mamba2();
  m->set_d_state(128);
  m->set_d_conv(4);
  m->set_expand(2);
  m->set_headdim(64);
  m->set_ngroups(1);
  m->set_norm_eps(1e-5);
  return spec;
}

struct Preset {
  const char* name;
  ModelSpec (*make)();
};

const Preset kPresets[] = {
    {"state-spaces/mamba-130m", [] { return Mamba1Preset(768, 24); }},
    {"state-spaces/mamba-370m", [] { return Mamba1Preset(1024, 48); }},
    {"state-spaces/mamba2-130m", [] { return Mamba2Preset(768, 24); }},
};

}  // namespace

absl::StatusOr<ModelSpec> PretrainedSpec(const std::string& name) {
  for (const Preset& p : kPresets) {
    if (name == p.name) return ResolveSpec(p.make());
  }
  return absl::NotFoundError(absl::StrCat("no pretrained model spec named '", name,
                                          "'; known: ", absl::StrJoin(PretrainedNames(), ", ")));
}

std::vector<std::string> PretrainedNames() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.push_back(p.name);
  return names;
}

}  // namespace mimetic::models
