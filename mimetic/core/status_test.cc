#include "mimetic/core/status.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

absl::Status FailIfNegative(int x) {
  if (x < 0) return absl::InvalidArgumentError("negative");
  return absl::OkStatus();
}

absl::StatusOr<int> Half(int x) {
  RETURN_IF_ERROR(FailIfNegative(x));
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(half, Half(half));
  return half;
}

TEST(StatusTest, MacrosPropagateErrorsAndValues) {
  EXPECT_EQ(Quarter(8).value(), 2);
  EXPECT_EQ(Quarter(6).status().message(), "odd");
  EXPECT_EQ(Quarter(-4).status().message(), "negative");
}

TEST(StatusDeathTest, CheckNamesFileLineAndCondition) {
  EXPECT_DEATH(MIMETIC_CHECK(1 + 1 == 3) << "arithmetic", "status_test.cc:.*1 \\+ 1 == 3.*arithmetic");
}

}  // namespace
}  // namespace mimetic::core
