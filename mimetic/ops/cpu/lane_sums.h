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

// The four levels of the 16-row tree. Each takes two vectors of partial sums and adds the pairs
// SumLanes adds:
//   HalvesOf(a, b): rows a, b -> [a's 8 half sums, b's 8] (lane j + lane j + 8; 256-bit halves).
//   QuartersOf(y0, y1): two HalvesOf results (rows r0..r3) -> block k holds row r_k's 4 sums (+ 4).
//   PairsOf(z0, z1): two QuartersOf results (rows r0..r3, r4..r7) -> block k holds rows r_k, r_k+4
//   (2 sums each, + 2).
//   TotalsOf(w0, w1): two PairsOf results (rows r0..r7, r8..r15) -> block k holds the sums of rows
//   r_k, r_k+4, r_k+8, r_k+12 (+ the last two).
inline __m512 HalvesOf(__m512 a, __m512 b) {
  return _mm512_add_ps(ShuffleBlocks<0x44>(a, b), ShuffleBlocks<0xEE>(a, b));
}
inline __m512 QuartersOf(__m512 y0, __m512 y1) {
  return _mm512_add_ps(ShuffleBlocks<0x88>(y0, y1), ShuffleBlocks<0xDD>(y0, y1));
}
inline __m512 PairsOf(__m512 z0, __m512 z1) {
  return _mm512_add_ps(_mm512_shuffle_ps(z0, z1, 0x44), _mm512_shuffle_ps(z0, z1, 0xEE));
}
inline __m512 TotalsOf(__m512 w0, __m512 w1) {
  return _mm512_add_ps(_mm512_shuffle_ps(w0, w1, 0x88), _mm512_shuffle_ps(w0, w1, 0xDD));
}

// The same as AddLaneSums, 16 rows at a time: the rows go into the tree in 4 x 4 transposed order so
// that the sums come out in row order.
inline void AddLaneSums(int64_t N, const float* __restrict rows, float* __restrict out) {
  int64_t n0 = 0;
  for (; n0 + 16 <= N; n0 += 16) {
    const float* r = rows + n0 * kLanes;
    auto row = [r](int s) { return _mm512_loadu_ps(r + (4 * (s % 4) + s / 4) * kLanes); };
    __m512 y[8], z[4], w[2];
    for (int i = 0; i < 8; ++i) y[i] = HalvesOf(row(2 * i), row(2 * i + 1));
    for (int i = 0; i < 4; ++i) z[i] = QuartersOf(y[2 * i], y[2 * i + 1]);
    for (int i = 0; i < 2; ++i) w[i] = PairsOf(z[2 * i], z[2 * i + 1]);
    _mm512_storeu_ps(out + n0, _mm512_add_ps(_mm512_loadu_ps(out + n0), TotalsOf(w[0], w[1])));
  }
  for (; n0 < N; ++n0) out[n0] += SumLanes(rows + n0 * kLanes);
}

// Rows streamed in their natural order 0..15 (HalvesOf(0, 1), (2, 3), ..., then QuartersOf, PairsOf,
// TotalsOf of neighbours) leave row 4i + k's sum in lane 4k + i; this puts it in lane 4i + k.
inline __m512 NaturalOrderOfTotals(__m512 totals) {
  const __m512i from = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_mask_permutexvar_ps(totals, 0xFFFF, from, totals);  // mask form: see ShuffleBlocks
}
#endif

}  // namespace mimetic::ops::cpu

#endif  // MIMETIC_OPS_CPU_LANE_SUMS_H_
