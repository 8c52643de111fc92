// Softplus with mamba_ssm's threshold, the one definition every backend and the models' float64
// oracles call: softplus(x) = log(1 + e^x), and x itself above 20.
//
// This is the formula of mamba_ssm's kernels (selective_scan_fwd_kernel.cuh:
// `delta <= 20.f ? log1pf(expf(delta)) : delta`; ssd_chunk_state.py: `tl.where(dt <= 20.0,
// softplus(dt), dt)`) and of PyTorch's F.softplus (beta 1, threshold 20), so float64 results match
// theirs bit for bit. Above 20, log1p(e^-x) < 2.1e-9 is below half an ulp of x in float32.
// The vectorised float32 CPU kernels use fast_math::Softplus (mimetic/ops/cpu/fast_math.h), a
// polynomial evaluation of the same function with the same threshold (relative error < 2e-7).
//
// Usable in host code and in CUDA device code (nvcc maps std::exp / std::log1p to the device math
// library). Usage:
//   const double delta = ops::Softplus(pre);          // Δ = softplus(dt + dt_bias)
//   const float grad = ops::SoftplusGrad(pre_f);      // d Δ / d pre = sigmoid(pre)
#ifndef MIMETIC_OPS_SOFTPLUS_H_
#define MIMETIC_OPS_SOFTPLUS_H_

#include <cmath>

#if defined(__CUDACC__)
#define MIMETIC_SOFTPLUS_HD __host__ __device__
#else
#define MIMETIC_SOFTPLUS_HD
#endif

namespace mimetic::ops {

// Above this, softplus(x) = x and its derivative is 1 (mamba_ssm's and PyTorch's threshold).
inline constexpr double kSoftplusThreshold = 20.0;

template <typename T>
MIMETIC_SOFTPLUS_HD inline T Softplus(T x) {
  return x > T(kSoftplusThreshold) ? x : std::log1p(std::exp(x));
}

// d softplus / dx = sigmoid(x) = 1 / (1 + e^-x), and 1 above the threshold.
template <typename T>
MIMETIC_SOFTPLUS_HD inline T SoftplusGrad(T x) {
  return x > T(kSoftplusThreshold) ? T(1) : T(1) / (T(1) + std::exp(-x));
}

}  // namespace mimetic::ops

#undef MIMETIC_SOFTPLUS_HD

#endif  // MIMETIC_OPS_SOFTPLUS_H_
