#include "mimetic/models/flops.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/models/proj_layout.h"

namespace mimetic::models {

double Mamba1LayerFlops(const Mamba1Dims& d, int64_t batch, int64_t length, bool backward) {
  const double T = double(batch) * length;
  const double gemm = 2 * T * (d.D * 2 * d.E + d.E * (d.R + 2 * d.N) + d.R * d.E + d.E * d.D);
  const double scan = T * d.E * d.N;
  return backward ? 3 * gemm + 27 * scan : gemm + 9 * scan;
}

double Mamba2LayerFlops(const Mamba2Dims& d, int64_t chunk, int64_t batch, int64_t length, bool backward) {
  const double T = double(batch) * length;
  const double gemm = 2 * T * (d.D * Mamba2InProjOf(d).rows() + d.E * d.D);
  const double G = d.G, H = d.H, N = d.N, P = d.P;
  double scan = 0;
  for (int64_t t0 = 0; t0 < length; t0 += chunk) {
    const double q = std::min(chunk, length - t0);
    const double tri = q * (q + 1);
    scan += G * N * tri + H * (4 * q * N * P + P * tri);
    if (backward) scan += G * N * tri + H * (10 * q * N * P + 2 * P * tri + 2 * N * tri);
  }
  return (backward ? 3 : 1) * gemm + scan * batch;
}

absl::StatusOr<double> TrainStepFlops(const ModelSpec& spec, int64_t batch, int64_t length) {
  if (spec.d_intermediate() > 0) {
    return absl::UnimplementedError("TrainStepFlops: MLP layers (d_intermediate > 0) are not counted");
  }
  const int64_t D = spec.d_model();
  double total = 3 * 2.0 * double(batch) * length * D * PaddedVocab(spec);  // tied head
  for (int i = 0; i < spec.layers_size(); ++i) {
    const LayerSpec& layer = spec.layers(i);
    if (layer.has_mamba1()) {
      total += Mamba1LayerFlops(Mamba1DimsOf(layer.mamba1(), D), batch, length, /*backward=*/true);
    } else if (layer.has_mamba2()) {
      total += Mamba2LayerFlops(Mamba2DimsOf(layer.mamba2(), D), layer.mamba2().chunk_size(), batch, length,
                                /*backward=*/true);
    } else {
      return absl::UnimplementedError(absl::StrCat("TrainStepFlops: layer ", i, " is ", MixerKind(layer),
                                                   "; only mamba1 and mamba2 layers are counted"));
    }
  }
  return total;
}

}  // namespace mimetic::models
