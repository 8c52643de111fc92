#include "mimetic/models/attention_layer.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/models/param_access.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/attention/attention.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::models {

absl::Status ValidateLinearAttention(const LinearAttentionSpec& s, const std::string& at, int64_t) {
  if (s.num_heads() < 1)
    return BadSpecField(at + "linear_attention.num_heads", absl::StrCat(s.num_heads()), ">= 1");
  if (s.head_dim() < 1)
    return BadSpecField(at + "linear_attention.head_dim", absl::StrCat(s.head_dim()), ">= 1");
  return absl::OkStatus();
}

absl::Status ValidateAttention(const AttentionSpec& s, const std::string& at, int64_t d_model) {
  if (s.num_heads() < 1) return BadSpecField(at + "attention.num_heads", absl::StrCat(s.num_heads()), ">= 1");
  if (s.head_dim() == 0 && d_model % s.num_heads() != 0) {
    return BadSpecField(at + "attention.num_heads", absl::StrCat(s.num_heads()),
                        absl::StrCat("a divisor of d_model = ", d_model, " (or set head_dim)"));
  }
  if (s.head_dim() < 0) return BadSpecField(at + "attention.head_dim", absl::StrCat(s.head_dim()), ">= 0");
  return absl::OkStatus();
}

namespace {

absl::Status AddOutProj(Key key, int64_t d_model, int64_t in, int64_t divisor_sq, bool bias,
                        const std::string& prefix, NamedTensors* out) {
  ASSIGN_OR_RETURN(Tensor w, LinearWeight(ParamKey(key, prefix + "out_proj/weight"), d_model, in));
  if (divisor_sq > 0) w = ops::MulScalar(w, 1.0 / std::sqrt(static_cast<double>(divisor_sq)));
  RETURN_IF_ERROR(w.status());
  out->emplace_back(prefix + "out_proj/weight", w);
  if (bias) {
    ASSIGN_OR_RETURN(Tensor b, ConstantTensor({d_model}, 0.f));
    out->emplace_back(prefix + "out_proj/bias", b);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InitAttention(Key key, const AttentionSpec& s, int64_t d_model, int64_t out_proj_divisor_sq,
                           const std::string& prefix, NamedTensors* out) {
  const AttentionDims d = AttentionDimsOf(s, d_model);
  ASSIGN_OR_RETURN(Tensor w, LinearWeight(ParamKey(key, prefix + "in_proj/weight"), 3 * d.H * d.P, d.D));
  out->emplace_back(prefix + "in_proj/weight", w);
  if (s.qkv_bias()) {
    ASSIGN_OR_RETURN(Tensor b, ConstantTensor({3 * d.H * d.P}, 0.f));  // _init_weights zeroes Linear biases
    out->emplace_back(prefix + "in_proj/bias", b);
  }
  return AddOutProj(key, d.D, d.H * d.P, out_proj_divisor_sq, s.out_bias(), prefix, out);
}

absl::Status InitLinearAttention(Key key, const LinearAttentionSpec& s, int64_t d_model,
                                 int64_t out_proj_divisor_sq, const std::string& prefix, NamedTensors* out) {
  const AttentionDims d = LinearAttentionDimsOf(s, d_model);
  for (const char* name : {"q_proj/weight", "k_proj/weight", "v_proj/weight"}) {
    ASSIGN_OR_RETURN(Tensor w, LinearWeight(ParamKey(key, prefix + name), d.H * d.P, d.D));
    out->emplace_back(prefix + name, w);
  }
  return AddOutProj(key, d.D, d.H * d.P, out_proj_divisor_sq, /*bias=*/false, prefix, out);
}

Tensor AttentionForward(const core::ParamTree& params, const std::string& prefix, const AttentionSpec& s,
                        int64_t d_model, const Tensor& u, AttentionInternals* internals) {
  const AttentionDims d = AttentionDimsOf(s, d_model);
  ParamAccess p(params, prefix);
  const int64_t batch = u.ok() ? u.dim(0) : 0;
  const int64_t len = u.ok() ? u.dim(1) : 0;
  std::vector<Tensor> qkv = ops::Split(p.Linear(u, "in_proj"), -1, {d.H * d.P, d.H * d.P, d.H * d.P});
  Tensor q = ops::Reshape(qkv[0], {batch, len, d.H, d.P});
  Tensor k = ops::Reshape(qkv[1], {batch, len, d.H, d.P});
  Tensor v = ops::Reshape(qkv[2], {batch, len, d.H, d.P});
  if (internals != nullptr) *internals = AttentionInternals{q, k, v};
  Tensor o = ops::CausalSoftmaxAttention(q, k, v, 1.0 / std::sqrt(static_cast<double>(d.P)));
  return p.Linear(ops::Reshape(o, {batch, len, d.H * d.P}), "out_proj");
}

Tensor LinearAttentionForward(const core::ParamTree& params, const std::string& prefix,
                              const LinearAttentionSpec& s, int64_t d_model, const Tensor& u,
                              AttentionInternals* internals) {
  const AttentionDims d = LinearAttentionDimsOf(s, d_model);
  ParamAccess p(params, prefix);
  const int64_t batch = u.ok() ? u.dim(0) : 0;
  const int64_t len = u.ok() ? u.dim(1) : 0;
  Tensor q = ops::Reshape(p.Linear(u, "q_proj"), {batch, len, d.H, d.P});
  Tensor k = ops::Reshape(p.Linear(u, "k_proj"), {batch, len, d.H, d.P});
  Tensor v = ops::Reshape(p.Linear(u, "v_proj"), {batch, len, d.H, d.P});
  if (internals != nullptr) *internals = AttentionInternals{q, k, v};
  Tensor o = ops::CausalLinearAttention(q, k, v);
  return p.Linear(ops::Reshape(o, {batch, len, d.H * d.P}), "out_proj");
}

}  // namespace mimetic::models
