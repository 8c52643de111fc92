#include "mimetic/models/recurrent.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/models/mixers.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/softplus.h"

namespace mimetic::models {
namespace {

using core::Tensor;

// Host copies of a layer's parameters, read by path.
class HostParams {
 public:
  HostParams(const core::ParamTree& p, std::string prefix) : p_(p), prefix_(std::move(prefix)) {}
  absl::StatusOr<std::vector<float>> Get(const std::string& name) const {
    ASSIGN_OR_RETURN(Tensor t, p_.Get(prefix_ + name));
    return t.ToVector<float>();
  }
  bool Has(const std::string& name) const { return p_.Contains(prefix_ + name); }

 private:
  const core::ParamTree& p_;
  std::string prefix_;
};

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Silu(double x) { return x * Sigmoid(x); }

// y (B, out) = x (B, in) @ W^T (+ b), W (out, in).
std::vector<float> Linear(const std::vector<float>& x, int64_t B, int64_t in, const std::vector<float>& w,
                          int64_t out, const std::vector<float>* bias) {
  std::vector<float> y(B * out);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t o = 0; o < out; ++o) {
      double acc = bias ? (*bias)[o] : 0.0;
      for (int64_t i = 0; i < in; ++i) acc += double(x[b * in + i]) * w[o * in + i];
      y[b * out + o] = static_cast<float>(acc);
    }
  }
  return y;
}

absl::StatusOr<std::vector<float>> LinearNamed(const HostParams& p, const std::string& name,
                                               const std::vector<float>& x, int64_t B, int64_t in,
                                               int64_t out) {
  ASSIGN_OR_RETURN(std::vector<float> w, p.Get(name + "/weight"));
  if (static_cast<int64_t>(w.size()) != in * out) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, "/weight has ", w.size(), " values; expected ", out, "x", in));
  }
  std::vector<float> bias;
  if (p.Has(name + "/bias")) {
    ASSIGN_OR_RETURN(bias, p.Get(name + "/bias"));
  }
  return Linear(x, B, in, w, out, bias.empty() ? nullptr : &bias);
}

absl::StatusOr<std::vector<float>> Norm(const ModelSpec& spec, const HostParams& p,
                                        const std::vector<float>& x, int64_t B, int64_t D) {
  ASSIGN_OR_RETURN(std::vector<float> w, p.Get("weight"));
  std::vector<float> bias;
  if (spec.norm() == LAYER_NORM) {
    ASSIGN_OR_RETURN(bias, p.Get("bias"));
  }
  std::vector<float> y(B * D);
  for (int64_t b = 0; b < B; ++b) {
    const float* r = x.data() + b * D;
    double mean = 0, ms = 0;
    for (int64_t i = 0; i < D; ++i) mean += r[i];
    mean /= D;
    if (spec.norm() == LAYER_NORM) {
      for (int64_t i = 0; i < D; ++i) ms += (r[i] - mean) * (r[i] - mean);
    } else {
      mean = 0;
      for (int64_t i = 0; i < D; ++i) ms += double(r[i]) * r[i];
    }
    const double inv = 1.0 / std::sqrt(ms / D + spec.norm_eps());
    for (int64_t i = 0; i < D; ++i) {
      y[b * D + i] = static_cast<float>((r[i] - mean) * inv * w[i] + (bias.empty() ? 0.0 : bias[i]));
    }
  }
  return y;
}

// Pushes x (B, C) into the ring buffer (B, C, K) and returns the conv output (B, C) (no activation).
std::vector<float> ConvStep(std::vector<float>* buf, const std::vector<float>& x, int64_t B, int64_t C,
                            int64_t K, const std::vector<float>& w /* (C, K) */,
                            const std::vector<float>& bias) {
  std::vector<float> y(B * C);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      float* s = buf->data() + (b * C + c) * K;
      std::copy(s + 1, s + K, s);
      s[K - 1] = x[b * C + c];
      double acc = bias.empty() ? 0.0 : bias[c];
      for (int64_t k = 0; k < K; ++k) acc += double(s[k]) * w[c * K + k];
      y[b * C + c] = static_cast<float>(acc);
    }
  }
  return y;
}

