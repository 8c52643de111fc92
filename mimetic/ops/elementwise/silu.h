// SiLU, x sigmoid(x), and its derivative s (1 + x (1 - s)), as the elementwise ops compute them, for
// kernels that fuse them with other work (conv1d's CausalConv1dSilu) and must give Silu's bits:
// Reference / ReferenceGrad are elementwise.cc's formulas (any T), Fast / FastGrad the fast CPU
// kernels' (f32 through fast_math's vectorisable sigmoid, elementwise_cpu.cc; f64 the reference).
#ifndef MIMETIC_OPS_ELEMENTWISE_SILU_H_
#define MIMETIC_OPS_ELEMENTWISE_SILU_H_

#include <cmath>
#include <type_traits>

#include "mimetic/ops/cpu/fast_math.h"

namespace mimetic::ops::silu {

template <typename T>
inline T Reference(T x) {
  return x / (T(1) + std::exp(-x));
}

// 1 + x (1 - s) as one fused multiply-add, spelled out: the references are compiled without contraction
// (-ffp-contract=off) and the fast kernels with it, and this one formula is inlined into both, so an
// implicit contraction would give the fused conv1d kernel and Silu's gradient different f64 bits.
template <typename T>
inline T ReferenceGrad(T x) {
  const T s = T(1) / (T(1) + std::exp(-x));
  return s * std::fma(x, T(1) - s, T(1));
}

template <typename T>
inline T Fast(T x) {
  if constexpr (std::is_same_v<T, float>) return x * fast_math::Sigmoid(x);
  return Reference<T>(x);
}

template <typename T>
inline T FastGrad(T x) {
  if constexpr (std::is_same_v<T, float>) {
    const float s = fast_math::Sigmoid(x);
    return s * (1.0f + x * (1.0f - s));
  }
  return ReferenceGrad<T>(x);
}

}  // namespace mimetic::ops::silu

#endif  // MIMETIC_OPS_ELEMENTWISE_SILU_H_
