// Mimetic initialization of Mamba layers ("Mimetic Initialization Helps State Space Models Learn to
// Recall", §3): four components that make a Mamba layer start out as (un-kernelized, causal) linear
// attention with correlated queries and keys, and the paper's recipes. docs/mimetic_recipe.md
// walks through them; mimetic.cc has one named function per component under its formula.
//
//   // Mamba 2, every Mamba layer: A≈1, Δ≈1, W_CᵀW_B≈I, conv≈I.
//   Transform t = Compose({DefaultInit(), OnMambaLayers(Mimetic())});
//   // Only layer 4 of an 8-layer model (paper §4 "One mimetic init is all you need?").
//   Transform t4 = Compose({DefaultInit(), OnLayers({4}, Mimetic())});
#ifndef MIMETIC_INIT_MIMETIC_H_
#define MIMETIC_INIT_MIMETIC_H_

#include "mimetic/init/transform.h"

namespace mimetic::init {

// softplus^{-1}(1) = ln(e - 1), the paper's b_Δ ≈ 0.54.
inline constexpr double kSoftplusInverseOfOne = 0.5413248546129181;
// The paper's c in A = -exp(-c A_log): chosen from {2, 4, 8}, fixed to 8 from Fig. 3 on (§3).
inline constexpr double kMimeticC = 8.0;

// A≈1 (paper §3, Eq. 7). reparameterize=true: the layer's spec gets a_log_scale = -c, so the forward
// pass computes A = -exp(-c A_log) from the default A_log (the paper's "parameterize"). false: only
// the initial values change, A_log := -c A_log, under the ordinary A = -exp(A_log).
LayerTransform MimeticA(double c = kMimeticC, bool reparameterize = true);
// Δ≈1 (paper §3, Eq. 4): W_Δ scaled by w_delta_scale (0 = zeros: Mamba 1 dt_proj/weight, Mamba 2 the
// dt rows of in_proj) and the Δ bias set to `bias` (softplus^{-1}(1)), so Δ = softplus(bias) = 1.
LayerTransform MimeticDelta(double w_delta_scale = 0.0, double bias = kSoftplusInverseOfOne);
// W_CᵀW_B≈I (paper §3): W_C := (W_C + W_B) / 2, W_B unchanged (Mamba 1: the B and C rows of x_proj;
// Mamba 2: the B and C rows of in_proj, group by group; see models/proj_layout.h).
LayerTransform MimeticBC();
// Conv≈I (paper §3): every conv channel's last tap (the current token) 1, others 0, bias 0.
LayerTransform MimeticConv();

struct MimeticOptions {
  double c = kMimeticC;
  bool reparameterize = true;
  double w_delta_scale = 0.0;
  double delta_bias = kSoftplusInverseOfOne;
  // Which components; the defaults are the paper's recipes (end of §3: Mamba 1: A, Δ, BC; Mamba 2:
  // all four).
  bool a = true, delta = true, bc = true;
  bool conv_mamba1 = false, conv_mamba2 = true;
};
// The paper's recipe for the layer's kind; an error on a non-Mamba layer.
LayerTransform Mimetic(MimeticOptions options = {});

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_MIMETIC_H_
