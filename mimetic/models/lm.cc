#include "mimetic/models/lm.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/core/random.h"
#include "mimetic/models/mixers.h"
#include "mimetic/models/param_access.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/embedding/embedding.h"
#include "mimetic/ops/matmul/matmul.h"
#include "mimetic/ops/norm/norm.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::models {
namespace {

absl::Status AddNorm(const ModelSpec& spec, const std::string& prefix, NamedTensors* out) {
  ASSIGN_OR_RETURN(Tensor w, ConstantTensor({spec.d_model()}, 1.f));
  out->emplace_back(prefix + "weight", w);
  if (spec.norm() == LAYER_NORM) {
    ASSIGN_OR_RETURN(Tensor b, ConstantTensor({spec.d_model()}, 0.f));
    out->emplace_back(prefix + "bias", b);
  }
  return absl::OkStatus();
}

Tensor ApplyNorm(const ModelSpec& spec, const ParamAccess& p, const Tensor& x) {
  if (spec.norm() == LAYER_NORM) return ops::LayerNorm(x, p.Get("weight"), p.Get("bias"), spec.norm_eps());
  return ops::RmsNorm(x, p.Get("weight"), spec.norm_eps());
}

}  // namespace

absl::StatusOr<core::ParamTree> Init(core::Key key, const ModelSpec& unresolved) {
  ASSIGN_OR_RETURN(ModelSpec spec, ResolveSpec(unresolved));
  const int64_t D = spec.d_model();
  const int64_t V = PaddedVocab(spec);
  // out_proj and fc2 end divided by sqrt(n_layer): MixerModel's _init_weights pass divides by
  // sqrt(n_residuals_per_layer * n_layer), but MambaLMHeadModel's pass runs last with the default
  // n_residuals_per_layer = 1 and redraws them (mamba_ssm models/mixer_seq_simple.py).
  const int64_t divisor_sq = spec.rescale_prenorm_residual() ? spec.layers_size() : 0;
  NamedTensors named;
  ASSIGN_OR_RETURN(Tensor emb, core::Normal(ParamKey(key, "embedding/weight"), {V, D}));
  named.emplace_back("embedding/weight", ops::MulScalar(emb, spec.initializer_range()));
  for (int i = 0; i < spec.layers_size(); ++i) {
    const std::string prefix = LayerPrefix(i);
    RETURN_IF_ERROR(AddNorm(spec, prefix + "norm/", &named));
    const LayerSpec& layer = spec.layers(i);
    const std::string mixer = prefix + "mixer/";
    const Mixer* kind = FindMixer(layer);
    if (kind == nullptr) return absl::InvalidArgumentError(absl::StrCat("layers[", i, "] has no mixer"));
    RETURN_IF_ERROR(kind->init(key, layer, D, divisor_sq, mixer, &named));
    if (spec.d_intermediate() > 0) {
      // GatedMLP: fc1 (2 I, D) -> [y | gate] -> y * SiLU(gate) -> fc2 (D, I), no biases.
      RETURN_IF_ERROR(AddNorm(spec, prefix + "norm2/", &named));
      const int64_t I = spec.d_intermediate();
      ASSIGN_OR_RETURN(Tensor fc1, LinearWeight(ParamKey(key, prefix + "mlp/fc1/weight"), 2 * I, D));
      named.emplace_back(prefix + "mlp/fc1/weight", fc1);
      ASSIGN_OR_RETURN(Tensor fc2, LinearWeight(ParamKey(key, prefix + "mlp/fc2/weight"), D, I));
      if (divisor_sq > 0) fc2 = ops::MulScalar(fc2, 1.0 / std::sqrt(static_cast<double>(divisor_sq)));
      named.emplace_back(prefix + "mlp/fc2/weight", fc2);
    }
  }
  RETURN_IF_ERROR(AddNorm(spec, "norm_f/", &named));
  if (!spec.tie_embeddings()) {
    ASSIGN_OR_RETURN(Tensor head, LinearWeight(ParamKey(key, "lm_head/weight"), V, D));
    named.emplace_back("lm_head/weight", head);
  }
  for (const auto& [path, t] : named) {
    if (!t.ok()) return t.status();
  }
  return core::ParamTree::FromPairs(std::move(named));
}

core::Tensor Apply(const core::ParamTree& params, const ModelSpec& spec, const core::Tensor& tokens,
                   std::vector<LayerInternals>* internals) {
  const int64_t D = spec.d_model();
  ParamAccess top(params, "");
  Tensor h = ops::Embedding(top.Get("embedding/weight"), tokens);  // (B, L, D)
  if (internals != nullptr) internals->assign(spec.layers_size(), LayerInternals{});
  for (int i = 0; i < spec.layers_size(); ++i) {
    const std::string prefix = LayerPrefix(i);
    const LayerSpec& layer = spec.layers(i);
    Tensor u = ApplyNorm(spec, ParamAccess(params, prefix + "norm/"), h);
    const std::string mixer = prefix + "mixer/";
    LayerInternals* li = internals != nullptr ? &(*internals)[i] : nullptr;
    if (li != nullptr) li->kind = layer.mixer_case();
    const Mixer* kind = FindMixer(layer);
    if (kind == nullptr) {
      return Tensor::Error(absl::InvalidArgumentError(absl::StrCat("layers[", i, "] has no mixer")));
    }
    Tensor m = kind->forward(params, mixer, layer, D, u, li);
    h = ops::Add(h, m);
    if (spec.d_intermediate() > 0) {
      ParamAccess mlp(params, prefix + "mlp/");
      Tensor v = ApplyNorm(spec, ParamAccess(params, prefix + "norm2/"), h);
      std::vector<Tensor> yg =
          ops::Split(mlp.Linear(v, "fc1"), -1, {spec.d_intermediate(), spec.d_intermediate()});
      h = ops::Add(h, mlp.Linear(ops::Mul(yg[0], ops::Silu(yg[1])), "fc2"));
    }
  }
  Tensor hf = ApplyNorm(spec, ParamAccess(params, "norm_f/"), h);
  Tensor head = spec.tie_embeddings() ? top.Get("embedding/weight") : top.Get("lm_head/weight");
  return ops::MatMul(hf, head, false, true);  // (B, L, V)
}

absl::StatusOr<core::Tensor> ApplyChecked(const core::ParamTree& params, const ModelSpec& spec,
                                          const core::Tensor& tokens) {
  RETURN_IF_ERROR(tokens.status());
  if (tokens.rank() != 2 || tokens.dtype() != core::DType::kI32) {
    return absl::InvalidArgumentError(absl::StrCat("model input tokens are ", tokens.DebugString(),
                                                   "; expected i32 of shape (batch, length)"));
  }
  Tensor logits = Apply(params, spec, tokens);
  RETURN_IF_ERROR(logits.status());
  return logits;
}

}  // namespace mimetic::models
