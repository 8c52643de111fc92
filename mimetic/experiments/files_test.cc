#include "mimetic/experiments/files.h"

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

std::string TestDir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/files_test_", name);
}

TEST(PathTest, Pieces) {
  EXPECT_EQ(BaseName("a/b/c.png"), "c.png");
  EXPECT_EQ(AbsolutePath("/a//b/./c/../d"), "/a/b/d");
  EXPECT_EQ(AbsolutePath("/.."), "/");
  EXPECT_EQ(RelativePath("/runs/paper", "/runs/fig1/figure.png"), "../fig1/figure.png");
  EXPECT_EQ(RelativePath("/runs/paper", "/runs/paper/a.png"), "a.png");
  EXPECT_EQ(RelativePath("/runs/paper/", "/runs/paper"), ".");
  EXPECT_EQ(RelativePath("/x/y", "/z.png"), "../../z.png");
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof(cwd)), nullptr);
  EXPECT_EQ(AbsolutePath("q/r"), AbsolutePath(absl::StrCat(cwd, "/q/r")));
  EXPECT_EQ(RelativePath("runs/paper", "runs/fig2/figure.png"), "../fig2/figure.png");
}

TEST(FilesTest, FileExists) {
  // (mkdir -p and DirName are core/file_util.h's, tested in core/file_util_test.cc.)
  const std::string dir = TestDir("w") + "/deep/er";
  ASSERT_TRUE(core::MakeDirs(dir).ok());
  EXPECT_FALSE(FileExists(dir));  // a directory is not a file
  const std::string file = dir + "/file.txt";
  EXPECT_FALSE(FileExists(file));
  absl::StatusOr<ProgramResult> touch = RunProgram({"touch", "file.txt"}, dir);
  ASSERT_TRUE(touch.ok() && touch->exit_code == 0);
  EXPECT_TRUE(FileExists(file));
}

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
}  // namespace mimetic::experiments