absl::StatusOr<std::vector<float>> Mamba1HostStep(const HostParams& p, const Mamba1Spec& s, int64_t D,
                                                  const std::vector<float>& u, int64_t B, LayerState* st) {
  const Mamba1Dims d = Mamba1DimsOf(s, D);
  const Mamba1InProj rows = Mamba1InProjOf(d);
  ASSIGN_OR_RETURN(std::vector<float> xz, LinearNamed(p, "in_proj", u, B, D, rows.rows()));
  std::vector<float> x(B * d.E), z(B * d.E);
  for (int64_t b = 0; b < B; ++b) {
    std::copy_n(xz.begin() + b * rows.rows() + rows.x.begin, d.E, x.begin() + b * d.E);
    std::copy_n(xz.begin() + b * rows.rows() + rows.z.begin, d.E, z.begin() + b * d.E);
  }
  ASSIGN_OR_RETURN(std::vector<float> cw, p.Get("conv1d/weight"));
  std::vector<float> cb;
  if (s.conv_bias()) {
    ASSIGN_OR_RETURN(cb, p.Get("conv1d/bias"));
  }
  std::vector<float> xc = ConvStep(&st->conv, x, B, d.E, d.K, cw, cb);
  for (float& v : xc) v = static_cast<float>(Silu(v));
  const Mamba1XProj xrows = Mamba1XProjOf(d);
  ASSIGN_OR_RETURN(std::vector<float> xdbl, LinearNamed(p, "x_proj", xc, B, d.E, xrows.rows()));
  ASSIGN_OR_RETURN(std::vector<float> dtw, p.Get("dt_proj/weight"));
  ASSIGN_OR_RETURN(std::vector<float> dtb, p.Get("dt_proj/bias"));
  ASSIGN_OR_RETURN(std::vector<float> a_log, p.Get("A_log"));
  ASSIGN_OR_RETURN(std::vector<float> dskip, p.Get("D"));
  std::vector<float> y(B * d.E);
  for (int64_t b = 0; b < B; ++b) {
    const float* dt_low = xdbl.data() + b * xrows.rows() + xrows.dt.begin;
    const float* bm = xdbl.data() + b * xrows.rows() + xrows.B.begin;
    const float* cm = xdbl.data() + b * xrows.rows() + xrows.C.begin;
    for (int64_t e = 0; e < d.E; ++e) {
      double pre = dtb[e];
      for (int64_t r = 0; r < d.R; ++r) pre += double(dt_low[r]) * dtw[e * d.R + r];
      const double delta = ops::Softplus(pre);
      const double xv = xc[b * d.E + e];
      float* h = st->ssm.data() + (b * d.E + e) * d.N;
      double acc = 0;
      for (int64_t n = 0; n < d.N; ++n) {
        const double A = -std::exp(s.a_log_scale() * a_log[e * d.N + n]);
        h[n] = static_cast<float>(std::exp(delta * A) * h[n] + delta * bm[n] * xv);
        acc += double(h[n]) * cm[n];
      }
      y[b * d.E + e] = static_cast<float>((acc + dskip[e] * xv) * Silu(z[b * d.E + e]));
    }
  }
  return LinearNamed(p, "out_proj", y, B, d.E, D);
}

