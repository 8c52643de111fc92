#include "mimetic/core/random.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"

namespace mimetic::core {
namespace internal {
namespace {

// ln 2 split so that k * kLn2Hi is exact for |k| < 2^20 (fdlibm's constants).
constexpr double kLn2Hi = 6.93147180369123816490e-01;
constexpr double kLn2Lo = 1.90821492927058770002e-10;
constexpr double kInvLn2 = 1.44269504088896338700e+00;
constexpr double kTwoOverSqrtPi = 1.12837916709551257390e+00;
constexpr double kSqrtHalf = 7.07106781186547524401e-01;
constexpr double kSqrtTwo = 1.41421356237309504880e+00;

// Horner evaluation of c[0] + c[1] x + ... + c[N-1] x^(N-1).
template <size_t N>
double Polynomial(const double (&c)[N], double x) {
  double value = c[N - 1];
  for (size_t i = N - 1; i-- > 0;) value = value * x + c[i];
  return value;
}

}  // namespace

double Log(double x) {
  if (std::isnan(x) || x < 0) return std::numeric_limits<double>::quiet_NaN();
  if (x == 0) return -std::numeric_limits<double>::infinity();
  if (std::isinf(x)) return x;
  // x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1), |s| <= 0.172,
  // and the atanh series s (1 + s^2/3 + s^4/5 + ...) reaches double precision after 12 terms.
  int e = 0;
  double m = std::frexp(x, &e);  // Exact, m in [0.5, 1); subnormals included.
  if (m < kSqrtHalf) {
    m *= 2;
    --e;
  }
  const double s = (m - 1) / (m + 1);
  const double s2 = s * s;
  static constexpr double kAtanh[] = {1.0,      1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,  1.0 / 11,
                                      1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21, 1.0 / 23};
  const double log_m = 2 * s * Polynomial(kAtanh, s2);
  return e * kLn2Hi + (e * kLn2Lo + log_m);
}

double Exp(double x) {
  if (std::isnan(x)) return x;
  if (x > 709.78) return std::numeric_limits<double>::infinity();
  if (x < -745.2) return 0.0;
  // x = k ln 2 + r with |r| <= ln 2 / 2 (Cody-Waite), exp r by its Taylor series to r^16 / 16!.
  const double k = std::floor(x * kInvLn2 + 0.5);
  const double r = (x - k * kLn2Hi) - k * kLn2Lo;
  static constexpr double kTaylor[] = {1.0,
                                       1.0,
                                       1.0 / 2,
                                       1.0 / 6,
                                       1.0 / 24,
                                       1.0 / 120,
                                       1.0 / 720,
                                       1.0 / 5040,
                                       1.0 / 40320,
                                       1.0 / 362880,
                                       1.0 / 3628800,
                                       1.0 / 39916800,
                                       1.0 / 479001600,
                                       1.0 / 6227020800.0,
                                       1.0 / 87178291200.0,
                                       1.0 / 1307674368000.0,
                                       1.0 / 20922789888000.0};
  // ldexp is exact, or rounds once when the result is subnormal (IEEE scaleB).
  return std::ldexp(Polynomial(kTaylor, r), static_cast<int>(k));
}

double Erf(double x) {
  if (std::isnan(x)) return x;
  const double ax = std::fabs(x);
  const double sign = x < 0 ? -1.0 : 1.0;
  if (ax >= 6.0) return sign;  // 1 - erf(6) = 2.2e-17, below half an ulp of 1.
  // erf x = 2/sqrt(pi) e^{-x^2} sum_{n>=0} 2^n x^{2n+1} / (1 * 3 * ... * (2n+1)): all terms positive,
  // so no cancellation; at |x| < 6 it converges within about 150 terms.
  const double x2 = ax * ax;
  double term = ax;
  double sum = ax;
  for (int n = 1; n < 400 && term > sum * 1e-17; ++n) {
    term *= 2 * x2 / (2 * n + 1);
    sum += term;
  }
  return sign * (kTwoOverSqrtPi * Exp(-x2) * sum);
}

double SqrtTwoErfInv(double u) {
  if (std::isnan(u) || u < -1 || u > 1) return std::numeric_limits<double>::quiet_NaN();
  // AS241 (PPND16): coefficients of the numerator and denominator polynomials, lowest degree first.
  static constexpr double kA[] = {
      3.3871328727963666080e0,  1.3314166789178437745e+2, 1.9715909503065514427e+3, 1.3731693765509461125e+4,
      4.5921953931549871457e+4, 6.7265770927008700853e+4, 3.3430575583588128105e+4, 2.5090809287301226727e+3};
  static constexpr double kB[] = {1.0,
                                  4.2313330701600911252e+1,
                                  6.8718700749205790830e+2,
                                  5.3941960214247511077e+3,
                                  2.1213794301586595867e+4,
                                  3.9307895800092710610e+4,
                                  2.8729085735721942674e+4,
                                  5.2264952788528545610e+3};
  static constexpr double kC[] = {1.42343711074968357734e0,  4.63033784615654529590e0,
                                  5.76949722146069140550e0,  3.64784832476320460504e0,
                                  1.27045825245236838258e0,  2.41780725177450611770e-1,
                                  2.27238449892691845833e-2, 7.74545014278341407640e-4};
  static constexpr double kD[] = {1.0,
                                  2.05319162663775882187e0,
                                  1.67638483018380384940e0,
                                  6.89767334985100004550e-1,
                                  1.48103976427480074590e-1,
                                  1.51986665636164571966e-2,
                                  5.47593808499534494600e-4,
                                  1.05075007164441684324e-9};
  static constexpr double kE[] = {6.65790464350110377720e0,  5.46378491116411436990e0,
                                  1.78482653991729133580e0,  2.96560571828504891230e-1,
                                  2.65321895265761230930e-2, 1.24266094738807843860e-3,
                                  2.71155556874348757815e-5, 2.01033439929228813265e-7};
  static constexpr double kF[] = {1.0,
                                  5.99832206555887937690e-1,
                                  1.36929880922735805310e-1,
                                  1.48753612908506148525e-2,
                                  7.86869131145613259100e-4,
                                  1.84631831751005468180e-5,
                                  1.42151175831644588870e-7,
                                  2.04426310338993978564e-15};
  const double q = u / 2;  // p - 1/2 for p = (1 + u) / 2; exact.
  if (std::fabs(q) <= 0.425) {
    const double r = 0.180625 - q * q;
    return q * Polynomial(kA, r) / Polynomial(kB, r);
  }
  const double tail = (1 - std::fabs(u)) / 2;  // min(p, 1 - p); exact since |u| > 0.85.
  if (tail == 0)
    return q < 0 ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  double r = std::sqrt(-Log(tail));
  double value;
  if (r <= 5.0) {
    r -= 1.6;
    value = Polynomial(kC, r) / Polynomial(kD, r);
  } else {
    r -= 5.0;
    value = Polynomial(kE, r) / Polynomial(kF, r);
  }
  return q < 0 ? -value : value;
}

}  // namespace internal

namespace {

// Bit layout of the float dtypes: the random word is shifted right by kShift (the bits beyond the
// mantissa) and or-ed with the bits of 1.0.
template <typename T>
struct FloatLayout;
template <>
struct FloatLayout<float> {
  using Bits = uint32_t;
  static constexpr int kShift = 32 - 23;
  static constexpr Bits kOne = 0x3f800000u;
  static std::vector<Bits> Draw(Key key, int64_t n) { return RandomBits(key, n); }
};
template <>
struct FloatLayout<double> {
  using Bits = uint64_t;
  static constexpr int kShift = 64 - 52;
  static constexpr Bits kOne = 0x3ff0000000000000ull;
  static std::vector<Bits> Draw(Key key, int64_t n) { return RandomBits64(key, n); }
};

absl::Status CheckCount(const char* fn, const char* name, int64_t n) {
  if (n < 0)
    return absl::InvalidArgumentError(absl::StrCat(fn, ": ", name, " = ", n, "; expected ", name, " >= 0"));
  return absl::OkStatus();
}

absl::StatusOr<int64_t> CheckedNumElements(const char* fn, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          fn, ": shape ", ShapeString(shape), " has a negative dimension; expected every dimension >= 0"));
    }
    if (d != 0 && n > (int64_t{1} << 40) / d) {
      return absl::InvalidArgumentError(
          absl::StrCat(fn, ": shape ", ShapeString(shape), " has more than 2^40 elements; expected fewer"));
    }
    n *= d;
  }
  return n;
}

