// PyTorch's default initializers, reproduced as pure functions of a Key (mamba_ssm builds its
// layers with these before the model-level _init_weights pass; mamba_ssm modules/mamba_simple.py,
// modules/mamba2.py, models/mixer_seq_simple.py).
//
//   Tensor w = LinearWeight(FoldIn(key, path), /*out=*/2 * E, /*in=*/D);   // U(±1/sqrt(D))
#ifndef MIMETIC_MODELS_LAYER_INIT_H_
#define MIMETIC_MODELS_LAYER_INIT_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/key.h"
#include "mimetic/core/tensor.h"

namespace mimetic::models {

using core::Key;
using core::Tensor;
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// nn.Linear weight (out, in): kaiming_uniform(a=sqrt(5)) = U(-1/sqrt(in), 1/sqrt(in)).
absl::StatusOr<Tensor> LinearWeight(Key key, int64_t out, int64_t in);
// U(lo, hi) of any shape.
absl::StatusOr<Tensor> UniformTensor(Key key, const core::Shape& shape, double lo, double hi);
// Constant f32 tensor.
absl::StatusOr<Tensor> ConstantTensor(const core::Shape& shape, float value);
// mamba_ssm's dt bias: dt = exp(U(0,1) (ln dt_max - ln dt_min) + ln dt_min), clamped to >= floor,
// then softplus^{-1}(dt) = dt + ln(-expm1(-dt)). Shape (n).
absl::StatusOr<Tensor> DtBias(Key key, int64_t n, double dt_min, double dt_max, double floor);
// softplus^{-1}(y) = y + ln(-expm1(-y)) (stable); softplus^{-1}(1) = ln(e - 1) = 0.5413...
double InverseSoftplus(double y);

// The key for the parameter at `path`: FoldIn(model_key, path), so adding or removing a layer
// never changes another parameter's initial value.
inline Key ParamKey(Key model_key, const std::string& path) { return core::FoldIn(model_key, path); }

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_LAYER_INIT_H_
