#include "mimetic/ops/cpu/lane_sums.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace mimetic::ops::cpu {
namespace {

TEST(LaneSumsTest, SumLanesAddsInItsTreeOrder) {
  // Values whose sum depends on the order: 1e8 + 1 + ... loses the 1s unless they meet first.
  float x[16];
  for (int j = 0; j < 16; ++j) x[j] = static_cast<float>(j + 1) * (j % 2 ? 1.0f : -1.0f) * 1e-3f;
  x[0] = 1e8f;
  x[8] = -1e8f;
  const float v0 = ((x[0] + x[8]) + (x[4] + x[12])) + ((x[2] + x[10]) + (x[6] + x[14]));
  const float v1 = ((x[1] + x[9]) + (x[5] + x[13])) + ((x[3] + x[11]) + (x[7] + x[15]));
  EXPECT_EQ(SumLanes(x), v0 + v1);
  double d[16];
  for (int j = 0; j < 16; ++j) d[j] = j;
  EXPECT_EQ(SumLanes(d), 120.0);
}

// AddLaneSums (with AVX-512: 16 rows per shuffle tree) equals SumLanes row by row, bit for bit, for N below,
// at and around multiples of 16, with magnitudes spread over 2^30 so that every reassociation would show.
TEST(LaneSumsTest, AddLaneSumsEqualsSumLanesBitForBit) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (int64_t N : {1, 15, 16, 17, 32, 37, 64}) {
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<float> rows(N * kLanes), out(N), want(N);
      for (float& v : rows) v = normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 31) - 15);
      for (int64_t n = 0; n < N; ++n) out[n] = want[n] = normal(rng);
      for (int64_t n = 0; n < N; ++n) want[n] += SumLanes(rows.data() + n * kLanes);
      AddLaneSums(N, rows.data(), out.data());
      ASSERT_EQ(std::memcmp(out.data(), want.data(), N * sizeof(float)), 0)
          << "N " << N << " trial " << trial;
    }
  }
}

#if defined(__AVX512F__)
// SumsOf16Rows over two arrays whose rows are made in natural order (as the selective scan's adjoint
// step makes them): row n's SumLanes in lane n of each array's sums, bit for bit, and make called for
// n = 0..15 in order.
TEST(LaneSumsTest, NaturalOrderStreamEqualsSumLanesBitForBit) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> rows(2 * 16 * kLanes);
    for (float& v : rows) v = normal(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 31) - 15);
    int next = 0;
    __m512 sums[2];
    SumsOf16Rows<2>(
        [&](int n, __m512* r) {
          EXPECT_EQ(n, next++);
          r[0] = _mm512_loadu_ps(rows.data() + n * kLanes);
          r[1] = _mm512_loadu_ps(rows.data() + (16 + n) * kLanes);
        },
        sums);
    for (int t = 0; t < 2; ++t) {
      float got[16];
      _mm512_storeu_ps(got, sums[t]);
      for (int n = 0; n < 16; ++n) {
        const float want = SumLanes(rows.data() + (16 * t + n) * kLanes);
        ASSERT_EQ(std::memcmp(&got[n], &want, sizeof(float)), 0)
            << "array " << t << " row " << n << " trial " << trial;
      }
    }
  }
}
#endif

TEST(LaneSumsTest, NaNAndInfinityPropagate) {
  std::vector<float> rows(32 * kLanes, 1.0f), out(32, 0.0f);
  rows[3 * kLanes + 5] = std::nanf("");
  rows[20 * kLanes + 15] = INFINITY;
  AddLaneSums(32, rows.data(), out.data());
  for (int n = 0; n < 32; ++n) {
    if (n == 3) {
      EXPECT_TRUE(std::isnan(out[n]));
    } else if (n == 20) {
      EXPECT_EQ(out[n], INFINITY);
    } else {
      EXPECT_EQ(out[n], 16.0f) << n;
    }
  }
}

}  // namespace
}  // namespace mimetic::ops::cpu