template <typename T>
absl::Status CheckFloatRange(const char* fn, T lo, T hi) {
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi && std::isfinite(hi - lo))) {
    return absl::InvalidArgumentError(absl::StrCat(fn, ": lo = ", lo, ", hi = ", hi,
                                                   "; expected finite lo < hi (the range is [lo, hi)) with "
                                                   "hi - lo finite"));
  }
  return absl::OkStatus();
}

absl::Status CheckFloatDType(const char* fn, DType dtype) {
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return absl::InvalidArgumentError(
        absl::StrCat(fn, ": dtype = ", DTypeName(dtype), "; expected a float dtype, f32 or f64"));
  }
  return absl::OkStatus();
}

// jax.random._uniform, with the top of the range clamped below hi. lo < hi finite (checked by callers).
template <typename T>
std::vector<T> UniformValues(Key key, int64_t n, T lo, T hi) {
  using Layout = FloatLayout<T>;
  const std::vector<typename Layout::Bits> bits = Layout::Draw(key, n);
  const T span = hi - lo;
  const T below_hi = std::nextafter(hi, lo);
  std::vector<T> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const typename Layout::Bits one_to_two = (bits[i] >> Layout::kShift) | Layout::kOne;
    T f;
    std::memcpy(&f, &one_to_two, sizeof(T));
    const T value = (f - T(1)) * span + lo;
    out[i] = std::min(std::max(lo, value), below_hi);
  }
  return out;
}

