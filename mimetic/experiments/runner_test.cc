#include "mimetic/experiments/runner.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

Experiment Small(const std::string& dir, int steps) {
  Experiment e = ParseExperiment(R"pb(
                   name: "small"
                   model { vocab_size: 12 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 8 headdim: 8 } } }
                   variants { name: "default" }
                   variants { name: "mimetic" init { mimetic {} } }
                   task { copy { vocab: 8 min_len: 2 max_len: 6 context_len: 32 } }
                   train { steps: 12 batch_size: 4 eval_every: 4 checkpoint_every: 4 log_every: 2 warmup_steps: 2 }
                   eval { lengths: [ 6, 12 ] batch_size: 8 num_batches: 1 final_batches: 1 }
                   seeds: [ 1 ]
                 )pb")
                     .value();
  e.set_output_dir(dir);
  e.mutable_train()->set_steps(steps);
  EXPECT_TRUE(ValidateExperiment(&e).ok());
  return e;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RunnerTest, WritesEveryOutputAndTheSameSeedGivesIdenticalMetrics) {
  const std::string a = ::testing::TempDir() + "/run_a", b = ::testing::TempDir() + "/run_b";
  std::ostringstream log_a, log_b;
  RunOptions oa{&log_a, true}, ob{&log_b, false};
  ExperimentSummary sa = RunExperiment(Small(a, 12), oa).value();
  ExperimentSummary sb = RunExperiment(Small(b, 12), ob).value();
  ASSERT_EQ(sa.runs.size(), 2u);
  for (size_t i = 0; i < sa.runs.size(); ++i) {
    EXPECT_EQ(sa.runs[i].losses, sb.runs[i].losses);
    EXPECT_EQ(sa.runs[i].exact, sb.runs[i].exact);
    EXPECT_EQ(sa.runs[i].token, sb.runs[i].token);
  }
  const fs::path dir = fs::path(a) / "small";
  for (const char* f : {"config.textproto", "metrics.jsonl", "summary.md", "summary.csv"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  EXPECT_TRUE(fs::exists(dir / "checkpoints/mimetic/seed1/step_00000012.safetensors"));
  EXPECT_TRUE(fs::exists(dir / "plots/mimetic_seed1_layer1_mask.png"));
  EXPECT_TRUE(fs::exists(dir / "tb"));
  EXPECT_THAT(Read(dir / "summary.md"), ::testing::HasSubstr("| mimetic | 1 |"));
  EXPECT_THAT(log_a.str(), ::testing::HasSubstr("tok/s"));
}

TEST(RunnerTest, ResumeContinuesWithBitIdenticalLosses) {
  const std::string full = ::testing::TempDir() + "/full", part = ::testing::TempDir() + "/part";
  std::ostringstream sink;
  RunOptions quiet{&sink, false};
  ExperimentSummary uninterrupted = RunExperiment(Small(full, 12), quiet).value();
  // Interrupt after 7 steps (checkpoints at 4 and 7), then run again: it resumes from step 7.
  RunOptions interrupted = quiet;
  interrupted.step_budget = 7;
  ExperimentSummary first = RunExperiment(Small(part, 12), interrupted).value();
  ExperimentSummary resumed = RunExperiment(Small(part, 12), quiet).value();
  for (size_t i = 0; i < uninterrupted.runs.size(); ++i) {
    std::vector<double> stitched = first.runs[i].losses;
    stitched.insert(stitched.end(), resumed.runs[i].losses.begin(), resumed.runs[i].losses.end());
    EXPECT_EQ(stitched, uninterrupted.runs[i].losses) << uninterrupted.runs[i].variant;
    EXPECT_EQ(resumed.runs[i].losses.size(), 5u);
  }
  EXPECT_THAT(sink.str(), ::testing::HasSubstr("resuming from step 7"));
}

TEST(RunnerTest, ResumingIntoADirectoryOfAnotherExperimentIsRefused) {
  const std::string dir = ::testing::TempDir() + "/other";
  std::ostringstream sink;
  ASSERT_TRUE(RunExperiment(Small(dir, 4), RunOptions{&sink, false}).ok());
  Experiment changed = Small(dir, 4);
  changed.mutable_train()->set_lr(5e-4);
  EXPECT_THAT(RunExperiment(changed, RunOptions{&sink, false}).status().message(),
              ::testing::HasSubstr("holds a different experiment"));
  // More steps of the same experiment is a resume, not a different experiment.
  EXPECT_TRUE(RunExperiment(Small(dir, 6), RunOptions{&sink, false}).ok());
}

TEST(RunnerTest, UnwritableOutputDirectoryFailsBeforeTraining) {
  const std::string file = ::testing::TempDir() + "/a_file";
  std::ofstream(file) << "x";
  std::ostringstream sink;
  absl::Status s = RunExperiment(Small(file + "/sub", 12), RunOptions{&sink, false}).status();
  EXPECT_THAT(s.message(), ::testing::HasSubstr("output_dir"));
  EXPECT_EQ(sink.str().find("step"), std::string::npos);
}

TEST(RunnerTest, CudaWithoutABackendOrGpuIsAClearErrorBeforeTraining) {
  Experiment e = Small(::testing::TempDir() + "/cuda", 12);
  e.set_device("cuda");
  std::ostringstream sink;
  absl::Status s = RunExperiment(e, RunOptions{&sink, false}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), ::testing::HasSubstr("device: \"cuda\" was requested"));
  EXPECT_THAT(s.message(), ::testing::HasSubstr("run_cuda"));
  EXPECT_EQ(sink.str().find("step"), std::string::npos);
}

}  // namespace
}  // namespace mimetic::experiments
