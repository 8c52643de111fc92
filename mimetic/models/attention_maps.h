// Attention maps of any layer ("hidden attention", Ali et al. 2024; paper §2 Eq. 8), for one
// example of a batch: the L x L matrix M with y_i = sum_{j<=i} M[i,j] x_j (averaged over channels or
// heads), and for Mamba layers the average decay mask exp(A (S_i - S_j)), S = cumsum(Δ).
//
//   std::vector<LayerInternals> internals;
//   Apply(params, spec, tokens, &internals);
//   ASSIGN_OR_RETURN(LayerMap m, ComputeLayerMap(spec, params, 3, internals[3], /*example=*/0));
//   m.map;   // (L, L) row-major, zero above the diagonal
//   m.mask;  // (L, L) average mask (ones for attention layers, whose "mask" is the causal one)
#ifndef MIMETIC_MODELS_ATTENTION_MAPS_H_
#define MIMETIC_MODELS_ATTENTION_MAPS_H_

#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/models/lm.h"

namespace mimetic::models {

struct LayerMap {
  int64_t length = 0;
  std::vector<double> map;   // (L, L)
  std::vector<double> mask;  // (L, L)
};

absl::StatusOr<LayerMap> ComputeLayerMap(const ModelSpec& spec, const LayerInternals& internals,
                                         int64_t example);

// The map of one layer kind (the rows of mixers.h): an error when `example` is outside the batch or
// the kind's internals were not captured.
absl::StatusOr<LayerMap> Mamba1LayerMap(const LayerInternals& internals, int64_t example);
absl::StatusOr<LayerMap> Mamba2LayerMap(const LayerInternals& internals, int64_t example);
absl::StatusOr<LayerMap> SoftmaxAttentionLayerMap(const LayerInternals& internals, int64_t example);
absl::StatusOr<LayerMap> LinearAttentionLayerMap(const LayerInternals& internals, int64_t example);

// Convenience: runs the model on `tokens` and returns every layer's map for `example`.
absl::StatusOr<std::vector<LayerMap>> ComputeAllLayerMaps(const core::ParamTree& params,
                                                          const ModelSpec& spec, const core::Tensor& tokens,
                                                          int64_t example);

// Mean of the mask over the lower triangle (j <= i), a one-number summary: ≈1 for a layer that
// can look all the way back, small for one that only sees the recent past.
double MeanLowerTriangle(const std::vector<double>& m, int64_t length);

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_ATTENTION_MAPS_H_