absl::StatusOr<std::vector<float>> Mamba2HostStep(const HostParams& p, const Mamba2Spec& s, int64_t D,
                                                  const std::vector<float>& u, int64_t B, LayerState* st) {
  const Mamba2Dims d = Mamba2DimsOf(s, D);
  const Mamba2InProj in = Mamba2InProjOf(d);
  const int64_t rows = in.rows(), C = in.xBC().size;
  ASSIGN_OR_RETURN(std::vector<float> all, LinearNamed(p, "in_proj", u, B, D, rows));
  std::vector<float> xbc(B * C);
  for (int64_t b = 0; b < B; ++b)
    std::copy_n(all.begin() + b * rows + in.xBC().begin, C, xbc.begin() + b * C);
  ASSIGN_OR_RETURN(std::vector<float> cw, p.Get("conv1d/weight"));
  std::vector<float> cb;
  if (s.conv_bias()) {
    ASSIGN_OR_RETURN(cb, p.Get("conv1d/bias"));
  }
  std::vector<float> conv = ConvStep(&st->conv, xbc, B, C, d.K, cw, cb);
  for (float& v : conv) v = static_cast<float>(Silu(v));
  ASSIGN_OR_RETURN(std::vector<float> dt_bias, p.Get("dt_bias"));
  ASSIGN_OR_RETURN(std::vector<float> a_log, p.Get("A_log"));
  ASSIGN_OR_RETURN(std::vector<float> dskip, p.Get("D"));
  ASSIGN_OR_RETURN(std::vector<float> nw, p.Get("norm/weight"));
  std::vector<float> y(B * d.E);
  for (int64_t b = 0; b < B; ++b) {
    const float* z = all.data() + b * rows + in.z.begin;
    const float* dt = all.data() + b * rows + in.dt.begin;
    // The conv output keeps the in_proj order [x | B | C], offset by where xBC starts.
    const float* x = conv.data() + b * C + (in.x.begin - in.xBC().begin);
    const float* bm = conv.data() + b * C + (in.B.begin - in.xBC().begin);
    const float* cm = conv.data() + b * C + (in.C.begin - in.xBC().begin);
    for (int64_t h = 0; h < d.H; ++h) {
      const int64_t g = h / (d.H / d.G);
      const double delta = ops::Softplus(double(dt[h]) + dt_bias[h]);
      const double dA = std::exp(delta * -std::exp(s.a_log_scale() * a_log[h]));
      for (int64_t q = 0; q < d.P; ++q) {
        const double xv = x[h * d.P + q];
        float* hs = st->ssm.data() + ((b * d.H + h) * d.P + q) * d.N;
        double acc = 0;
        for (int64_t n = 0; n < d.N; ++n) {
          hs[n] = static_cast<float>(dA * hs[n] + delta * xv * bm[g * d.N + n]);
          acc += double(hs[n]) * cm[g * d.N + n];
        }
        y[b * d.E + h * d.P + q] = static_cast<float>(acc + dskip[h] * xv);
      }
    }
    // Gated RMSNorm, norm_before_gate=False, groups of E / G channels.
    const int64_t gs = d.E / d.G;
    for (int64_t g = 0; g < d.G; ++g) {
      double ms = 0;
      std::vector<double> n(gs);
      for (int64_t i = 0; i < gs; ++i) {
        const int64_t c = g * gs + i;
        n[i] = y[b * d.E + c] * Silu(z[c]);
        ms += n[i] * n[i];
      }
      const double inv = 1.0 / std::sqrt(ms / gs + s.norm_eps());
      for (int64_t i = 0; i < gs; ++i)
        y[b * d.E + g * gs + i] = static_cast<float>(n[i] * inv * nw[g * gs + i]);
    }
  }
  return LinearNamed(p, "out_proj", y, B, d.E, D);
}

absl::StatusOr<std::vector<float>> AttentionHostStep(const HostParams& p, const AttentionSpec& s, int64_t D,
                                                     const std::vector<float>& u, int64_t B, LayerState* st) {
  const AttentionDims d = AttentionDimsOf(s, D);
  const int64_t HP = d.H * d.P;
  ASSIGN_OR_RETURN(std::vector<float> qkv, LinearNamed(p, "in_proj", u, B, D, 3 * HP));
  const int64_t t = st->steps;  // tokens already cached
  // Cache layout (B, T, H, P): rebuild with one more position.
  std::vector<float> keys(B * (t + 1) * HP), values(B * (t + 1) * HP);
  for (int64_t b = 0; b < B; ++b) {
    std::copy_n(st->keys.begin() + b * t * HP, t * HP, keys.begin() + b * (t + 1) * HP);
    std::copy_n(st->values.begin() + b * t * HP, t * HP, values.begin() + b * (t + 1) * HP);
    std::copy_n(qkv.begin() + b * 3 * HP + HP, HP, keys.begin() + (b * (t + 1) + t) * HP);
    std::copy_n(qkv.begin() + b * 3 * HP + 2 * HP, HP, values.begin() + (b * (t + 1) + t) * HP);
  }
  st->keys.swap(keys);
  st->values.swap(values);
  const double scale = 1.0 / std::sqrt(double(d.P));
  std::vector<float> o(B * HP);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < d.H; ++h) {
      const float* q = qkv.data() + b * 3 * HP + h * d.P;
      std::vector<double> sc(t + 1);
      double mx = -1e300;
      for (int64_t j = 0; j <= t; ++j) {
        const float* k = st->keys.data() + (b * (t + 1) + j) * HP + h * d.P;
        double dot = 0;
        for (int64_t i = 0; i < d.P; ++i) dot += double(q[i]) * k[i];
        sc[j] = dot * scale;
        mx = std::max(mx, sc[j]);
      }
      double z = 0;
      for (double& v : sc) z += (v = std::exp(v - mx));
      for (int64_t i = 0; i < d.P; ++i) {
        double acc = 0;
        for (int64_t j = 0; j <= t; ++j) acc += sc[j] * st->values[(b * (t + 1) + j) * HP + h * d.P + i];
        o[b * HP + h * d.P + i] = static_cast<float>(acc / z);
      }
    }
  }
  return LinearNamed(p, "out_proj", o, B, HP, D);
}