template <typename T>
std::vector<T> NormalValues(Key key, int64_t n) {
  std::vector<T> values = UniformValues<T>(key, n, std::nextafter(T(-1), T(0)), T(1));
  for (T& v : values) v = static_cast<T>(internal::SqrtTwoErfInv(v));
  return values;
}

template <typename T>
absl::StatusOr<std::vector<T>> TruncatedNormalValues(Key key, int64_t n, T lo, T hi) {
  RETURN_IF_ERROR(CheckCount("TruncatedNormal", "n", n));
  if (!(lo < hi)) {
    return absl::InvalidArgumentError(absl::StrCat("TruncatedNormal: lo = ", lo, ", hi = ", hi,
                                                   "; expected lo < hi (infinite bounds allowed)"));
  }
  const T a = static_cast<T>(internal::Erf(static_cast<double>(lo) / internal::kSqrtTwo));
  const T b = static_cast<T>(internal::Erf(static_cast<double>(hi) / internal::kSqrtTwo));
  const T min_value = std::nextafter(lo, std::numeric_limits<T>::infinity());
  const T max_value = std::nextafter(hi, -std::numeric_limits<T>::infinity());
  // Bounds far out in one tail can give a == b; every sample is then that bound, clipped.
  std::vector<T> values = a < b ? UniformValues<T>(key, n, a, b) : std::vector<T>(static_cast<size_t>(n), a);
  for (T& v : values) {
    v = std::clamp(static_cast<T>(internal::SqrtTwoErfInv(v)), min_value, max_value);
  }
  return values;
}

// The number of sort rounds of jax.random._shuffle, ceil(3 ln n / ln(2^32 - 1)), in exact integer
// arithmetic: the least k with n^3 <= (2^32 - 1)^k (0 for n <= 1).
int ShuffleRounds(int64_t n) {
  if (n <= 1) return 0;
  using U128 = unsigned __int128;
  const U128 cube = static_cast<U128>(n) * static_cast<U128>(n) * static_cast<U128>(n);
  U128 power = 0xFFFFFFFFu;
  int k = 1;
  while (cube > power) {
    power *= 0xFFFFFFFFu;
    ++k;
  }
  return k;
}

std::vector<int32_t> PermutationValues(Key key, int64_t n) {
  std::vector<int32_t> values(static_cast<size_t>(n));
  std::iota(values.begin(), values.end(), 0);
  std::vector<std::pair<uint32_t, int32_t>> keyed(static_cast<size_t>(n));
  const int rounds = ShuffleRounds(n);
  for (int round = 0; round < rounds; ++round) {
    const auto [next, subkey] = Split2(key);
    key = next;
    const std::vector<uint32_t> sort_keys = RandomBits(subkey, n);
    for (int64_t i = 0; i < n; ++i) keyed[i] = {sort_keys[i], values[i]};
    std::stable_sort(keyed.begin(), keyed.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    for (int64_t i = 0; i < n; ++i) values[i] = keyed[i].second;
  }
  return values;
}

template <typename T>
absl::StatusOr<Tensor> ToTensor(const Shape& shape, absl::StatusOr<std::vector<T>> values) {
  if (!values.ok()) return values.status();
  return Tensor::FromHost<T>(shape, *values);
}

}  // namespace

absl::StatusOr<std::vector<float>> UniformVector(Key key, int64_t n, float lo, float hi) {
  RETURN_IF_ERROR(CheckCount("Uniform", "n", n));
  RETURN_IF_ERROR(CheckFloatRange("Uniform", lo, hi));
  return UniformValues<float>(key, n, lo, hi);
}

absl::StatusOr<std::vector<double>> UniformVectorF64(Key key, int64_t n, double lo, double hi) {
  RETURN_IF_ERROR(CheckCount("Uniform", "n", n));
  RETURN_IF_ERROR(CheckFloatRange("Uniform", lo, hi));
  return UniformValues<double>(key, n, lo, hi);
}

