#include "mimetic/models/layer_init.h"

#include <cmath>

#include "mimetic/core/random.h"

namespace mimetic::models {

absl::StatusOr<Tensor> UniformTensor(Key key, const core::Shape& shape, double lo, double hi) {
  return core::Uniform(key, shape, lo, hi, core::DType::kF32);
}

absl::StatusOr<Tensor> LinearWeight(Key key, int64_t out, int64_t in) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  return UniformTensor(key, {out, in}, -bound, bound);
}

absl::StatusOr<Tensor> ConstantTensor(const core::Shape& shape, float value) {
  std::vector<float> v(core::NumElements(shape), value);
  return Tensor::FromHost<float>(shape, v);
}

double InverseSoftplus(double y) { return y + std::log(-std::expm1(-y)); }

absl::StatusOr<Tensor> DtBias(Key key, int64_t n, double dt_min, double dt_max, double floor) {
  ASSIGN_OR_RETURN(Tensor u, core::Uniform(key, {n}, 0.0, 1.0, core::DType::kF64));
  ASSIGN_OR_RETURN(std::vector<double> uv, u.ToVector<double>());
  std::vector<float> bias(n);
  const double lmin = std::log(dt_min), lmax = std::log(dt_max);
  for (int64_t i = 0; i < n; ++i) {
    double dt = std::exp(uv[i] * (lmax - lmin) + lmin);
    dt = std::max(dt, floor);
    bias[i] = static_cast<float>(InverseSoftplus(dt));
  }
  return Tensor::FromHost<float>({n}, bias);
}

}  // namespace mimetic::models
