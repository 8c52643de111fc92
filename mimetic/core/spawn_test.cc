#include "mimetic/core/spawn.h"

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

// The test's own temporary folder, and a file's text ("" when it does not exist).
std::string TestDir() { return ::testing::TempDir(); }
std::string Slurp(const std::string& path) { return core::ReadTextFile(path).value_or(""); }

int WaitExitCode(pid_t pid) {
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(SpawnChildTest, RunsWithItsLogEnvironmentDirectoryAndGroup) {
  SpawnSpec spec;
  spec.argv = {"sh", "-c", "echo \"$GREETING\"; pwd; echo err >&2; read x || echo eof; exit 4"};
  spec.env = {"GREETING=hello", "PATH=/usr/bin:/bin"};
  spec.cwd = "/";
  spec.stdout_path = TestDir() + "/spawn_log.txt";
  spec.own_process_group = true;
  absl::StatusOr<pid_t> pid = SpawnChild(spec);
  ASSERT_TRUE(pid.ok()) << pid.status();
  // Returned after exec, so the child's own process group is already in place.
  EXPECT_EQ(::getpgid(*pid), *pid);
  EXPECT_EQ(WaitExitCode(*pid), 4);
  EXPECT_EQ(Slurp(spec.stdout_path), "hello\n/\nerr\neof\n");
}

TEST(SpawnChildTest, NamesTheStepThatFailed) {
  SpawnSpec absent;
  absent.argv = {"no-such-program-xyz"};
  EXPECT_EQ(SpawnChild(absent).status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(SpawnChild(absent).status().message(),
              HasSubstr("'no-such-program-xyz' was not found on PATH"));

  SpawnSpec bad_path;
  bad_path.argv = {"/no/such/program"};
  EXPECT_THAT(SpawnChild(bad_path).status().message(),
              HasSubstr("starting '/no/such/program': executing it"));

  SpawnSpec bad_dir;
  bad_dir.argv = {"true"};
  bad_dir.cwd = "/no/such/dir";
  EXPECT_THAT(SpawnChild(bad_dir).status().message(), HasSubstr("'true': changing to its directory"));

  SpawnSpec bad_log;
  bad_log.argv = {"true"};
  bad_log.stdout_path = "/no/such/dir/log.txt";
  EXPECT_THAT(SpawnChild(bad_log).status().message(), HasSubstr("'true': opening its log"));

  EXPECT_EQ(SpawnChild(SpawnSpec{}).status().code(), absl::StatusCode::kInvalidArgument);
}

// A parent (forked here) that starts a child and is then killed with SIGKILL; returns once it is gone.
void SpawnThenDie(const std::string& marker, bool race) {
  const pid_t parent = ::fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    SetParentDiesAfterForkForTest(race);
    SpawnSpec spec;
    spec.argv = {"sh", "-c", "sleep 1; echo ran > \"$0\"", marker};
    absl::StatusOr<pid_t> pid = SpawnChild(spec);
    if (pid.ok()) ::kill(::getpid(), SIGKILL);
    ::_exit(3);
  }
  EXPECT_EQ(WaitExitCode(parent), 128 + SIGKILL);
}

TEST(SpawnChildTest, ChildDiesWithItsParent) {
  const std::string marker = TestDir() + "/orphan_ran";
  SpawnThenDie(marker, /*race=*/false);
  ::sleep(2);
  EXPECT_FALSE(std::ifstream(marker).good()) << "the orphan ran to the end";
}

// Issue 51: the parent dies before the child has asked for its death signal; the child notices that it was
// re-parented and does not run.
TEST(SpawnChildTest, ChildOfAParentKilledWhileStartingItDoesNotRun) {
  const std::string marker = TestDir() + "/race_orphan_ran";
  SpawnThenDie(marker, /*race=*/true);
  ::sleep(2);
  EXPECT_FALSE(std::ifstream(marker).good()) << "the orphan ran to the end";
}

}  // namespace
}  // namespace mimetic::core
