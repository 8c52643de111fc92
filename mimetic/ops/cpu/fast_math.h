// Vectorisable f32 exp, exp2, log1p, sigmoid and softplus for the fast CPU kernels.
//
// glibc's expf / log1pf are scalar calls that GCC does not vectorise without -ffast-math, so the f32
// kernels use these polynomial versions instead. Every function is inline and branch-free: clamps and
// special cases are selects of values (ternaries with no arithmetic inside the arms, so if-conversion
// succeeds even with -ftrapping-math), rounding to an integer is the 1.5·2^23 trick (std::floor does
// not vectorise without -fno-trapping-math), and bit patterns go through __builtin_bit_cast (a memcpy
// kept some loops from vectorising). Loops calling them vectorise at -O3 -march=native, no fast-math.
//
// Accuracy (fast_math_test.cc checks every bound below against the double-precision std:: function;
// "rel" is |fast - exact| / |exact|, "ulp" is in units of the rounded result's last place):
//   Exp        normal results (x in [-87.3, 88.7]): < 1 ulp, rel < 8e-8. Below that down to -103.9 the
//              result is the rounded-once denormal (abs error < 1 denormal ulp); below -104 it is 0;
//              above 88.72 it is +inf. exp(-inf) = 0, exp(+inf) = +inf, exp(NaN) = NaN.
//   Exp2       rel < 1e-7 on [-126, 127]; saturates (2^-126.5 = 8.3e-39 below -126.5, 2^127.5 =
//              2.4e38 above 127.5) rather than giving 0 / inf. Only for arguments known to be in range (or
//              where a saturated value is as good as 0, e.g. a decay factor). exp2(NaN) = NaN.
//   Exp2Product16  (AVX-512 only) 2^(a·b) in 16 lanes: Exp2 of the product as the scan's loops
//              compute it, bit for bit on [-126, 127]; exact (denormal, 0, inf) rather than saturated
//              outside.
//   Exp16      (AVX-512 only) Exp in 16 lanes, bit for bit.
//   Log1pUnit  u in [0, 1]: abs error < 1e-7 and rel < 1.3e-7 (exact 0 at 0, full relative accuracy
//              for tiny u).
//   Sigmoid    rel < 2e-7 (measured 1.1e-7) where the result is a normal float (1 for x > 17, e^x with
//   relative accuracy for x < 0 down
//              to the denormal range, 0 below -104); NaN gives NaN.
//   Softplus   rel < 2e-7 (measured 1.5e-7) where the result is a normal float, with the kernels' threshold:
//   x itself above 20 (the
//              exact value then rounds to x anyway); e^x for very negative x (0 below -104); NaN
//              gives NaN, softplus(+inf) = +inf, softplus(-inf) = 0.
#ifndef MIMETIC_OPS_CPU_FAST_MATH_H_
#define MIMETIC_OPS_CPU_FAST_MATH_H_

#include <cmath>
#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mimetic::ops::fast_math {

inline float BitsToFloat(int32_t bits) { return __builtin_bit_cast(float, bits); }

// e^x: x = k ln2 + r with k = round(x log2 e), |r| <= ln2/2 (ln2 split in a high part exact in float
// and a low part, Cody-Waite), e^r by its degree-7 Taylor polynomial, and 2^k applied as two powers of
// two (each a normal float) so that overflow gives inf and underflow a correctly scaled denormal or 0.
inline float Exp(float x) {
  const float lo = x > -104.0f ? x : -104.0f;  // NaN goes to -104 here (no NaN -> int conversion)
  const float xc = lo < 89.0f ? lo : 89.0f;
  const float k = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // 1.5·2^23: rounds
  float r = xc - k * 0.693145751953125f;
  r = r - k * 1.428606765330187e-06f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t ki = static_cast<int32_t>(k);  // in [-150, 128]
  const int32_t k1 = ki >> 1;
  const float result = p * BitsToFloat((k1 + 127) << 23) * BitsToFloat((ki - k1 + 127) << 23);
  return x != x ? x : result;
}

// 2^u, saturating (Cephes exp2f: u = k + f, |f| <= 1/2, degree-6 polynomial, 2^k through the exponent
// bits); rel < 1e-7 on [-126, 127], 2^-126.5 below and 2^127.5 above (never 0 or inf). This
// is how the selective scan's CUDA kernels form exp(dt·A) = 2^(dt · A log2 e). The clamps act on k
// and f, not on u: a clamp of u lets GCC's PRE fold the whole function on the clamped path in the
// scan's loops, which then stop vectorising.
// Exp2's polynomial for 2^f on [-1/2, 1/2], highest degree first (also Exp2Product16's).
constexpr float kExp2Poly[7] = {1.535336188319500e-4f, 1.339887440266574e-3f, 9.618437357674640e-3f,
                                5.550332471162809e-2f, 2.402264791363012e-1f, 6.931472028550421e-1f,
                                1.0f};

inline float Exp2(float u) {
  float k = (u + 12582912.0f) - 12582912.0f;
  k = k < -126.0f ? -126.0f : k;  // NaN stays NaN (as std::max / std::min would keep it)
  k = k > 127.0f ? 127.0f : k;
  float f = u - k;
  f = f < -0.5f ? -0.5f : f;
  f = f > 0.5f ? 0.5f : f;
  float p = kExp2Poly[0];
  for (int i = 1; i < 7; ++i) p = p * f + kExp2Poly[i];
  return p * BitsToFloat((static_cast<int32_t>(k) + 127) << 23);
}