absl::StatusOr<std::vector<float>> LinearAttentionHostStep(const HostParams& p, const LinearAttentionSpec& s,
                                                           int64_t D, const std::vector<float>& u, int64_t B,
                                                           LayerState* st) {
  const AttentionDims d = LinearAttentionDimsOf(s, D);
  const int64_t HP = d.H * d.P;
  ASSIGN_OR_RETURN(std::vector<float> q, LinearNamed(p, "q_proj", u, B, D, HP));
  ASSIGN_OR_RETURN(std::vector<float> k, LinearNamed(p, "k_proj", u, B, D, HP));
  ASSIGN_OR_RETURN(std::vector<float> v, LinearNamed(p, "v_proj", u, B, D, HP));
  std::vector<float> o(B * HP);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < d.H; ++h) {
      float* S = st->ssm.data() + (b * d.H + h) * d.P * d.P;  // S[i][j] = sum_s k_s[i] v_s[j]
      const int64_t off = b * HP + h * d.P;
      for (int64_t i = 0; i < d.P; ++i) {
        for (int64_t j = 0; j < d.P; ++j) S[i * d.P + j] += k[off + i] * v[off + j];
      }
      for (int64_t j = 0; j < d.P; ++j) {
        double acc = 0;
        for (int64_t i = 0; i < d.P; ++i) acc += double(q[off + i]) * S[i * d.P + j];
        o[off + j] = static_cast<float>(acc);
      }
    }
  }
  return LinearNamed(p, "out_proj", o, B, HP, D);
}

}  // namespace

void Mamba1InitState(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state) {
  const Mamba1Dims d = Mamba1DimsOf(layer.mamba1(), d_model);
  state->conv.assign(batch * d.E * d.K, 0.f);
  state->ssm.assign(batch * d.E * d.N, 0.f);
}

void Mamba2InitState(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state) {
  const Mamba2Dims d = Mamba2DimsOf(layer.mamba2(), d_model);
  state->conv.assign(batch * Mamba2InProjOf(d).xBC().size * d.K, 0.f);
  state->ssm.assign(batch * d.H * d.P * d.N, 0.f);
}

void AttentionInitState(const LayerSpec&, int64_t, int64_t, LayerState*) {}  // the KV cache grows per step

void LinearAttentionInitState(const LayerSpec& layer, int64_t d_model, int64_t batch, LayerState* state) {
  const AttentionDims d = LinearAttentionDimsOf(layer.linear_attention(), d_model);
  state->ssm.assign(batch * d.H * d.P * d.P, 0.f);
}

absl::StatusOr<std::vector<float>> Mamba1Step(const core::ParamTree& params, const std::string& prefix,
                                              const LayerSpec& layer, int64_t d_model,
                                              const std::vector<float>& u, int64_t batch, LayerState* state) {
  return Mamba1HostStep(HostParams(params, prefix), layer.mamba1(), d_model, u, batch, state);
}

absl::StatusOr<std::vector<float>> Mamba2Step(const core::ParamTree& params, const std::string& prefix,
                                              const LayerSpec& layer, int64_t d_model,
                                              const std::vector<float>& u, int64_t batch, LayerState* state) {
  return Mamba2HostStep(HostParams(params, prefix), layer.mamba2(), d_model, u, batch, state);
}

absl::StatusOr<std::vector<float>> AttentionStep(const core::ParamTree& params, const std::string& prefix,
                                                 const LayerSpec& layer, int64_t d_model,
                                                 const std::vector<float>& u, int64_t batch,
                                                 LayerState* state) {
  return AttentionHostStep(HostParams(params, prefix), layer.attention(), d_model, u, batch, state);
}

absl::StatusOr<std::vector<float>> LinearAttentionStep(const core::ParamTree& params,
                                                       const std::string& prefix, const LayerSpec& layer,
                                                       int64_t d_model, const std::vector<float>& u,
                                                       int64_t batch, LayerState* state) {
  return LinearAttentionHostStep(HostParams(params, prefix), layer.linear_attention(), d_model, u, batch,
                                 state);
}

absl::StatusOr<RecurrentState> InitRecurrentState(const ModelSpec& spec, int64_t batch) {
  if (batch < 1)
    return absl::InvalidArgumentError(absl::StrCat("recurrent batch ", batch, "; expected >= 1"));
  RecurrentState state;
  state.batch = batch;
  for (const LayerSpec& layer : spec.layers()) {
    const Mixer* mixer = FindMixer(layer);
    if (mixer == nullptr) return absl::InvalidArgumentError("recurrent state: a layer has no mixer");
    LayerState ls;
    mixer->init_state(layer, spec.d_model(), batch, &ls);
    state.layers.push_back(std::move(ls));
  }
  return state;
}

