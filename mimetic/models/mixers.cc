#include "mimetic/models/mixers.h"

#include "absl/strings/str_join.h"
#include "mimetic/models/attention_layer.h"
#include "mimetic/models/attention_maps.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/mamba1.h"
#include "mimetic/models/mamba2.h"
#include "mimetic/models/recurrent.h"

namespace mimetic::models {
namespace {

// The rows adapt each kind's functions, which take the kind's own spec message, to LayerSpec.
const Mixer kMixers[] = {
    {LayerSpec::kMamba1, "mamba1",
     [](const LayerSpec& l, const std::string& at, int64_t d) { return ValidateMamba1(l.mamba1(), at, d); },
     [](Key key, const LayerSpec& l, int64_t d, int64_t div, const std::string& prefix, NamedTensors* out) {
       return InitMamba1(key, l.mamba1(), d, div, prefix, out);
     },
     [](const core::ParamTree& p, const std::string& prefix, const LayerSpec& l, int64_t d, const Tensor& u,
        LayerInternals* in) {
       return Mamba1Forward(p, prefix, l.mamba1(), d, u, in ? &in->mamba1 : nullptr);
     },
     Mamba1LayerMap, Mamba1InitState, Mamba1Step},
    {LayerSpec::kMamba2, "mamba2",
     [](const LayerSpec& l, const std::string& at, int64_t d) { return ValidateMamba2(l.mamba2(), at, d); },
     [](Key key, const LayerSpec& l, int64_t d, int64_t div, const std::string& prefix, NamedTensors* out) {
       return InitMamba2(key, l.mamba2(), d, div, prefix, out);
     },
     [](const core::ParamTree& p, const std::string& prefix, const LayerSpec& l, int64_t d, const Tensor& u,
        LayerInternals* in) {
       return Mamba2Forward(p, prefix, l.mamba2(), d, u, in ? &in->mamba2 : nullptr);
     },
     Mamba2LayerMap, Mamba2InitState, Mamba2Step},
    {LayerSpec::kAttention, "attention",
     [](const LayerSpec& l, const std::string& at, int64_t d) {
       return ValidateAttention(l.attention(), at, d);
     },
     [](Key key, const LayerSpec& l, int64_t d, int64_t div, const std::string& prefix, NamedTensors* out) {
       return InitAttention(key, l.attention(), d, div, prefix, out);
     },
     [](const core::ParamTree& p, const std::string& prefix, const LayerSpec& l, int64_t d, const Tensor& u,
        LayerInternals* in) {
       return AttentionForward(p, prefix, l.attention(), d, u, in ? &in->attention : nullptr);
     },
     SoftmaxAttentionLayerMap, AttentionInitState, AttentionStep},
    {LayerSpec::kLinearAttention, "linear_attention",
     [](const LayerSpec& l, const std::string& at, int64_t d) {
       return ValidateLinearAttention(l.linear_attention(), at, d);
     },
     [](Key key, const LayerSpec& l, int64_t d, int64_t div, const std::string& prefix, NamedTensors* out) {
       return InitLinearAttention(key, l.linear_attention(), d, div, prefix, out);
     },
     [](const core::ParamTree& p, const std::string& prefix, const LayerSpec& l, int64_t d, const Tensor& u,
        LayerInternals* in) {
       return LinearAttentionForward(p, prefix, l.linear_attention(), d, u, in ? &in->attention : nullptr);
     },
     LinearAttentionLayerMap, LinearAttentionInitState, LinearAttentionStep},
};

}  // namespace

absl::Span<const Mixer> Mixers() { return kMixers; }

const Mixer* FindMixer(LayerSpec::MixerCase mixer_case) {
  for (const Mixer& m : kMixers) {
    if (m.mixer_case == mixer_case) return &m;
  }
  return nullptr;
}

const Mixer* FindMixer(const LayerSpec& layer) { return FindMixer(layer.mixer_case()); }

std::string MixerNames() {
  return absl::StrJoin(kMixers, ", ", [](std::string* out, const Mixer& m) { out->append(m.name); });
}

}  // namespace mimetic::models
