#include "mimetic/core/subprocess.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

TEST(RunProgramTest, CapturesOutputAndExitCode) {
  absl::StatusOr<ProgramResult> r = RunProgram({"sh", "-c", "echo out; echo err >&2; pwd; exit 3"}, "/");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->output, "out\nerr\n/\n");

  absl::StatusOr<ProgramResult> killed = RunProgram({"sh", "-c", "kill -9 $$"});
  ASSERT_TRUE(killed.ok());
  EXPECT_EQ(killed->exit_code, 128 + 9);

  absl::StatusOr<ProgramResult> absent = RunProgram({"no-such-program-xyz"}, ".", "Debian: xyz");
  EXPECT_EQ(absent.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(absent.status().message(), HasSubstr("'no-such-program-xyz' was not found on PATH"));
  EXPECT_THAT(absent.status().message(), HasSubstr("Debian: xyz"));

  absl::StatusOr<ProgramResult> bad_dir = RunProgram({"true"}, "/no/such/dir");
  EXPECT_THAT(bad_dir.status().message(), HasSubstr("directory '/no/such/dir' does not exist"));
  EXPECT_EQ(RunProgram({}).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mimetic::core
