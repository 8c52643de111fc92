#include "mimetic/models/flops.h"

#include "gtest/gtest.h"
#include "mimetic/models/spec.h"

namespace mimetic::models {
namespace {

// Mamba 2, width 64: E 128, H 8, P 16, N 32, G 1, in_proj rows 2*128 + 2*32 + 8 = 328; vocab 30
// padded to 32; 2 rows of 40 tokens = chunks of 32 and 8.
TEST(FlopsTest, Mamba2StepCountsGemmsChunksAndHead) {
  const ModelSpec spec = ParseModelSpec(
                             "vocab_size: 30 d_model: 64 n_layer: 2 default_layer { mamba2 { d_state: 32 "
                             "headdim: 16 chunk_size: 32 } }")
                             .value();
  const double T = 80;
  const double gemm = 3 * 2 * T * (64 * 328 + 128 * 64);
  auto chunk = [](double q) {
    const double tri = q * (q + 1);
    const double fwd = 32 * tri + 8 * (4 * q * 32 * 16 + 16 * tri);
    const double bwd = 32 * tri + 8 * (10 * q * 32 * 16 + 2 * 16 * tri + 2 * 32 * tri);
    return 2 * (fwd + bwd);  // 2 rows
  };
  const double head = 3 * 2 * T * 64 * 32;
  EXPECT_DOUBLE_EQ(TrainStepFlops(spec, 2, 40).value(), 2 * (gemm + chunk(32) + chunk(8)) + head);
}

// Mamba 1, width 32: E 64, N 16, R ceil(32 / 16) = 2.
TEST(FlopsTest, Mamba1StepCountsGemmsScanAndHead) {
  const ModelSpec spec =
      ParseModelSpec("vocab_size: 16 d_model: 32 n_layer: 1 default_layer { mamba1 { d_state: 16 } }")
          .value();
  const double T = 3 * 10;
  const double gemm = 3 * 2 * T * (32 * 128 + 64 * (2 + 32) + 2 * 64 + 64 * 32);
  EXPECT_DOUBLE_EQ(TrainStepFlops(spec, 3, 10).value(), gemm + 27 * T * 64 * 16 + 3 * 2 * T * 32 * 16);
}

TEST(FlopsTest, AttentionIsNotCountedAndSaysSo) {
  const ModelSpec spec =
      ParseModelSpec("vocab_size: 16 d_model: 32 n_layer: 1 default_layer { attention { num_heads: 2 } }")
          .value();
  const absl::StatusOr<double> f = TrainStepFlops(spec, 1, 8);
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(f.status().message().find("layer 0 is attention"), std::string::npos) << f.status();
}

}  // namespace
}  // namespace mimetic::models
