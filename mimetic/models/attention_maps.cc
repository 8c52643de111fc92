#include "mimetic/models/attention_maps.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/core/xt_view.h"
#include "mimetic/models/mixers.h"
#include "mimetic/ops/attention/attention.h"
#include "xtensor/xadapt.hpp"
#include "xtensor/xtensor.hpp"

namespace mimetic::models {
namespace {

// A host copy of a captured tensor (it may live on a GPU). Views alias it: keep it alive while they are.
absl::StatusOr<Tensor> Host(const Tensor& t) { return t.ToDevice(core::Device::kCpu); }

// S[t, c] = sum_{k<=t} delta[e, k, c] for example e: delta (B, L, C) -> S (L, C) in double.
xt::xtensor<double, 2> CumSum(const core::XtView<const float, 3>& delta, int64_t e) {
  const int64_t L = delta.shape(1), C = delta.shape(2);
  xt::xtensor<double, 2> s({static_cast<size_t>(L), static_cast<size_t>(C)});
  for (int64_t c = 0; c < C; ++c) {
    double acc = 0;
    for (int64_t t = 0; t < L; ++t) {
      acc += delta(e, t, c);
      s(t, c) = acc;
    }
  }
  return s;
}

// Eq. 8 with one state per channel d: M[i, j] = mean_d sum_n C[i, n] exp(A[d, n] (S[i, d] - S[j, d]))
// B[j, n] Δ[j, d]; the mask is exp(A[d, n] (S[i, d] - S[j, d])) averaged over d and n.
absl::StatusOr<LayerMap> Mamba1Map(const Mamba1Internals& in, int64_t e) {
  ASSIGN_OR_RETURN(const Tensor delta_h, Host(in.delta));
  ASSIGN_OR_RETURN(const Tensor a_h, Host(in.A));
  ASSIGN_OR_RETURN(const Tensor b_h, Host(in.Bm));
  ASSIGN_OR_RETURN(const Tensor c_h, Host(in.Cm));
  ASSIGN_OR_RETURN(auto delta, (core::MakeXtView<const float, 3>(delta_h)));  // (B, L, E)
  ASSIGN_OR_RETURN(auto A, (core::MakeXtView<const float, 2>(a_h)));          // (E, N)
  ASSIGN_OR_RETURN(auto b, (core::MakeXtView<const float, 3>(b_h)));          // (B, L, N)
  ASSIGN_OR_RETURN(auto c, (core::MakeXtView<const float, 3>(c_h)));          // (B, L, N)
  const int64_t L = delta.shape(1), E = delta.shape(2), N = A.shape(1);
  const xt::xtensor<double, 2> S = CumSum(delta, e);  // (L, E)
  LayerMap out{L, std::vector<double>(L * L, 0.0), std::vector<double>(L * L, 0.0)};
  auto map = xt::adapt(out.map, {L, L}), mask = xt::adapt(out.mask, {L, L});  // (L, L)
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      double m = 0, mask_sum = 0;
      for (int64_t d = 0; d < E; ++d) {
        const double gap = S(i, d) - S(j, d);
        double md = 0;
        for (int64_t n = 0; n < N; ++n) {
          const double decay = std::exp(A(d, n) * gap);
          md += c(e, i, n) * decay * b(e, j, n);
          mask_sum += decay;
        }
        m += md * delta(e, j, d);
      }
      map(i, j) = m / E;
      mask(i, j) = mask_sum / (E * N);
    }
  }
  return out;
}

// Eq. 8 with one scalar A per head h (group g = h / (H / G)): M[i, j] = mean_h (C[i, g]·B[j, g])
// exp(A[h] (S[i, h] - S[j, h])) Δ[j, h]; the mask is exp(A[h] (S[i, h] - S[j, h])) averaged over h.
absl::StatusOr<LayerMap> Mamba2Map(const Mamba2Internals& in, int64_t e) {
  ASSIGN_OR_RETURN(const Tensor delta_h, Host(in.delta));
  ASSIGN_OR_RETURN(const Tensor a_h, Host(in.A));
  ASSIGN_OR_RETURN(const Tensor b_h, Host(in.Bm));
  ASSIGN_OR_RETURN(const Tensor c_h, Host(in.Cm));
  ASSIGN_OR_RETURN(auto delta, (core::MakeXtView<const float, 3>(delta_h)));  // (B, L, H)
  ASSIGN_OR_RETURN(auto A, (core::MakeXtView<const float, 1>(a_h)));          // (H)
  ASSIGN_OR_RETURN(auto b, (core::MakeXtView<const float, 4>(b_h)));          // (B, L, G, N)
  ASSIGN_OR_RETURN(auto c, (core::MakeXtView<const float, 4>(c_h)));          // (B, L, G, N)
  const int64_t L = delta.shape(1), H = delta.shape(2), G = b.shape(2), N = b.shape(3);
  const xt::xtensor<double, 2> S = CumSum(delta, e);  // (L, H)
  LayerMap out{L, std::vector<double>(L * L, 0.0), std::vector<double>(L * L, 0.0)};
  auto map = xt::adapt(out.map, {L, L}), mask = xt::adapt(out.mask, {L, L});  // (L, L)
  for (int64_t h = 0; h < H; ++h) {
    const int64_t g = h / (H / G);
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t j = 0; j <= i; ++j) {
        double cb = 0;
        for (int64_t n = 0; n < N; ++n) cb += double(c(e, i, g, n)) * b(e, j, g, n);
        const double decay = std::exp(A(h) * (S(i, h) - S(j, h)));
        map(i, j) += cb * decay * delta(e, j, h) / H;
        mask(i, j) += decay / H;
      }
    }
  }
  return out;
}

// The head-averaged attention weights w (B, H, L, L) of example e; the mask is the causal one.
absl::StatusOr<LayerMap> AttentionMap(const Tensor& weights, int64_t e) {
  ASSIGN_OR_RETURN(const Tensor w_h, Host(weights));
  ASSIGN_OR_RETURN(auto w, (core::MakeXtView<const float, 4>(w_h)));  // (B, H, L, L)
  const int64_t H = w.shape(1), L = w.shape(2);
  LayerMap out{L, std::vector<double>(L * L, 0.0), std::vector<double>(L * L, 0.0)};
  auto map = xt::adapt(out.map, {L, L}), mask = xt::adapt(out.mask, {L, L});  // (L, L)
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i = 0; i < L; ++i) {
      for (int64_t j = 0; j < L; ++j) map(i, j) += w(e, h, i, j) / H;
    }
  }
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j <= i; ++j) mask(i, j) = 1.0;
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
  auto v = xt::adapt(m.data(), {length, length});  // (L, L)
  double sum = 0;
  int64_t count = 0;
  for (int64_t i = 0; i < length; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      sum += v(i, j);
      ++count;
    }
  }
  return count ? sum / count : 0.0;
}

}  // namespace mimetic::models
