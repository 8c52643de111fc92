// CUDA smoke test: the error macros work everywhere; the kernel runs only where a device exists and
// the test says why it skipped otherwise (CI compiles every .cu with nvcc but has no GPU).
#include "third_party/tests/cuda_smoke.h"

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mimetic/core/cuda_check.h"

namespace mimetic::third_party_tests {
namespace {

absl::Status FailWith(cudaError_t error) {
  CUDA_RETURN_IF_ERROR(error);
  return absl::OkStatus();
}

TEST(CudaCheckTest, ReturnIfErrorGivesInternalErrorWithFileLineAndMessage) {
  EXPECT_TRUE(FailWith(cudaSuccess).ok());
  const absl::Status status = FailWith(cudaErrorInvalidValue);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  const std::string message(status.message());
  EXPECT_NE(message.find("cuda_smoke_test.cc:"), std::string::npos) << message;
  EXPECT_NE(message.find("cudaErrorInvalidValue"), std::string::npos) << message;
  EXPECT_NE(message.find(cudaGetErrorString(cudaErrorInvalidValue)), std::string::npos) << message;
}

TEST(CudaCheckDeathTest, CheckAbortsWithFileAndLine) {
  EXPECT_DEATH(MIMETIC_CUDA_CHECK(cudaErrorInvalidValue),
               "cuda_smoke_test.cc:[0-9]+: .*cudaErrorInvalidValue");
}

TEST(CudaSmokeTest, SaxpyMatchesHost) {
  const absl::StatusOr<int> count = CudaDeviceCount();
  if (!count.ok()) GTEST_SKIP() << "no CUDA device: " << count.status();
  if (*count == 0) GTEST_SKIP() << "no CUDA device: cudaGetDeviceCount returned 0";

  constexpr int kN = 1000;  // not a multiple of the block size, so the bounds check matters
  std::vector<float> x(kN), y(kN), expected(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = 0.5f * static_cast<float>(i);
    y[i] = 3.0f - static_cast<float>(i % 7);
    expected[i] = 2.0f * x[i] + y[i];
  }
  ASSERT_TRUE(Saxpy(2.0f, x, y).ok());
  for (int i = 0; i < kN; ++i) {
    EXPECT_FLOAT_EQ(y[i], expected[i]) << "at " << i;  // one fused multiply-add: within 4 ulp
  }
}

TEST(CudaSmokeTest, SaxpyRejectsMismatchedSizes) {
  std::vector<float> x(3), y(4);
  EXPECT_EQ(Saxpy(1.0f, x, y).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mimetic::third_party_tests
