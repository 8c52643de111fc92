// γ-scaled initialization (Zhang et al. 2024; Chen et al. 2025 "Achilles' heel"): every
// weight matrix W with fan-in d_in is redrawn from N(0, (d_in^-γ)^2). γ = 0.5 is LeCun-like,
// γ = 1 "small init". Covered: rank-2 `.../weight` matrices (Linear weights stored (out, in), so
// d_in = shape[1]; the embedding table (V, D) uses d_in = V as the papers do). SSM-specific
// vectors and matrices (A_log, D, dt_bias, dt_proj/bias), convolutions and norms keep their init.
//
//   Transform t = Compose({DefaultInit(), GammaInit(1.0)});
#ifndef MIMETIC_INIT_GAMMA_H_
#define MIMETIC_INIT_GAMMA_H_

#include "mimetic/init/transform.h"

namespace mimetic::init {

Transform GammaInit(double gamma);
// Whether GammaInit redraws the leaf at `path` with this shape, and its fan-in.
bool GammaCovers(const std::string& path, const core::Shape& shape, int64_t* fan_in);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_GAMMA_H_
