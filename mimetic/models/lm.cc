#include "mimetic/models/lm.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/core/random.h"
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

int64_t NumResidualsPerLayer(const ModelSpec& spec) { return spec.d_intermediate() > 0 ? 2 : 1; }

absl::StatusOr<core::ParamTree> Init(core::Key key, const ModelSpec& unresolved) {
  ASSIGN_OR_RETURN(ModelSpec spec, ResolveSpec(unresolved));
  const int64_t D = spec.d_model();
  const int64_t V = PaddedVocab(spec);
  const int64_t divisor_sq = spec.rescale_prenorm_residual() ? NumResidualsPerLayer(spec) * spec.layers_size() : 0;
  NamedTensors named;
  ASSIGN_OR_RETURN(Tensor emb, core::Normal(ParamKey(key, "embedding/weight"), {V, D}));
  named.emplace_back("embedding/weight", ops::MulScalar(emb, spec.initializer_range()));
  for (int i = 0; i < spec.layers_size(); ++i) {
    const std::string prefix = LayerPrefix(i);
    RETURN_IF_ERROR(AddNorm(spec, prefix + "norm/", &named));
    const LayerSpec& layer = spec.layers(i);
    const std::string mixer = prefix + "mixer/";
    switch (layer.mixer_case()) {
      case LayerSpec::kMamba1:
        RETURN_IF_ERROR(InitMamba1(key, layer.mamba1(), D, divisor_sq, mixer, &named));
        break;
      case LayerSpec::kMamba2:
        RETURN_IF_ERROR(InitMamba2(key, layer.mamba2(), D, divisor_sq, mixer, &named));
        break;
      case LayerSpec::kAttention:
        RETURN_IF_ERROR(InitAttention(key, layer.attention(), D, divisor_sq, mixer, &named));
        break;
      case LayerSpec::kLinearAttention:
        RETURN_IF_ERROR(InitLinearAttention(key, layer.linear_attention(), D, divisor_sq, mixer, &named));
        break;
      case LayerSpec::MIXER_NOT_SET:
        return absl::InvalidArgumentError(absl::StrCat("layers[", i, "] has no mixer"));
    }
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
    Tensor m;
    switch (layer.mixer_case()) {
      case LayerSpec::kMamba1:
        m = Mamba1Forward(params, mixer, layer.mamba1(), D, u, li ? &li->mamba1 : nullptr);
        break;
      case LayerSpec::kMamba2:
        m = Mamba2Forward(params, mixer, layer.mamba2(), D, u, li ? &li->mamba2 : nullptr);
        break;
      case LayerSpec::kAttention:
        m = AttentionForward(params, mixer, layer.attention(), D, u, li ? &li->attention : nullptr);
        break;
      case LayerSpec::kLinearAttention:
        m = LinearAttentionForward(params, mixer, layer.linear_attention(), D, u, li ? &li->attention : nullptr);
        break;
      case LayerSpec::MIXER_NOT_SET:
        return Tensor::Error(absl::InvalidArgumentError(absl::StrCat("layers[", i, "] has no mixer")));
    }
    h = ops::Add(h, m);
    if (spec.d_intermediate() > 0) {
      ParamAccess mlp(params, prefix + "mlp/");
      Tensor v = ApplyNorm(spec, ParamAccess(params, prefix + "norm2/"), h);
      std::vector<Tensor> yg = ops::Split(mlp.Linear(v, "fc1"), -1, {spec.d_intermediate(), spec.d_intermediate()});
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
