// What a run guarantees (README "What a run guarantees"): one writer per directory, signals that
// checkpoint and exit 128+n, a full disk that fails loudly and keeps the old files. Runs the runner
// in this process and as a real process (run_test_util.h) on the tiny config (a second or two each).
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/dir_lock.h"
#include "mimetic/core/file_util.h"
#include "mimetic/experiments/config.h"
#include "mimetic/experiments/run_test_util.h"
#include "mimetic/experiments/runner.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string OutDir(const std::string& name) { return ::testing::TempDir() + "/" + name; }

Experiment Tiny(const std::string& out, std::vector<std::string> sets = {}) {
  sets.push_back("output_dir=" + out);
  return LoadExperiment(TinyConfig(), sets).value();
}

RunOptions Quiet(std::ostream* sink) {
  RunOptions o;
  o.progress = sink;
  o.plots = false;
  return o;
}

TEST(LockTest, ASecondWriterOfARunDirectoryIsRefusedNamingTheHolder) {
  const std::string out = OutDir("lock_sweep");
  ASSERT_TRUE(core::MakeDirs(out + "/tiny").ok());
  absl::StatusOr<core::DirLock> held = core::DirLock::Acquire(out + "/tiny");
  ASSERT_TRUE(held.ok());
  std::ostringstream sink;
  absl::Status s = RunExperiment(Tiny(out), Quiet(&sink)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr(absl::StrCat("pid ", ::getpid())));
  EXPECT_THAT(sink.str(), ::testing::Not(HasSubstr("step")));
  EXPECT_FALSE(fs::exists(out + "/tiny/points"));
}

TEST(LockTest, ASecondWriterOfAGridPointIsRefused) {
  // As a cluster job of the same point, or a --point child, would be while this one trains it.
  const std::string out = OutDir("lock_point");
  const std::string point = out + "/tiny/points/mimetic/seed1";
  ASSERT_TRUE(core::MakeDirs(point).ok());
  absl::StatusOr<core::DirLock> held = core::DirLock::Acquire(point);
  ASSERT_TRUE(held.ok());
  std::ostringstream sink;
  absl::Status s = RunExperiment(Tiny(out), Quiet(&sink)).status();
  EXPECT_THAT(s.message(), HasSubstr(point));
  EXPECT_THAT(s.message(), HasSubstr("another process"));
  EXPECT_THAT(FilesNamed(point, "step_"), IsEmpty());
  // Once the holder is gone the same command runs (the first point was finished meanwhile).
  *held = core::DirLock();
  EXPECT_TRUE(RunExperiment(Tiny(out), Quiet(&sink)).ok());
}

TEST(LockTest, TwoRunnerProcessesOnOneDirectory) {
  const std::string out = OutDir("lock_processes");
  RunProcess first =
      StartRun({TinyConfig(), "--set", "output_dir=" + out, "--set", "train.steps=4000", "--threads=1"},
               out + ".first.log");
  ASSERT_TRUE(WaitForText(out + ".first.log", "step 10/", 60));
  const int second = RunToEnd({TinyConfig(), "--set", "output_dir=" + out, "--set", "train.steps=4000"},
                              out + ".second.log");
  ::kill(first.pid, SIGKILL);
  WaitRun(first);
  EXPECT_EQ(second, 1);
  EXPECT_THAT(ReadFile(out + ".second.log"), HasSubstr(absl::StrCat("pid ", first.pid)));
}

}  // namespace
}  // namespace mimetic::experiments
