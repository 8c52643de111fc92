// A process told to use K threads runs its training step on exactly K threads (our OpenMP kernels and
// OpenBLAS, whose OpenMP build shares the same pool), whatever OMP_NUM_THREADS says: BUILD runs this test
// with OMP_NUM_THREADS=3 and OPENBLAS_NUM_THREADS=3. Each K runs in a forked child that has not yet started
// OpenMP, because an OpenMP pool, once started, keeps its threads.
#include "mimetic/experiments/runner/threads.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/random.h"
#include "mimetic/data/batch.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"
#include "mimetic/train/train_step.h"

namespace mimetic::experiments {
namespace {

int TasksOfThisProcess() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

// Two training steps of a small Mamba 2 (GEMMs big enough for OpenBLAS to thread, OpenMP kernels),
// then the number of threads the process has.
int ThreadsAfterTrainingSteps() {
  const models::ModelSpec spec =
      models::ParseModelSpec(
          "vocab_size: 30 d_model: 64 n_layer: 2 default_layer { mamba2 { d_state: 32 headdim: 16 "
          "chunk_size: 32 } }")
          .value();
  train::TrainState state = train::InitTrainState(models::Init(core::Key::FromSeed(0), spec).value()).value();
  train::TrainStep step(spec, train::OptimizerConfig{});
  const int64_t rows = 16, len = 64, n = rows * len;
  const std::vector<int32_t> tok = core::RandIntVector(core::Key::FromSeed(1), n, 0, 26).value();
  const std::vector<float> mask(n, 1.f);
  const data::Batch batch = data::BatchFromParts(tok, tok, mask, rows, len).value();
  for (int i = 0; i < 2; ++i) step(&state, batch, 1e-3).value();
  return TasksOfThisProcess();
}

// Forks; the child sets `threads`, trains and exits with its thread count.
int ThreadsOfChildWith(int threads) {
  const pid_t pid = fork();
  if (pid == 0) {
    SetThreadCount(threads);
    _exit(ThreadsAfterTrainingSteps());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(ThreadsTest, EnvironmentAsksForMoreThreadsThanTheTestSets) {
  ASSERT_STREQ(std::getenv("OMP_NUM_THREADS"), "3");
}

TEST(ThreadsTest, ProcessToldOneThreadUsesOne) { EXPECT_EQ(ThreadsOfChildWith(1), 1); }

TEST(ThreadsTest, ProcessToldTwoThreadsUsesTwo) { EXPECT_EQ(ThreadsOfChildWith(2), 2); }

TEST(ThreadsTest, ThreadCountReportsWhatWasSet) {
  const pid_t pid = fork();
  if (pid == 0) {
    SetThreadCount(2);
    _exit(ThreadCount());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

// Runs the probe binary (UseShortSpinWaits, then libgomp's report of its settings) with `env_args`
// given to env(1) and returns its stdout and stderr.
std::string ProbeOutput(const std::string& env_args) {
  const std::string probe =
      std::string(std::getenv("TEST_SRCDIR")) + "/mimetic/mimetic/experiments/spin_wait_probe_main";
  const std::string cmd = "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT -u SPIN_WAIT_PROBE_STARTED " + env_args +
                          " " + probe + " a b 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return "popen failed";
  std::string out;
  char buf[4096];
  while (size_t n = fread(buf, 1, sizeof(buf), pipe)) out.append(buf, n);
  pclose(pipe);
  return out;
}

TEST(SpinWaitTest, WithoutAWaitPolicyTheProcessRestartsWithShortSpins) {
  const std::string out = ProbeOutput("");
  // libgomp itself reports the count it read when the restarted process loaded it.
  EXPECT_THAT(out, ::testing::HasSubstr(std::string("GOMP_SPINCOUNT = '") + kSpinCount + "'")) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("reexecuted=1 argc=3 last=b")) << out;
}

TEST(SpinWaitTest, TheUsersSpinCountStands) {
  const std::string out = ProbeOutput("GOMP_SPINCOUNT=500");
  EXPECT_THAT(out, ::testing::HasSubstr("GOMP_SPINCOUNT = '500'")) << out;
  EXPECT_THAT(out, ::testing::HasSubstr("reexecuted=0")) << out;
}

TEST(SpinWaitTest, TheUsersWaitPolicyStands) {
  const std::string out = ProbeOutput("OMP_WAIT_POLICY=passive");
  EXPECT_THAT(out, ::testing::HasSubstr("OMP_WAIT_POLICY = 'PASSIVE'")) << out;
  EXPECT_THAT(out, ::testing::Not(::testing::HasSubstr(std::string("GOMP_SPINCOUNT = '") + kSpinCount)))
      << out;
  EXPECT_THAT(out, ::testing::HasSubstr("reexecuted=0")) << out;
}

}  // namespace
}  // namespace mimetic::experiments
