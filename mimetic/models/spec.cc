#include "mimetic/models/spec.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"

namespace mimetic::models {
namespace {

absl::Status Bad(const std::string& field, const std::string& value, const std::string& expected) {
  return absl::InvalidArgumentError(absl::StrCat("model spec: ", field, " = ", value, "; expected ", expected));
}

absl::Status ValidateLayer(const LayerSpec& layer, int i, int64_t d_model) {
  const std::string at = absl::StrCat("layers[", i, "].");
  switch (layer.mixer_case()) {
    case LayerSpec::kMamba1: {
      const Mamba1Spec& s = layer.mamba1();
      if (s.d_state() < 1) return Bad(at + "mamba1.d_state", absl::StrCat(s.d_state()), ">= 1");
      if (s.d_conv() < 1) return Bad(at + "mamba1.d_conv", absl::StrCat(s.d_conv()), ">= 1");
      if (s.expand() < 1) return Bad(at + "mamba1.expand", absl::StrCat(s.expand()), ">= 1");
      if (s.dt_rank() < 0) return Bad(at + "mamba1.dt_rank", absl::StrCat(s.dt_rank()), ">= 0 (0 = auto)");
      if (!(s.dt_min() > 0 && s.dt_min() <= s.dt_max())) {
        return Bad(at + "mamba1.dt_min/dt_max", absl::StrCat(s.dt_min(), "/", s.dt_max()), "0 < dt_min <= dt_max");
      }
      if (s.scan_chunk() < 1) return Bad(at + "mamba1.scan_chunk", absl::StrCat(s.scan_chunk()), ">= 1");
      return absl::OkStatus();
    }
    case LayerSpec::kMamba2: {
      const Mamba2Spec& s = layer.mamba2();
      if (s.d_state() < 1) return Bad(at + "mamba2.d_state", absl::StrCat(s.d_state()), ">= 1");
      if (s.d_conv() < 1) return Bad(at + "mamba2.d_conv", absl::StrCat(s.d_conv()), ">= 1");
      if (s.expand() < 1) return Bad(at + "mamba2.expand", absl::StrCat(s.expand()), ">= 1");
      const int64_t e = s.expand() * d_model;
      if (s.headdim() < 1 || e % s.headdim() != 0) {
        return Bad(at + "mamba2.headdim", absl::StrCat(s.headdim()),
                   absl::StrCat("a divisor of d_inner = expand * d_model = ", e));
      }
      const int64_t h = e / s.headdim();
      if (s.ngroups() < 1 || h % s.ngroups() != 0) {
        return Bad(at + "mamba2.ngroups", absl::StrCat(s.ngroups()),
                   absl::StrCat("a divisor of the head count ", h));
      }
      if (!(s.a_init_min() > 0 && s.a_init_min() <= s.a_init_max())) {
        return Bad(at + "mamba2.a_init_min/a_init_max", absl::StrCat(s.a_init_min(), "/", s.a_init_max()),
                   "0 < min <= max");
      }
      if (!(s.dt_min() > 0 && s.dt_min() <= s.dt_max())) {
        return Bad(at + "mamba2.dt_min/dt_max", absl::StrCat(s.dt_min(), "/", s.dt_max()), "0 < dt_min <= dt_max");
      }
      if (s.chunk_size() < 1) return Bad(at + "mamba2.chunk_size", absl::StrCat(s.chunk_size()), ">= 1");
      return absl::OkStatus();
    }
    case LayerSpec::kAttention: {
      const AttentionSpec& s = layer.attention();
      if (s.num_heads() < 1) return Bad(at + "attention.num_heads", absl::StrCat(s.num_heads()), ">= 1");
      if (s.head_dim() == 0 && d_model % s.num_heads() != 0) {
        return Bad(at + "attention.num_heads", absl::StrCat(s.num_heads()),
                   absl::StrCat("a divisor of d_model = ", d_model, " (or set head_dim)"));
      }
      if (s.head_dim() < 0) return Bad(at + "attention.head_dim", absl::StrCat(s.head_dim()), ">= 0");
      return absl::OkStatus();
    }
    case LayerSpec::kLinearAttention: {
      const LinearAttentionSpec& s = layer.linear_attention();
      if (s.num_heads() < 1) return Bad(at + "linear_attention.num_heads", absl::StrCat(s.num_heads()), ">= 1");
      if (s.head_dim() < 1) return Bad(at + "linear_attention.head_dim", absl::StrCat(s.head_dim()), ">= 1");
      return absl::OkStatus();
    }
    case LayerSpec::MIXER_NOT_SET:
      break;
  }
  return Bad(at + "mixer", "unset", "one of mamba1, mamba2, attention, linear_attention");
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
  switch (layer.mixer_case()) {
    case LayerSpec::kMamba1:
      return "mamba1";
    case LayerSpec::kMamba2:
      return "mamba2";
    case LayerSpec::kAttention:
      return "attention";
    case LayerSpec::kLinearAttention:
      return "linear_attention";
    case LayerSpec::MIXER_NOT_SET:
      break;
  }
  return "unset";
}

std::string LayerPrefix(int layer) { return absl::StrCat("layers/", layer, "/"); }

}  // namespace mimetic::models