#if defined(__AVX512F__)
// 2^(a·b) in 16 lanes with AVX-512, for the selective scan's exp(dt·A) (a = dt, b = A log2 e). It is
// Exp2(a * b) as GCC compiles it inside the scan's loops, written out: the product enters only through
// fused multiply-adds, k = round(fma(a, b, 1.5·2^23)) - 1.5·2^23 and f = fma(a, b, -k) (the exact
// product minus k), then the same polynomial. The power of two is applied by vscalefps instead of
// exponent bits and clamps, so it is bit for bit that for a·b in [-126, 127] with ~15 fewer
// instructions, and outside it exact rather than saturated: a correctly rounded denormal down to
// 2^-149, 0 below (and at -inf), inf above 128 (and at +inf); NaN gives NaN.
inline __m512 Exp2Product16(__m512 a, __m512 b) {
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 k = _mm512_sub_ps(_mm512_fmadd_ps(a, b, magic), magic);
  __m512 f = _mm512_fmsub_ps(a, b, k);
  // |f| <= 1/2 for every finite product below 2^22; beyond, and for inf - inf = NaN (max and min
  // return their second operand for a NaN), f only has to keep the polynomial finite.
  // (The all-lanes mask forms: GCC 12's unmasked max/min/scalef pass an "undefined" vector that
  // -Wmaybe-uninitialized flags, GCC bug 105593; the code is the same.)
  constexpr __mmask16 kAll = 0xFFFF;
  f = _mm512_mask_max_ps(f, kAll, f, _mm512_set1_ps(-0.5f));
  f = _mm512_mask_min_ps(f, kAll, f, _mm512_set1_ps(0.5f));
  __m512 p = _mm512_set1_ps(kExp2Poly[0]);
  for (int i = 1; i < 7; ++i) p = _mm512_fmadd_ps(p, f, _mm512_set1_ps(kExp2Poly[i]));
  return _mm512_mask_scalef_ps(p, kAll, p, k);
}

// Exp in 16 lanes, bit for bit: the same clamps, reduction and polynomial with the multiply-adds GCC
// contracts the scalar code into (-ffp-contract=fast, GCC's default), and the same two exponent-bit
// scalings, so a kernel may mix it with loops that call Exp. For loops GCC does not vectorise (masked
// triangles of the SSD's q x q blocks).
inline __m512 Exp16(__m512 x) {
  constexpr __mmask16 kAll = 0xFFFF;  // see Exp2Product16 on the masked max/min forms
  // max/min return their second operand for a NaN first one: NaN -> -104, as Exp's comparisons.
  const __m512 lo = _mm512_mask_max_ps(x, kAll, x, _mm512_set1_ps(-104.0f));
  const __m512 xc = _mm512_mask_min_ps(lo, kAll, lo, _mm512_set1_ps(89.0f));
  const __m512 magic = _mm512_set1_ps(12582912.0f);
  const __m512 k = _mm512_sub_ps(_mm512_fmadd_ps(xc, _mm512_set1_ps(1.44269504088896341f), magic), magic);
  __m512 r = _mm512_fnmadd_ps(k, _mm512_set1_ps(0.693145751953125f), xc);
  r = _mm512_fnmadd_ps(k, _mm512_set1_ps(1.428606765330187e-06f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  const __m512i ki = _mm512_cvttps_epi32(k);  // in [-150, 128]
  const __m512i k1 = _mm512_srai_epi32(ki, 1);
  const __m512i bias = _mm512_set1_epi32(127);
  const __m512 s1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(k1, bias), 23));
  const __m512 s2 =
      _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(_mm512_sub_epi32(ki, k1), bias), 23));
  const __m512 result = _mm512_mul_ps(_mm512_mul_ps(p, s1), s2);
  const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_mov_ps(result, nan, x);
}
#endif

// log(1 + u) for u in [0, 1]: Cephes logf on w = 1 + u (in [1, 2], reduced to [sqrt(1/2), sqrt(2)) by
// halving), plus the rounding error of w, (u - (w - 1)) / w, so tiny u keep full relative accuracy.
inline float Log1pUnit(float u) {
  const float w = 1.0f + u;
  const float correction = (u - (w - 1.0f)) / w;
  const bool big = w > 1.41421356237f;
  const float half = big ? 0.5f : 1.0f;
  const float f = w * half - 1.0f;  // exact; in [-0.29, 0.42]
  const float e = big ? 1.0f : 0.0f;
  const float z = f * f;
  float y = 7.0376836292e-2f;
  y = y * f - 1.1514610310e-1f;
  y = y * f + 1.1676998740e-1f;
  y = y * f - 1.2420140846e-1f;
  y = y * f + 1.4249322787e-1f;
  y = y * f - 1.6668057665e-1f;
  y = y * f + 2.0000714765e-1f;
  y = y * f - 2.4999993993e-1f;
  y = y * f + 3.3333331174e-1f;
  y = y * f * z;
  y += -2.12194440e-4f * e;
  y += -0.5f * z;
  return f + y + 0.693359375f * e + correction;
}

// 1 / (1 + e^-x), evaluated through e = e^-|x| in (0, 1] so neither side overflows and negative x keep
// relative accuracy (e / (1 + e)).
inline float Sigmoid(float x) {
  const float e = Exp(-std::abs(x));
  const float s = 1.0f / (1.0f + e);
  const float es = e * s;
  return x >= 0.0f ? s : es;
}

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|), and x itself above the kernels' threshold 20 (where
// log1p(e^-20) = 2e-9 is below half an ulp of x).
inline float Softplus(float x) {
  const float m = x < 0.0f ? 0.0f : x;  // NaN stays NaN
  const float y = m + Log1pUnit(Exp(-std::abs(x)));
  return x > 20.0f ? x : y;
}

}  // namespace mimetic::ops::fast_math

#endif  // MIMETIC_OPS_CPU_FAST_MATH_H_
