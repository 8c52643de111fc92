// Sums of 16-lane rows in a fixed tree order, for kernels whose inner loops run over 16 lanes (the selective
// scan's channel blocks) and must then reduce over the lanes.
//
// SumLanes is the one order: halves (lane j + lane j + 8), quarters, pairs, then the last two. It vectorises
// and gives the same bits on every machine. AddLaneSums adds the sums of N rows to an output; with AVX-512 it
// reduces 16 rows at a time (SumsOf16Rows) through shuffles that pair exactly the partial sums SumLanes
// pairs (same bits, tested), 15 adds, 30 shuffles and one permute per 16 rows instead of ~8 operations
// per row.
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

// The tree streamed in natural order (HalvesOf(0, 1), (2, 3), ..., then QuartersOf, PairsOf, TotalsOf
// of neighbours) leaves row 4i + k's sum in lane 4k + i; this puts it in lane 4i + k.
inline __m512 NaturalOrderOfTotals(__m512 totals) {
  const __m512i from = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  return _mm512_mask_permutexvar_ps(totals, 0xFFFF, from, totals);  // mask form: see ShuffleBlocks
}

// The sums of 16 rows of kTrees arrays at once: make(n, rows) is called for n = 0, 1, ..., 15 in that
// order and sets rows[t] to row n of array t; sums[t] gets array t's 16 row sums in row order, each
// SumLanes' tree. Rows are folded into the tree as they are made, so a kernel can sum rows it computes
// without storing them (the selective scan's adjoint step); the loops are unrolled so the partial sums
// stay in registers (rolled, GCC kept them in stack arrays).
template <int kTrees, typename Make>
inline void SumsOf16Rows(const Make& make, __m512 (&sums)[kTrees]) {
  __m512 w[2][kTrees];
#pragma GCC unroll 2
  for (int h = 0; h < 2; ++h) {
    __m512 z[2][kTrees];
#pragma GCC unroll 2
    for (int q = 0; q < 2; ++q) {
      __m512 y[2][kTrees];
#pragma GCC unroll 2
      for (int p = 0; p < 2; ++p) {
        const int n = 8 * h + 4 * q + 2 * p;
        __m512 r0[kTrees], r1[kTrees];
        make(n, r0);
        make(n + 1, r1);
        for (int t = 0; t < kTrees; ++t) y[p][t] = HalvesOf(r0[t], r1[t]);
      }
      for (int t = 0; t < kTrees; ++t) z[q][t] = QuartersOf(y[0][t], y[1][t]);
    }
    for (int t = 0; t < kTrees; ++t) w[h][t] = PairsOf(z[0][t], z[1][t]);
  }
  for (int t = 0; t < kTrees; ++t) sums[t] = NaturalOrderOfTotals(TotalsOf(w[0][t], w[1][t]));
}

// The same as AddLaneSums, 16 rows at a time.
inline void AddLaneSums(int64_t N, const float* __restrict rows, float* __restrict out) {
  int64_t n0 = 0;
  for (; n0 + 16 <= N; n0 += 16) {
    const float* r = rows + n0 * kLanes;
    __m512 sums[1];
    SumsOf16Rows<1>([r](int n, __m512* row) { row[0] = _mm512_loadu_ps(r + n * kLanes); }, sums);
    _mm512_storeu_ps(out + n0, _mm512_add_ps(_mm512_loadu_ps(out + n0), sums[0]));
  }
  for (; n0 < N; ++n0) out[n0] += SumLanes(rows + n0 * kLanes);
}
#endif

}  // namespace mimetic::ops::cpu

#endif  // MIMETIC_OPS_CPU_LANE_SUMS_H_