absl::StatusOr<std::vector<float>> Step(const core::ParamTree& params, const ModelSpec& spec,
                                        const std::vector<int32_t>& tokens, RecurrentState* state) {
  const int64_t B = state->batch, D = spec.d_model(), V = PaddedVocab(spec);
  if (static_cast<int64_t>(tokens.size()) != B) {
    return absl::InvalidArgumentError(absl::StrCat("Step: ", tokens.size(), " tokens for batch ", B));
  }
  if (state->layers.size() != static_cast<size_t>(spec.layers_size())) {
    return absl::InvalidArgumentError("Step: state was made for a different model spec");
  }
  HostParams top(params, "");
  ASSIGN_OR_RETURN(std::vector<float> emb, top.Get("embedding/weight"));
  std::vector<float> h(B * D);
  for (int64_t b = 0; b < B; ++b) {
    if (tokens[b] < 0 || tokens[b] >= V) {
      return absl::InvalidArgumentError(absl::StrCat("Step: token ", tokens[b], " outside [0, ", V, ")"));
    }
    std::copy_n(emb.begin() + int64_t(tokens[b]) * D, D, h.begin() + b * D);
  }
  for (int i = 0; i < spec.layers_size(); ++i) {
    const std::string prefix = LayerPrefix(i);
    ASSIGN_OR_RETURN(std::vector<float> u, Norm(spec, HostParams(params, prefix + "norm/"), h, B, D));
    LayerState* ls = &state->layers[i];
    const LayerSpec& layer = spec.layers(i);
    const Mixer* mixer = FindMixer(layer);
    if (mixer == nullptr) return absl::InvalidArgumentError("Step: a layer has no mixer");
    ASSIGN_OR_RETURN(std::vector<float> m, mixer->step(params, prefix + "mixer/", layer, D, u, B, ls));
    ++ls->steps;
    for (int64_t k = 0; k < B * D; ++k) h[k] += m[k];
    if (spec.d_intermediate() > 0) {
      const int64_t I = spec.d_intermediate();
      HostParams mlp(params, prefix + "mlp/");
      ASSIGN_OR_RETURN(std::vector<float> v, Norm(spec, HostParams(params, prefix + "norm2/"), h, B, D));
      ASSIGN_OR_RETURN(std::vector<float> yg, LinearNamed(mlp, "fc1", v, B, D, 2 * I));
      std::vector<float> act(B * I);
      for (int64_t b = 0; b < B; ++b) {
        for (int64_t k = 0; k < I; ++k)
          act[b * I + k] = static_cast<float>(yg[b * 2 * I + k] * Silu(yg[b * 2 * I + I + k]));
      }
      ASSIGN_OR_RETURN(std::vector<float> o, LinearNamed(mlp, "fc2", act, B, I, D));
      for (int64_t k = 0; k < B * D; ++k) h[k] += o[k];
    }
  }
  ASSIGN_OR_RETURN(std::vector<float> hf, Norm(spec, HostParams(params, "norm_f/"), h, B, D));
  ASSIGN_OR_RETURN(std::vector<float> head,
                   top.Get(spec.tie_embeddings() ? "embedding/weight" : "lm_head/weight"));
  return Linear(hf, B, D, head, V, nullptr);
}

absl::StatusOr<std::vector<int32_t>> GreedyGenerate(const core::ParamTree& params, const ModelSpec& spec,
                                                    const std::vector<int32_t>& prompt, int64_t max_new,
                                                    int32_t stop_token) {
  if (prompt.empty()) return absl::InvalidArgumentError("GreedyGenerate: empty prompt");
  ASSIGN_OR_RETURN(RecurrentState state, InitRecurrentState(spec, 1));
  std::vector<float> logits;
  for (int32_t t : prompt) {
    ASSIGN_OR_RETURN(logits, Step(params, spec, {t}, &state));
  }
  std::vector<int32_t> out;
  while (static_cast<int64_t>(out.size()) < max_new) {
    const int32_t next =
        static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    out.push_back(next);
    if (next == stop_token) break;
    ASSIGN_OR_RETURN(logits, Step(params, spec, {next}, &state));
  }
  return out;
}

}  // namespace mimetic::models
