#include "mimetic/experiments/runner/local_launcher.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The test's own temporary folder, and a file's text ("" when it does not exist).
std::string TestDir() { return ::testing::TempDir(); }
std::string Slurp(const std::string& path) { return core::ReadTextFile(path).value_or(""); }

TEST(RunChildrenTest, RunsEveryJobWithItsLogAndEnvironment) {
  std::vector<ChildJob> jobs;
  for (int i = 0; i < 3; ++i) {
    jobs.push_back({{"/bin/sh", "-c", "echo \"$POINT\"; exit $POINT"},
                    {"POINT=" + std::to_string(i)},
                    TestDir() + "/job" + std::to_string(i) + ".log"});
  }
  int started = 0;
  absl::StatusOr<std::vector<int>> codes =
      RunChildren(jobs, 2, [&](const ChildEvent& e) { started += e.started; });
  ASSERT_TRUE(codes.ok()) << codes.status();
  EXPECT_THAT(*codes, ElementsAre(0, 1, 2));
  EXPECT_EQ(started, 3);
  EXPECT_EQ(Slurp(jobs[2].log_path), "2\n");
}

TEST(RunChildrenTest, AJobThatCannotStartIsNamedWithItsLog) {
  absl::StatusOr<std::vector<int>> codes =
      RunChildren({{{"/no/such/run"}, {}, TestDir() + "/missing.log"}}, 1, {});
  EXPECT_EQ(codes.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(codes.status().message(), HasSubstr("'/no/such/run'"));
  EXPECT_THAT(codes.status().message(), HasSubstr("missing.log"));
}

// Issue 51: a --jobs parent killed (kill -9) just as it started a child left the child running the whole
// point as an orphan. The parent here is a process forked by the test, killed from its start event.
TEST(RunChildrenTest, AChildDoesNotOutliveAParentKilledAsItStarts) {
  const std::string marker = TestDir() + "/orphan_point_ran";
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    std::vector<ChildJob> jobs = {{{"/bin/sh", "-c", "sleep 1; echo ran > \"$0\"", marker}, {}, "/dev/null"}};
    (void)RunChildren(jobs, 1, [](const ChildEvent&) { ::kill(::getpid(), SIGKILL); });
    ::_exit(3);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(parent, &status, 0), parent);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  ::sleep(2);
  EXPECT_FALSE(std::ifstream(marker).good()) << "the orphaned child ran its point to the end";
}

}  // namespace
}  // namespace mimetic::experiments