absl::StatusOr<std::vector<float>> NormalVector(Key key, int64_t n) {
  RETURN_IF_ERROR(CheckCount("Normal", "n", n));
  return NormalValues<float>(key, n);
}

absl::StatusOr<std::vector<double>> NormalVectorF64(Key key, int64_t n) {
  RETURN_IF_ERROR(CheckCount("Normal", "n", n));
  return NormalValues<double>(key, n);
}

absl::StatusOr<std::vector<float>> TruncatedNormalVector(Key key, int64_t n, float lo, float hi) {
  return TruncatedNormalValues<float>(key, n, lo, hi);
}

absl::StatusOr<std::vector<int32_t>> RandIntVector(Key key, int64_t n, int32_t lo, int32_t hi) {
  RETURN_IF_ERROR(CheckCount("RandInt", "n", n));
  if (lo >= hi) {
    return absl::InvalidArgumentError(
        absl::StrCat("RandInt: lo = ", lo, ", hi = ", hi, "; expected lo < hi (the range is [lo, hi))"));
  }
  const auto [high_key, low_key] = Split2(key);
  const std::vector<uint32_t> high = RandomBits(high_key, n);
  const std::vector<uint32_t> low = RandomBits(low_key, n);
  const uint64_t span = static_cast<uint64_t>(int64_t{hi} - int64_t{lo});  // In [1, 2^32 - 1].
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t word = (static_cast<uint64_t>(high[i]) << 32) | low[i];
    out[i] = static_cast<int32_t>(int64_t{lo} + static_cast<int64_t>(word % span));
  }
  return out;
}

absl::StatusOr<std::vector<int32_t>> PermutationVector(Key key, int64_t n) {
  if (n < 0 || n > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("Permutation: n = ", n, "; expected 0 <= n <= 2^31 - 1"));
  }
  return PermutationValues(key, n);
}

absl::StatusOr<std::vector<int32_t>> ChoiceWithoutReplacementVector(Key key, int64_t n_population,
                                                                    int64_t k) {
  if (n_population < 0 || n_population > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrCat("ChoiceWithoutReplacement: n_population = ", n_population,
                                                   "; expected 0 <= n_population <= 2^31 - 1"));
  }
  if (k < 0 || k > n_population) {
    return absl::InvalidArgumentError(absl::StrCat("ChoiceWithoutReplacement: k = ", k,
                                                   " with n_population = ", n_population,
                                                   "; expected 0 <= k <= n_population"));
  }
  if (k == 0) return std::vector<int32_t>();  // Like JAX, which returns before using the key.
  std::vector<int32_t> values = PermutationValues(key, n_population);
  values.resize(static_cast<size_t>(k));
  return values;
}

absl::StatusOr<Tensor> Uniform(Key key, const Shape& shape, double lo, double hi, DType dtype) {
  ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements("Uniform", shape));
  RETURN_IF_ERROR(CheckFloatDType("Uniform", dtype));
  if (dtype == DType::kF64) return ToTensor<double>(shape, UniformVectorF64(key, n, lo, hi));
  return ToTensor<float>(shape, UniformVector(key, n, static_cast<float>(lo), static_cast<float>(hi)));
}

absl::StatusOr<Tensor> Normal(Key key, const Shape& shape, DType dtype) {
  ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements("Normal", shape));
  RETURN_IF_ERROR(CheckFloatDType("Normal", dtype));
  if (dtype == DType::kF64) return ToTensor<double>(shape, NormalVectorF64(key, n));
  return ToTensor<float>(shape, NormalVector(key, n));
}

absl::StatusOr<Tensor> TruncatedNormal(Key key, const Shape& shape, double lo, double hi, DType dtype) {
  ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements("TruncatedNormal", shape));
  RETURN_IF_ERROR(CheckFloatDType("TruncatedNormal", dtype));
  if (dtype == DType::kF64) return ToTensor<double>(shape, TruncatedNormalValues<double>(key, n, lo, hi));
  return ToTensor<float>(
      shape, TruncatedNormalValues<float>(key, n, static_cast<float>(lo), static_cast<float>(hi)));
}

absl::StatusOr<Tensor> RandInt(Key key, const Shape& shape, int32_t lo, int32_t hi) {
  ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements("RandInt", shape));
  return ToTensor<int32_t>(shape, RandIntVector(key, n, lo, hi));
}

absl::StatusOr<Tensor> Permutation(Key key, int64_t n) {
  return ToTensor<int32_t>({n}, PermutationVector(key, n));
}

absl::StatusOr<Tensor> ChoiceWithoutReplacement(Key key, int64_t n_population, int64_t k) {
  return ToTensor<int32_t>({k}, ChoiceWithoutReplacementVector(key, n_population, k));
}

}  // namespace mimetic::core
