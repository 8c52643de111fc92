#include "mimetic/ops/selective_scan/selective_scan_cpu_steps.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"

namespace mimetic::ops::selective_scan_cpu {
namespace {

#if defined(__AVX512F__)
// Uniform floats in [lo, hi) from a fixed LCG, with about 5% exact zeros (as the padding lanes).
class Draw {
 public:
  explicit Draw(uint32_t seed) : state_(seed) {}
  float Uniform(float lo, float hi) {
    state_ = state_ * 1664525u + 1013904223u;
    const float u = static_cast<float>(state_ >> 8) / 16777216.0f;
    return lo + (hi - lo) * u;
  }
  std::vector<float> Vector(int64_t size, float lo, float hi) {
    std::vector<float> v(size);
    for (float& x : v) x = Uniform(0, 1) < 0.05f ? 0.0f : Uniform(lo, hi);
    return v;
  }

 private:
  uint32_t state_;
};

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The adjoint state of a block over a few reverse steps, run by the portable loop or the AVX-512 step.
struct Adjoint {
  std::vector<float> carry, da, sum_gb, sum_ga, pb, pc;
};

// Runs `steps` reverse steps over shared inputs (per step: gy, dt, dtx rows; B_t, C_t; exp(dt A) and the
// states) with either kernel; the dB / dC rows accumulate into pb / pc as in the backward.
Adjoint RunSteps(int64_t N, int steps, bool portable) {
  Draw draw(7 + static_cast<uint32_t>(N));
  const int64_t NB = N * kBlock;
  Adjoint s{draw.Vector(NB, -2, 2),
            draw.Vector(NB, -1, 1),
            std::vector<float>(steps * kBlock),
            std::vector<float>(steps * kBlock),
            draw.Vector(steps * N, -1, 1),
            draw.Vector(steps * N, -1, 1)};
  const std::vector<float> at = draw.Vector(NB, -8, 0);
  std::vector<float> lane_b(NB), lane_c(NB);
  for (int t = steps - 1; t >= 0; --t) {
    const std::vector<float> gy = draw.Vector(kBlock, -3, 3), dt = draw.Vector(kBlock, 0, 2),
                             dtx = draw.Vector(kBlock, -2, 2), bt = draw.Vector(N, -2, 2),
                             ct = draw.Vector(N, -2, 2), e = draw.Vector(NB, 0, 1),
                             h = draw.Vector(NB, -5, 5), hp = draw.Vector(NB, -5, 5);
    float* sgb = s.sum_gb.data() + t * kBlock;
    float* sga = s.sum_ga.data() + t * kBlock;
    if (portable) {
      AdjointStep<float>(N, gy.data(), dt.data(), dtx.data(), bt.data(), ct.data(), e.data(), h.data(),
                         hp.data(), at.data(), s.carry.data(), s.da.data(), lane_b.data(), lane_c.data(), sgb,
                         sga, s.pb.data() + t * N, s.pc.data() + t * N);
    } else {
      AdjointStep(N, gy.data(), dt.data(), dtx.data(), bt.data(), ct.data(), e.data(), h.data(), hp.data(),
                  at.data(), s.carry.data(), s.da.data(), lane_b.data(), lane_c.data(), sgb, sga,
                  s.pb.data() + t * N, s.pc.data() + t * N);
    }
  }
  return s;
}

// N a multiple of 16 takes AdjointStep16 (dB / dC summed in registers); other N the portable loop.
TEST(SelectiveScanCpuStepsTest, AdjointStepIsThePortableLoopBitForBit) {
  for (int64_t N : {8, 16, 24, 32, 64}) {
    const Adjoint want = RunSteps(N, 5, /*portable=*/true), got = RunSteps(N, 5, /*portable=*/false);
    EXPECT_TRUE(SameBits(want.carry, got.carry)) << "carry, N " << N;
    EXPECT_TRUE(SameBits(want.da, got.da)) << "dA, N " << N;
    EXPECT_TRUE(SameBits(want.sum_gb, got.sum_gb)) << "sum of g B, N " << N;
    EXPECT_TRUE(SameBits(want.sum_ga, got.sum_ga)) << "sum of g dA h A, N " << N;
    EXPECT_TRUE(SameBits(want.pb, got.pb)) << "dB rows, N " << N;
    EXPECT_TRUE(SameBits(want.pc, got.pc)) << "dC rows, N " << N;
  }
}

// The forward and recomputation steps (Step16, exp(dt A) by Exp2Product16) against the portable
// loops, with dt A log2 e in Exp2's range [-126, 0].
TEST(SelectiveScanCpuStepsTest, ScanAndRecomputeStepsAreThePortableLoopsBitForBit) {
  for (int64_t N : {1, 16, 32}) {
    Draw draw(11 + static_cast<uint32_t>(N));
    const int64_t NB = N * kBlock;
    const std::vector<float> as = draw.Vector(NB, -12, 0), prev = draw.Vector(NB, -5, 5);
    std::vector<float> h_want = prev, h_got = prev;
    for (int t = 0; t < 4; ++t) {
      const std::vector<float> dt = draw.Vector(kBlock, 0, 10), dtx = draw.Vector(kBlock, -2, 2),
                               bt = draw.Vector(N, -2, 2), ct = draw.Vector(N, -2, 2);
      std::vector<float> y_want(kBlock), y_got(kBlock);
      ScanStep<float>(N, dt.data(), dtx.data(), as.data(), bt.data(), ct.data(), h_want.data(),
                      y_want.data());
      ScanStep(N, dt.data(), dtx.data(), as.data(), bt.data(), ct.data(), h_got.data(), y_got.data());
      EXPECT_TRUE(SameBits(h_want, h_got)) << "scan state, N " << N << " step " << t;
      EXPECT_TRUE(SameBits(y_want, y_got)) << "scan y, N " << N << " step " << t;

      std::vector<float> hr_want(NB), hr_got(NB), e_want(NB), e_got(NB);
      RecomputeStep<float>(N, dt.data(), dtx.data(), as.data(), bt.data(), ct.data(), prev.data(),
                           hr_want.data(), e_want.data(), y_want.data());
      RecomputeStep(N, dt.data(), dtx.data(), as.data(), bt.data(), ct.data(), prev.data(), hr_got.data(),
                    e_got.data(), y_got.data());
      EXPECT_TRUE(SameBits(hr_want, hr_got)) << "recomputed state, N " << N;
      EXPECT_TRUE(SameBits(e_want, e_got)) << "exp(dt A), N " << N;
      EXPECT_TRUE(SameBits(y_want, y_got)) << "recomputed y, N " << N;
    }
  }
}
#endif

}  // namespace
}  // namespace mimetic::ops::selective_scan_cpu
