#include "mimetic/core/dir_lock.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

std::string TempDir(const std::string& name) {
  const char* t = std::getenv("TEST_TMPDIR");
  const std::string dir = absl::StrCat(t != nullptr ? t : "/tmp", "/", name);
  EXPECT_TRUE(MakeDirs(dir).ok());
  return dir;
}

TEST(DirLockTest, ASecondWriterIsRefusedNamingTheHolder) {
  const std::string dir = TempDir("lock_same_process");
  absl::StatusOr<DirLock> first = DirLock::Acquire(dir);
  ASSERT_TRUE(first.ok()) << first.status();
  absl::StatusOr<DirLock> second = DirLock::Acquire(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(second.status().message(), HasSubstr(absl::StrCat("pid ", ::getpid())));
  EXPECT_THAT(second.status().message(), HasSubstr(dir));
  // Released on destruction (and by a move's source never).
  DirLock moved = std::move(*first);
  EXPECT_FALSE(DirLock::Acquire(dir).ok());
  moved = DirLock();
  EXPECT_TRUE(DirLock::Acquire(dir).ok());
}

TEST(DirLockTest, AnotherProcessHoldsItUntilItDiesEvenByKill9) {
  const std::string dir = TempDir("lock_child");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<DirLock> lock = DirLock::Acquire(dir);
    const char c = lock.ok() ? 'y' : 'n';
    (void)!::write(ready[1], &c, 1);
    ::pause();
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  absl::StatusOr<DirLock> refused = DirLock::Acquire(dir);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr(absl::StrCat("pid ", child)));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(DirLock::Acquire(dir).ok());
}

TEST(DirLockTest, AcquiringRemovesTemporariesOfDeadWritersOnly) {
  const std::string dir = TempDir("lock_temps");
  // pid_max is at most 4194304, so this writer cannot exist.
  const std::string dead = dir + "/config.textproto.tmp.999999999.3";
  const std::string alive = TempPathFor(dir + "/summary.md");
  std::ofstream(dead) << "half";
  std::ofstream(alive) << "being written";
  ASSERT_TRUE(DirLock::Acquire(dir).ok());
  EXPECT_NE(::access(dead.c_str(), F_OK), 0);
  EXPECT_EQ(::access(alive.c_str(), F_OK), 0);
}

}  // namespace
}  // namespace mimetic::core
