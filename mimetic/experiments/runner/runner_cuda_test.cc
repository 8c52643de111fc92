// On a GPU, a sweep stopped part-way resumes from its checkpoints on the GPU and continues with the
// losses of a run that was never stopped. Skips, saying why, without a GPU.
//
// The first GPU figure runs (tools/gpu/figures.sh, H100) failed every resumed point: a checkpoint loads
// as host tensors, and the resumed step mixed them with the batch on the GPU ("inputs are on different
// devices").
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/tensor.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/runner/runner.h"
#include "mimetic/experiments/runner/testing/tiny_experiment.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

Experiment OnGpu(const std::string& dir, int steps) {
  Experiment e =
      TinyExperiment({"name=small", "device=cuda", "train.eval_every=4", "train.checkpoint_every=4",
                      "train.log_every=2", "train.warmup_steps=2", "eval.final_batches=1"});
  e.set_output_dir(dir);
  e.mutable_train()->set_steps(steps);
  return e;
}

TEST(RunnerCudaTest, AStoppedGpuRunResumesOnTheGpuWithTheUninterruptedLosses) {
  if (core::GetCudaMemoryHooks().allocate == nullptr) {
    GTEST_SKIP() << "no usable GPU: " << core::CudaBackendStatus();
  }
  const std::string full = ::testing::TempDir() + "/gpu_full", part = ::testing::TempDir() + "/gpu_part";
  std::ostringstream sink;
  ExperimentSummary uninterrupted = RunExperiment(OnGpu(full, 12), QuietRunOptions(&sink)).value();
  RunOptions interrupted = QuietRunOptions(&sink);
  interrupted.step_budget = 7;  // checkpoints at steps 4 and 7
  ExperimentSummary first = RunExperiment(OnGpu(part, 12), interrupted).value();
  absl::StatusOr<ExperimentSummary> resumed = RunExperiment(OnGpu(part, 12), QuietRunOptions(&sink));
  ASSERT_TRUE(resumed.ok()) << resumed.status() << "\n" << sink.str();
  EXPECT_THAT(sink.str(), HasSubstr("resuming from step 7"));
  for (size_t i = 0; i < uninterrupted.runs.size(); ++i) {
    ASSERT_TRUE(resumed->runs[i].finished) << resumed->runs[i].point.dir;
    std::vector<double> stitched = first.runs[i].losses;
    stitched.insert(stitched.end(), resumed->runs[i].losses.begin(), resumed->runs[i].losses.end());
    EXPECT_EQ(stitched, uninterrupted.runs[i].losses) << uninterrupted.runs[i].point.dir;
  }
}

}  // namespace
}  // namespace mimetic::experiments
