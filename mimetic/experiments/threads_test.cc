// A process told to use K threads runs its training step on exactly K threads (our OpenMP kernels
// and OpenBLAS, whose OpenMP build shares the same pool), whatever OMP_NUM_THREADS says: BUILD runs
// this test with OMP_NUM_THREADS=3 and OPENBLAS_NUM_THREADS=3. Each K runs in a forked child that
// has not yet started OpenMP, because an OpenMP pool, once started, keeps its threads.
#include "mimetic/experiments/threads.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

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

}  // namespace
}  // namespace mimetic::experiments
