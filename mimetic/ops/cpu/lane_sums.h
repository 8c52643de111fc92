// Sums of 16-lane rows in a fixed tree order, for kernels whose inner loops run over 16 lanes (the selective
// scan's channel blocks) and must then reduce over the lanes.
//
// SumLanes is the one order: halves (lane j + lane j + 8), quarters, pairs, then the last two. It vectorises
// and gives the same bits on every machine. AddLaneSums adds the sums of N rows to an output; with AVX-512 it
// reduces 16 rows at a time through shuffles that pair exactly the partial sums SumLanes pairs (same bits,
// tested), 15 adds and 30 shuffles per 16 rows instead of ~8 operations per row.
#ifndef MIMETIC_OPS_CPU_LANE_SUMS_H_
#define MIMETIC_OPS_CPU_LANE_SUMS_H_

#include <cstdint>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace mimetic::ops::cpu {

constexpr int64_t kLanes = 16;

// x[0] + ... + x[15] as the tree ((x0 + x8) + (x4 + x12)) + ((x2 + x10) + (x6 + x14)) + (odd lanes alike),
// i.e. halves, quarters, pairs, last two.
template <typename T>
inline T SumLanes(const T* __restrict x) {
  T v[kLanes];
  for (int j = 0; j < 16; ++j) v[j] = x[j];
  for (int j = 0; j < 8; ++j) v[j] += v[j + 8];
  for (int j = 0; j < 4; ++j) v[j] += v[j + 4];
  for (int j = 0; j < 2; ++j) v[j] += v[j + 2];
  return v[0] + v[1];
}

// out[n] += SumLanes(rows + 16 n) for n < N (rows: (N, 16)).
template <typename T>
inline void AddLaneSums(int64_t N, const T* __restrict rows, T* __restrict out) {
  for (int64_t n = 0; n < N; ++n) out[n] += SumLanes(rows + n * kLanes);
}

#if defined(__AVX512F__)
// _mm512_shuffle_f32x4 in its all-lanes mask form: GCC 12's unmasked one passes an "undefined" vector that
// -Wmaybe-uninitialized flags (GCC bug 105593); the instruction is the same.
template <int kImm>
inline __m512 ShuffleBlocks(__m512 a, __m512 b) {
  return _mm512_mask_shuffle_f32x4(a, 0xFFFF, a, b, kImm);
}

// The same, 16 rows at a time. Level by level, each vector holds the partial sums of several rows: two rows'
// halves (shuffle_f32x4 picks 256-bit halves), four rows' quarters (128-bit blocks), eight rows' pairs
// (shuffle_ps within blocks), then sixteen sums. Rows go in 4 x 4 transposed order so the sums come out in
// row order.
inline void AddLaneSums(int64_t N, const float* __restrict rows, float* __restrict out) {
  int64_t n0 = 0;
  for (; n0 + 16 <= N; n0 += 16) {
    const float* r = rows + n0 * kLanes;
    auto row = [r](int s) { return _mm512_loadu_ps(r + (4 * (s % 4) + s / 4) * kLanes); };
    __m512 y[8], z[4], w[2];
    for (int i = 0; i < 8; ++i) {  // lanes j and j + 8
      const __m512 a = row(2 * i), b = row(2 * i + 1);
      y[i] = _mm512_add_ps(ShuffleBlocks<0x44>(a, b), ShuffleBlocks<0xEE>(a, b));
    }
    for (int i = 0; i < 4; ++i) {  // + 4
      z[i] = _mm512_add_ps(ShuffleBlocks<0x88>(y[2 * i], y[2 * i + 1]),
                           ShuffleBlocks<0xDD>(y[2 * i], y[2 * i + 1]));
    }
    for (int i = 0; i < 2; ++i) {  // + 2
      w[i] = _mm512_add_ps(_mm512_shuffle_ps(z[2 * i], z[2 * i + 1], 0x44),
                           _mm512_shuffle_ps(z[2 * i], z[2 * i + 1], 0xEE));
    }
    const __m512 sums =
        _mm512_add_ps(_mm512_shuffle_ps(w[0], w[1], 0x88), _mm512_shuffle_ps(w[0], w[1], 0xDD));
    _mm512_storeu_ps(out + n0, _mm512_add_ps(_mm512_loadu_ps(out + n0), sums));
  }
  for (; n0 < N; ++n0) out[n0] += SumLanes(rows + n0 * kLanes);
}
#endif

}  // namespace mimetic::ops::cpu

#endif  // MIMETIC_OPS_CPU_LANE_SUMS_H_
