#include "mimetic/ops/ssd/ssd_cpu_math.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace mimetic::ops::ssd_cpu {
namespace {

#if defined(__AVX512F__)
// A chunk's inputs: acum decreasing (a running sum of Δ A with A < 0, as in the kernel), some steps
// so large that exp underflows to denormals and 0, and CB / dW of both signs with exact zeros.
struct Block {
  int64_t q, qp;
  std::vector<float> acum, cb, dw;
};

Block MakeBlock(int64_t q, uint32_t seed) {
  Block b{q, (q + 15) / 16 * 16, {}, {}, {}};
  uint32_t state = seed;
  auto uniform = [&]() {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / 16777216.0f;
  };
  float run = 0;
  for (int64_t l = 0; l < q; ++l) {
    const float step = uniform() < 0.1f ? 30.0f * uniform() : 0.5f * uniform();
    run -= step;
    b.acum.push_back(run);
  }
  for (int64_t i = 0; i < q * b.qp; ++i) {
    const float u = uniform();
    b.cb.push_back(u < 0.05f ? 0.0f : 4.0f * uniform() - 2.0f);
    b.dw.push_back(u > 0.95f ? -0.0f : 4.0f * uniform() - 2.0f);
  }
  return b;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(SsdCpuMathTest, DecayRowF32IsThePortableRowBitForBit) {
  for (int64_t q : {1, 5, 15, 16, 17, 32, 33, 64, 100}) {
    const Block b = MakeBlock(q, 17 + q);
    // Rows prefilled with a marker: both must write [0, q) and leave the padding alone.
    std::vector<float> want(q * b.qp, 7.0f), got(q * b.qp, 7.0f);
    for (int64_t l = 0; l < q; ++l) {
      DecayRowPortable<float>(l, q, b.acum.data(), &b.cb[l * b.qp], &want[l * b.qp]);
      DecayRowF32(l, q, b.acum.data(), &b.cb[l * b.qp], &got[l * b.qp]);
    }
    EXPECT_TRUE(SameBits(want, got)) << "q " << q;
  }
}

TEST(SsdCpuMathTest, DiagRowF32IsThePortableRowBitForBit) {
  for (int64_t q : {1, 5, 15, 16, 17, 32, 33, 64, 100}) {
    const Block b = MakeBlock(q, 91 + q);
    // Two heads' rows summed into dcb and colsum, as the kernel's heads of one group do.
    std::vector<float> w_want(q * b.qp, 7.0f), w_got = w_want;
    std::vector<float> dcb_want(q * b.qp, 0.0f), dcb_got = dcb_want;
    std::vector<float> col_want(q, 0.0f), col_got = col_want, mrow(q);
    std::vector<float> sums_want, sums_got;
    for (int head = 0; head < 2; ++head) {
      for (int64_t l = 0; l < q; ++l) {
        const float* cbl = &b.cb[l * b.qp];
        const float* dwl = &b.dw[((l + head) % q) * b.qp];
        sums_want.push_back(DiagRowPortable<float>(l, q, b.acum.data(), cbl, dwl, &w_want[l * b.qp],
                                                   &dcb_want[l * b.qp], col_want.data(), mrow.data()));
        sums_got.push_back(
            DiagRowF32(l, q, b.acum.data(), cbl, dwl, &w_got[l * b.qp], &dcb_got[l * b.qp], col_got.data()));
      }
    }
    EXPECT_TRUE(SameBits(w_want, w_got)) << "W, q " << q;
    EXPECT_TRUE(SameBits(dcb_want, dcb_got)) << "dCB, q " << q;
    EXPECT_TRUE(SameBits(col_want, col_got)) << "column sums, q " << q;
    EXPECT_TRUE(SameBits(sums_want, sums_got)) << "row sums, q " << q;
  }
}

TEST(SsdCpuMathTest, RowsPropagateNaNAndInfinity) {
  const int64_t q = 20, qp = 32;
  std::vector<float> acum(q), cb(q * qp, 1.0f), dw(q * qp, 1.0f);
  for (int64_t l = 0; l < q; ++l) acum[l] = -0.1f * l;
  acum[3] = std::numeric_limits<float>::quiet_NaN();
  cb[10 * qp + 2] = std::numeric_limits<float>::infinity();
  std::vector<float> w_want(q * qp), w_got(q * qp), dcb_want(q * qp), dcb_got(q * qp);
  std::vector<float> col_want(q), col_got(q), mrow(q);
  for (int64_t l = 0; l < q; ++l) {
    const float want = DiagRowPortable<float>(l, q, acum.data(), &cb[l * qp], &dw[l * qp], &w_want[l * qp],
                                              &dcb_want[l * qp], col_want.data(), mrow.data());
    const float got = DiagRowF32(l, q, acum.data(), &cb[l * qp], &dw[l * qp], &w_got[l * qp],
                                 &dcb_got[l * qp], col_got.data());
    EXPECT_EQ(std::isnan(want), std::isnan(got)) << l;
    if (!std::isnan(want)) EXPECT_EQ(want, got) << l;
  }
  EXPECT_TRUE(std::isnan(w_got[3 * qp + 3]));  // row 3 sees its own NaN acum
  EXPECT_TRUE(std::isinf(w_got[10 * qp + 2]));
}
#else
TEST(SsdCpuMathTest, DecayRowF32IsThePortableRowBitForBit) {
  GTEST_SKIP() << "the AVX-512 rows exist only on AVX-512 machines";
}
#endif

}  // namespace
}  // namespace mimetic::ops::ssd_cpu
