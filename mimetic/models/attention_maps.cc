#include "mimetic/models/attention_maps.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/models/mixers.h"
#include "mimetic/ops/attention/attention.h"

namespace mimetic::models {
namespace {

absl::StatusOr<std::vector<float>> Host(const Tensor& t) { return t.ToVector<float>(); }

// S[t, c] = sum_{k<=t} delta[t, c] for one example: delta (L, C) -> (L, C) in double.
std::vector<double> CumSum(const std::vector<float>& delta, int64_t example, int64_t L, int64_t C) {
  std::vector<double> s(L * C);
  const float* d = delta.data() + example * L * C;
  for (int64_t c = 0; c < C; ++c) {
    double acc = 0;
    for (int64_t t = 0; t < L; ++t) {
      acc += d[t * C + c];
      s[t * C + c] = acc;
    }
  }
  return s;
}

absl::StatusOr<LayerMap> Mamba1Map(const Mamba1Internals& in, int64_t example) {
  const int64_t L = in.delta.dim(1), E = in.delta.dim(2), N = in.A.dim(1);
  ASSIGN_OR_RETURN(std::vector<float> delta, Host(in.delta));
  ASSIGN_OR_RETURN(std::vector<float> A, Host(in.A));
  ASSIGN_OR_RETURN(std::vector<float> Bm, Host(in.Bm));
  ASSIGN_OR_RETURN(std::vector<float> Cm, Host(in.Cm));
  std::vector<double> S = CumSum(delta, example, L, E);
  const float* dl = delta.data() + example * L * E;
  const float* b = Bm.data() + example * L * N;
  const float* c = Cm.data() + example * L * N;
  LayerMap out{L, std::vector<double>(L * L, 0.0), std::vector<double>(L * L, 0.0)};
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      double m = 0, mask = 0;
      for (int64_t d = 0; d < E; ++d) {
        const double gap = S[i * E + d] - S[j * E + d];
        double md = 0;
        for (int64_t n = 0; n < N; ++n) {
          const double decay = std::exp(A[d * N + n] * gap);
          md += c[i * N + n] * decay * b[j * N + n];
          mask += decay;
        }
        m += md * dl[j * E + d];
      }
      out.map[i * L + j] = m / E;
      out.mask[i * L + j] = mask / (E * N);
    }
  }
  return out;
}

absl::StatusOr<LayerMap> Mamba2Map(const Mamba2Internals& in, int64_t example) {
  const int64_t L = in.delta.dim(1), H = in.delta.dim(2), G = in.Bm.dim(2), N = in.Bm.dim(3);
  ASSIGN_OR_RETURN(std::vector<float> delta, Host(in.delta));
  ASSIGN_OR_RETURN(std::vector<float> A, Host(in.A));
  ASSIGN_OR_RETURN(std::vector<float> Bm, Host(in.Bm));
  ASSIGN_OR_RETURN(std::vector<float> Cm, Host(in.Cm));
  std::vector<double> S = CumSum(delta, example, L, H);
  const float* dl = delta.data() + example * L * H;
  const float* b = Bm.data() + example * L * G * N;
  const float* c = Cm.data() + example * L * G * N;
  LayerMap out{L, std::vector<double>(L * L, 0.0), std::vector<double>(L * L, 0.0)};
  for (int64_t h = 0; h < H; ++h) {
    const int64_t g = h / (H / G);
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t j = 0; j <= i; ++j) {
        double cb = 0;
        for (int64_t n = 0; n < N; ++n) cb += double(c[(i * G + g) * N + n]) * b[(j * G + g) * N + n];
        const double decay = std::exp(A[h] * (S[i * H + h] - S[j * H + h]));
        out.map[i * L + j] += cb * decay * dl[j * H + h] / H;
        out.mask[i * L + j] += decay / H;
      }
    }
  }
  return out;
}

absl::StatusOr<LayerMap> AttentionMap(const Tensor& weights, int64_t example) {
  // weights: (B, H, L, L)
  const int64_t H = weights.dim(1), L = weights.dim(2);
  ASSIGN_OR_RETURN(std::vector<float> w, Host(weights));
  LayerMap out{L, std::vector<double>(L * L, 0.0), std::vector<double>(L * L, 0.0)};
  for (int64_t h = 0; h < H; ++h) {
    const float* p = w.data() + (example * H + h) * L * L;
    for (int64_t i = 0; i < L * L; ++i) out.map[i] += p[i] / H;
  }
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j <= i; ++j) out.mask[i * L + j] = 1.0;
  }
  return out;
}

absl::Status CheckExample(const Tensor& captured, int64_t example) {
  RETURN_IF_ERROR(captured.status());
  if (example < 0 || example >= captured.dim(0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("attention map: example ", example, " is not in the batch"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<LayerMap> Mamba1LayerMap(const LayerInternals& internals, int64_t example) {
  RETURN_IF_ERROR(CheckExample(internals.mamba1.delta, example));
  return Mamba1Map(internals.mamba1, example);
}

absl::StatusOr<LayerMap> Mamba2LayerMap(const LayerInternals& internals, int64_t example) {
  RETURN_IF_ERROR(CheckExample(internals.mamba2.delta, example));
  return Mamba2Map(internals.mamba2, example);
}

absl::StatusOr<LayerMap> SoftmaxAttentionLayerMap(const LayerInternals& internals, int64_t example) {
  const AttentionInternals& a = internals.attention;
  RETURN_IF_ERROR(CheckExample(a.q, example));
  Tensor w = ops::CausalSoftmaxAttentionWeights(a.q, a.k, 1.0 / std::sqrt(double(a.q.dim(3))));
  RETURN_IF_ERROR(w.status());
  return AttentionMap(w, example);
}

absl::StatusOr<LayerMap> LinearAttentionLayerMap(const LayerInternals& internals, int64_t example) {
  const AttentionInternals& a = internals.attention;
  RETURN_IF_ERROR(CheckExample(a.q, example));
  Tensor w = ops::CausalLinearAttentionWeights(a.q, a.k);
  RETURN_IF_ERROR(w.status());
  return AttentionMap(w, example);
}

absl::StatusOr<LayerMap> ComputeLayerMap(const ModelSpec& spec, const LayerInternals& internals,
                                         int64_t example) {
  const Mixer* mixer = FindMixer(internals.kind);
  if (mixer == nullptr)
    return absl::InvalidArgumentError("attention map: the layer's internals were not captured");
  return mixer->map(internals, example);
}

absl::StatusOr<std::vector<LayerMap>> ComputeAllLayerMaps(const core::ParamTree& params,
                                                          const ModelSpec& spec, const core::Tensor& tokens,
                                                          int64_t example) {
  std::vector<LayerInternals> internals;
  Tensor logits = Apply(params, spec, tokens, &internals);
  RETURN_IF_ERROR(logits.status());
  std::vector<LayerMap> maps;
  for (const LayerInternals& li : internals) {
    ASSIGN_OR_RETURN(LayerMap m, ComputeLayerMap(spec, li, example));
    maps.push_back(std::move(m));
  }
  return maps;
}

double MeanLowerTriangle(const std::vector<double>& m, int64_t length) {
  double sum = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      sum += m[i * length + j];
      ++count;
    }
  }
  return count ? sum / count : 0.0;
}

}  // namespace mimetic::models
