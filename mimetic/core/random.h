// Random samplers: pure functions from a Key to a CPU Tensor (or a host vector), the only source of
// randomness in mimetic. Each follows the algorithm of its jax.random namesake on top of the classic
// threefry bits of key.h, so the same key gives identical bits on every machine:
//
//   ASSIGN_OR_RETURN(Tensor w, Normal(FoldIn(key, "layers/0/mixer/in_proj"), {D, 2 * E}));  // (D, 2E)
//   ASSIGN_OR_RETURN(Tensor dt, Uniform(FoldIn(key, "layers/0/mixer/dt"), {E}, 1e-3, 1e-1));  // (E)
//   ASSIGN_OR_RETURN(std::vector<int32_t> tokens, RandIntVector(data_key, B * L, 0, V));  // (B*L)
//
// Reproducibility. Floating-point work uses only IEEE +, -, *, /, sqrt and exact operations
// (bit casts, frexp, ldexp, floor, nextafter), with contraction into fused multiply-adds disabled
// for this library (BUILD: -ffp-contract=off), and the few transcendental functions needed (log,
// exp, erf, the normal quantile) are implemented below from those operations rather than taken from
// the platform's libm, whose last bits differ between machines and library versions.
//
// Agreement with JAX (classic threefry, jax_threefry_partitionable=False):
//   Uniform, RandInt (for hi - lo <= 2^16), Permutation, ChoiceWithoutReplacement: identical values.
//   Normal, TruncatedNormal: the same uniforms and the same transform sqrt(2) * erfinv(u); erfinv is
//   computed here in double precision (Wichura's AS241) where XLA uses a float polynomial, so the
//   values agree to about 1e-6 relative, not bit for bit.
//
// Bad arguments (lo >= hi, negative dimensions or counts, k > n, a non-float dtype for a float
// sampler) give InvalidArgument naming the function, the argument and the expected range.
#ifndef MIMETIC_CORE_RANDOM_H_
#define MIMETIC_CORE_RANDOM_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/key.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

// Uniform in [lo, hi), f32 or f64. jax.random.uniform: the top mantissa-width bits of each random
// word, placed under the exponent of 1.0, give a float f in [1, 2); the result is
// max(lo, (f - 1) * (hi - lo) + lo), computed in the output dtype (32 random bits per f32 element,
// 64 per f64 element, as RandomBits64). Unlike JAX, a value that rounds up to hi is lowered to the
// largest float below hi, so the range is exactly half-open.
absl::StatusOr<Tensor> Uniform(Key key, const Shape& shape, double lo = 0.0, double hi = 1.0,
                               DType dtype = DType::kF32);

// Standard normal, f32 or f64. jax.random.normal: u = Uniform(key, shape, nextafter(-1, 0), 1) in the
// output dtype, then sqrt(2) * erfinv(u), evaluated in double precision as Phi^-1((1 + u) / 2) by
// Wichura's AS241 (relative error about 1e-16) and rounded to the output dtype.
absl::StatusOr<Tensor> Normal(Key key, const Shape& shape, DType dtype = DType::kF32);

// Standard normal truncated to (lo, hi), f32 or f64. jax.random.truncated_normal: u uniform in
// [erf(lo / sqrt 2), erf(hi / sqrt 2)), then sqrt(2) * erfinv(u), clipped to
// [nextafter(lo, +inf), nextafter(hi, -inf)]. Infinite bounds are allowed; lo < hi is required.
absl::StatusOr<Tensor> TruncatedNormal(Key key, const Shape& shape, double lo = -2.0, double hi = 2.0,
                                       DType dtype = DType::kF32);

// Integers uniform in [lo, hi), i32. Two 32-bit words per element, from the two keys of
// Split(key): the result is lo + ((high << 32) | low) mod (hi - lo). The modulo bias is below
// (hi - lo) / 2^64 < 2^-32 relative for every value. jax.random.randint does the same arithmetic in
// 32-bit words, which is exact (so the values agree) while hi - lo <= 2^16 and wraps beyond.
absl::StatusOr<Tensor> RandInt(Key key, const Shape& shape, int32_t lo, int32_t hi);

// A uniformly random permutation of 0 .. n-1, i32 of shape (n). jax.random.permutation: a stable
// sort of the values by fresh random 32-bit words, repeated ceil(3 ln n / ln(2^32 - 1)) times (once
// for n <= 1625, twice up to about 2.6e6) with key, subkey = Split2(key) each round, which makes ties
// (the only source of bias) negligible.
absl::StatusOr<Tensor> Permutation(Key key, int64_t n);

// k distinct integers from 0 .. n_population-1, uniformly, in random order; i32 of shape (k).
// jax.random.choice(key, n_population, (k,), replace=False): the first k entries of
// Permutation(key, n_population), so it costs O(n_population log n_population).
absl::StatusOr<Tensor> ChoiceWithoutReplacement(Key key, int64_t n_population, int64_t k);

// Host-vector versions, for data generation: n elements, the same values as the Tensor versions of
// shape (n) (f32 unless the name says F64).
absl::StatusOr<std::vector<float>> UniformVector(Key key, int64_t n, float lo = 0.0f, float hi = 1.0f);
absl::StatusOr<std::vector<double>> UniformVectorF64(Key key, int64_t n, double lo = 0.0, double hi = 1.0);
absl::StatusOr<std::vector<float>> NormalVector(Key key, int64_t n);
absl::StatusOr<std::vector<double>> NormalVectorF64(Key key, int64_t n);
absl::StatusOr<std::vector<float>> TruncatedNormalVector(Key key, int64_t n, float lo = -2.0f,
                                                         float hi = 2.0f);
absl::StatusOr<std::vector<int32_t>> RandIntVector(Key key, int64_t n, int32_t lo, int32_t hi);
absl::StatusOr<std::vector<int32_t>> PermutationVector(Key key, int64_t n);
absl::StatusOr<std::vector<int32_t>> ChoiceWithoutReplacementVector(Key key, int64_t n_population, int64_t k);

namespace internal {

// Machine-independent elementary functions (see "Reproducibility" above); exposed for tests.
double Log(double x);  // Natural log: -inf at 0, NaN below 0; |error| about 1 ulp.
double Exp(double x);  // |error| a few ulp; 0 below -745.2, +inf above 709.78.
double Erf(double x);  // Absolute error about 1e-15.
// sqrt(2) * erfinv(u) = Phi^-1((1 + u) / 2) for u in [-1, 1] (+-inf at +-1), by AS241 (Wichura,
// "The Percentage Points of the Normal Distribution", Applied Statistics 37(3), 1988). The central
// branch uses q = u / 2 and the tails use (1 - |u|) / 2, both exact, so no precision is lost in
// forming the probability.
double SqrtTwoErfInv(double u);

}  // namespace internal
}  // namespace mimetic::core

#endif  // MIMETIC_CORE_RANDOM_H_
