#include "mimetic/experiments/runner/runner.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/runner/testing/tiny_experiment.h"
#include "mimetic/experiments/runner/threads.h"
#include "mimetic/init/safetensors.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

Experiment Small(const std::string& dir, int steps) {
  Experiment e = TinyExperiment({"name=small", "train.eval_every=4", "train.checkpoint_every=4",
                                 "train.log_every=2", "train.warmup_steps=2", "eval.final_batches=1"});
  e.set_output_dir(dir);
  e.mutable_train()->set_steps(steps);
  Experiment check = e;
  EXPECT_TRUE(ValidateExperiment(&check).ok());
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
  RunOptions oa = QuietRunOptions(&log_a);
  oa.plots = true;
  ExperimentSummary sa = RunExperiment(Small(a, 12), oa).value();
  ExperimentSummary sb = RunExperiment(Small(b, 12), QuietRunOptions(&log_b)).value();
  ASSERT_EQ(sa.runs.size(), 2u);
  for (size_t i = 0; i < sa.runs.size(); ++i) {
    EXPECT_TRUE(sa.runs[i].finished);
    EXPECT_EQ(sa.runs[i].losses, sb.runs[i].losses);
    EXPECT_EQ(sa.runs[i].result.final_size(), 2);
    EXPECT_EQ(sa.runs[i].result.final(0).exact(), sb.runs[i].result.final(0).exact());
    EXPECT_EQ(sa.runs[i].result.final(1).token(), sb.runs[i].result.final(1).token());
    EXPECT_EQ(sa.runs[i].result.curve_size(), 3);  // steps 4, 8, 12
  }
  const fs::path dir = fs::path(a) / "small";
  for (const char* f :
       {"sweep.textproto", "summary.md", "summary.csv", "runs.csv", "plots/accuracy_len12.png"}) {
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  }
  const fs::path point = dir / "points/mimetic/seed1";
  for (const char* f : {"config.textproto", "metrics.jsonl", "result.textproto", "progress.textproto",
                        "checkpoints/step_00000012.safetensors", "plots/mimetic_layer1_mask.png", "tb"}) {
    EXPECT_TRUE(fs::exists(point / f)) << f;
  }
  EXPECT_THAT(Read(dir / "summary.md"), HasSubstr("| mimetic | 1 |"));
  EXPECT_THAT(log_a.str(), HasSubstr("tok/s"));
  // Checkpoints record the model as trained: the mimetic init's A = -exp(-8 A_log) is in the spec,
  // not the weights, and a reader outside mimetic needs it to rebuild the forward.
  std::map<std::string, std::string> meta;
  ASSERT_TRUE(init::ReadSafetensors((point / "checkpoints/step_00000012.safetensors").string(), &meta).ok());
  ASSERT_EQ(meta.count("model_spec"), 1u);
  absl::StatusOr<models::ModelSpec> spec = models::ParseModelSpec(meta["model_spec"]);
  ASSERT_TRUE(spec.ok()) << spec.status() << "\n" << meta["model_spec"];
  EXPECT_THAT(meta["model_spec"], HasSubstr("a_log_scale: -8"));
}

// eval.task replaces the training task in evaluation only: naming the training task itself changes
// nothing, another task changes the accuracies but not the training.
TEST(RunnerTest, EvalTaskIsWhatEvaluationSamplesFrom) {
  std::ostringstream sink;
  Experiment plain = Small(::testing::TempDir() + "/eval_plain", 12);
  Experiment same = Small(::testing::TempDir() + "/eval_same", 12);
  *same.mutable_eval()->mutable_task() = same.task();
  Experiment other = Small(::testing::TempDir() + "/eval_other", 12);
  other.mutable_eval()->mutable_task()->mutable_copy()->set_vocab(2);
  ExperimentSummary sp = RunExperiment(plain, QuietRunOptions(&sink)).value();
  ExperimentSummary ss = RunExperiment(same, QuietRunOptions(&sink)).value();
  ExperimentSummary so = RunExperiment(other, QuietRunOptions(&sink)).value();
  ASSERT_EQ(sp.runs.size(), 2u);
  bool any_differs = false;
  for (size_t i = 0; i < sp.runs.size(); ++i) {
    EXPECT_EQ(sp.runs[i].losses, ss.runs[i].losses);
    EXPECT_EQ(sp.runs[i].losses, so.runs[i].losses);  // training is untouched
    for (int k = 0; k < sp.runs[i].result.final_size(); ++k) {
      EXPECT_EQ(sp.runs[i].result.final(k).token(), ss.runs[i].result.final(k).token());
      any_differs = any_differs || sp.runs[i].result.final(k).token() != so.runs[i].result.final(k).token();
    }
  }
  EXPECT_TRUE(any_differs) << "evaluating on copy with 2 letters gave the same accuracies as with 8";
}

TEST(RunnerTest, ResumeContinuesWithBitIdenticalLossesAndKeepsTheWholeCurve) {
  const std::string full = ::testing::TempDir() + "/full", part = ::testing::TempDir() + "/part";
  std::ostringstream sink;
  ExperimentSummary uninterrupted = RunExperiment(Small(full, 12), QuietRunOptions(&sink)).value();
  // Interrupt after 7 steps (checkpoints at 4 and 7), then run again: it resumes from step 7.
  RunOptions interrupted = QuietRunOptions(&sink);
  interrupted.step_budget = 7;
  ExperimentSummary first = RunExperiment(Small(part, 12), interrupted).value();
  EXPECT_FALSE(first.runs[0].finished);
  EXPECT_THAT(first.table, HasSubstr("Not finished (2)"));
  ExperimentSummary resumed = RunExperiment(Small(part, 12), QuietRunOptions(&sink)).value();
  for (size_t i = 0; i < uninterrupted.runs.size(); ++i) {
    std::vector<double> stitched = first.runs[i].losses;
    stitched.insert(stitched.end(), resumed.runs[i].losses.begin(), resumed.runs[i].losses.end());
    EXPECT_EQ(stitched, uninterrupted.runs[i].losses) << uninterrupted.runs[i].point.dir;
    EXPECT_EQ(resumed.runs[i].losses.size(), 5u);
    // The evaluation at step 4 (before the interruption) is still part of the curve.
    ASSERT_EQ(resumed.runs[i].result.curve_size(), 3);
    EXPECT_EQ(resumed.runs[i].result.curve(0).step(), 4);
    EXPECT_EQ(resumed.runs[i].result.curve(0).accuracy(0).exact(),
              uninterrupted.runs[i].result.curve(0).accuracy(0).exact());
    EXPECT_EQ(resumed.runs[i].result.final(0).exact(), uninterrupted.runs[i].result.final(0).exact());
  }
  EXPECT_THAT(sink.str(), HasSubstr("resuming from step 7"));
  // A third run finds every point finished and trains nothing.
  ExperimentSummary again = RunExperiment(Small(part, 12), QuietRunOptions(&sink)).value();
  EXPECT_TRUE(again.runs[0].finished);
  EXPECT_TRUE(again.runs[0].losses.empty());
}

TEST(RunnerTest, ResumingIntoADirectoryOfAnotherExperimentIsRefused) {
  const std::string dir = ::testing::TempDir() + "/other";
  std::ostringstream sink;
  ASSERT_TRUE(RunExperiment(Small(dir, 4), QuietRunOptions(&sink)).ok());
  Experiment changed = Small(dir, 4);
  changed.mutable_train()->set_lr(5e-4);
  EXPECT_THAT(RunExperiment(changed, QuietRunOptions(&sink)).status().message(),
              HasSubstr("holds a different experiment"));
  // More steps change the learning-rate schedule, so they are a different experiment too.
  EXPECT_THAT(RunExperiment(Small(dir, 6), QuietRunOptions(&sink)).status().message(),
              HasSubstr("different experiment"));
  // Evaluation settings do not change the trained state: a rerun with other eval lengths is fine.
  Experiment more_eval = Small(dir, 4);
  more_eval.mutable_eval()->add_lengths(18);
  more_eval.mutable_eval()->set_allow_longer_than_training_rows(true);
  EXPECT_TRUE(RunExperiment(more_eval, QuietRunOptions(&sink)).ok());
}

TEST(RunnerTest, ARunDirectoryHoldsOneExperimentEvenWhenNoPointCollides) {
  // Another variant under the same name and output_dir has points of its own, so no point directory
  // refuses it; the run directory must, or the first experiment's summary is replaced (issue 30, item 5).
  const std::string dir = ::testing::TempDir() + "/one_experiment";
  std::ostringstream sink;
  ASSERT_TRUE(RunExperiment(Small(dir, 4), QuietRunOptions(&sink)).ok());
  const std::string summary = Read(fs::path(dir) / "small" / "summary.md");
  Experiment other = Small(dir, 4);
  other.clear_variants();
  other.add_variants()->set_name("other");
  other.mutable_variants(0)->add_init()->mutable_mimetic();
  absl::Status s = RunExperiment(other, QuietRunOptions(&sink)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("holds a different experiment"));
  EXPECT_THAT(std::string(s.message()), HasSubstr("variants"));
  // --aggregate of the other experiment would overwrite the summary too.
  RunOptions agg = QuietRunOptions(&sink);
  agg.aggregate_only = true;
  EXPECT_THAT(std::string(RunExperiment(other, agg).status().message()),
              HasSubstr("holds a different experiment"));
  // A sweep axis added to the same experiment is a different experiment as well.
  Experiment swept = Small(dir, 4);
  SweepAxis* axis = swept.mutable_sweep()->add_axes();
  axis->add_fields("train.lr");
  axis->add_values("5e-4");
  EXPECT_THAT(std::string(RunExperiment(swept, QuietRunOptions(&sink)).status().message()),
              HasSubstr("sweep"));
  EXPECT_EQ(Read(fs::path(dir) / "small" / "summary.md"), summary);
  // More seeds, other evaluation settings and another output_dir spelling are the same experiment.
  Experiment more = Small(dir, 4);
  more.set_output_dir(dir + "/.");
  more.add_seeds(7);
  more.mutable_eval()->add_lengths(18);
  more.mutable_eval()->set_allow_longer_than_training_rows(true);
  EXPECT_TRUE(RunExperiment(more, QuietRunOptions(&sink)).ok());
  // A sweep that ran on a GPU (its sweep.textproto says device "cuda") is judged here under the same
  // config on the CPU: --aggregate accepts it and draws the same summary from its points.
  const fs::path sweep = fs::path(dir) / "small" / "sweep.textproto";
  const std::string cpu_sweep = Read(sweep);
  const std::string judged = Read(fs::path(dir) / "small" / "summary.md");
  {
    std::ofstream out(sweep);
    out << cpu_sweep << "device: \"cuda\"\n";
  }
  RunOptions judge = QuietRunOptions(&sink);
  judge.aggregate_only = true;
  ASSERT_TRUE(RunExperiment(more, judge).ok());
  EXPECT_EQ(Read(fs::path(dir) / "small" / "summary.md"), judged);
  // resume: false starts the directory afresh with the other experiment, as it does a point.
  other.set_resume(false);
  EXPECT_TRUE(RunExperiment(other, QuietRunOptions(&sink)).ok());
}

TEST(RunnerTest, ResumeFalseMovesTheEarlierRunAsideInsteadOfPickingItUp) {
  const std::string dir = ::testing::TempDir() + "/fresh";
  std::ostringstream sink;
  RunOptions budget = QuietRunOptions(&sink);
  budget.step_budget = 3;
  ASSERT_TRUE(RunExperiment(Small(dir, 8), budget).ok());
  Experiment fresh = Small(dir, 8);
  fresh.set_resume(false);
  ExperimentSummary s = RunExperiment(fresh, QuietRunOptions(&sink)).value();
  EXPECT_EQ(s.runs[0].losses.size(), 8u);  // trained from step 0, not from the old checkpoint
  EXPECT_THAT(sink.str(), HasSubstr("moved the earlier run"));
}

TEST(RunnerTest, UnwritableOutputDirectoryFailsBeforeTraining) {
  const std::string file = ::testing::TempDir() + "/a_file";
  std::ofstream(file) << "x";
  std::ostringstream sink;
  absl::Status s = RunExperiment(Small(file + "/sub", 12), QuietRunOptions(&sink)).status();
  EXPECT_THAT(s.message(), HasSubstr("output_dir"));
  EXPECT_EQ(sink.str().find("step"), std::string::npos);
}

TEST(RunnerTest, CudaWithoutABackendOrGpuIsAClearErrorBeforeTraining) {
  Experiment e = Small(::testing::TempDir() + "/cuda", 12);
  e.set_device("cuda");
  std::ostringstream sink;
  absl::Status s = RunExperiment(e, QuietRunOptions(&sink)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("device: \"cuda\" was requested"));
  EXPECT_THAT(s.message(), HasSubstr("run_cuda"));
  EXPECT_EQ(sink.str().find("step"), std::string::npos);
}

Experiment LrSweep(const std::string& dir) {
  Experiment e = Small(dir, 6);
  e.clear_variants();
  e.add_variants()->set_name("mimetic");
  e.mutable_variants(0)->add_init()->mutable_mimetic();
  e.add_seeds(2);
  SweepAxis* axis = e.mutable_sweep()->add_axes();
  axis->add_fields("train.lr");
  axis->add_values("1e-3");
  axis->add_values("5e-4");
  return e;
}

TEST(RunnerTest, APartlyFinishedSweepResumesToTheSameResultsAsAnUninterruptedOne) {
  const std::string full = ::testing::TempDir() + "/sweep_full", part = ::testing::TempDir() + "/sweep_part";
  std::ostringstream sink;
  ExperimentSummary uninterrupted = RunExperiment(LrSweep(full), QuietRunOptions(&sink)).value();
  ASSERT_EQ(uninterrupted.grid.size(), 4u);  // 2 seeds x 2 rates
  ASSERT_EQ(uninterrupted.aggregate.groups.size(), 1u);
  EXPECT_EQ(uninterrupted.aggregate.groups[0].candidates.size(), 2u);
  EXPECT_EQ(uninterrupted.aggregate.groups[0].runs.size(), 2u);
  EXPECT_THAT(uninterrupted.table, HasSubstr("(chosen)"));
  // Finish only the first point, as if the process had been killed after it.
  Experiment e = LrSweep(part);
  ASSERT_TRUE(RunExperiment(e, QuietRunOptions(&sink)).ok());  // a complete run into `part` ...
  std::error_code ec;
  for (int i = 1; i < 4; ++i)
    fs::remove_all(fs::path(part) / "small" / uninterrupted.grid[i].dir, ec);  // ... 3 lost
  RunOptions agg = QuietRunOptions(&sink);
  agg.aggregate_only = true;
  ExperimentSummary partial = RunExperiment(e, agg).value();
  EXPECT_EQ(partial.aggregate.unfinished.size(), 3u);
  ExperimentSummary resumed = RunExperiment(e, QuietRunOptions(&sink)).value();
  EXPECT_TRUE(resumed.runs[0].losses.empty());  // finished: not rerun
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(resumed.runs[i].result.final_loss(), uninterrupted.runs[i].result.final_loss()) << i;
    EXPECT_EQ(resumed.runs[i].result.final(0).exact(), uninterrupted.runs[i].result.final(0).exact()) << i;
  }
  EXPECT_EQ(resumed.table, uninterrupted.table);
}

// A finished point read back is checked (point_result_check.h): one whose values no run could have made
// and one whose directory is a link are refused by name and left out, not counted; the others are judged.
TEST(RunnerTest, APointReadBackThatNoRunCouldHaveMadeIsRefusedByNameAndLeftOut) {
  const std::string dir = ::testing::TempDir() + "/sweep_refused";
  std::ostringstream sink;
  Experiment e = LrSweep(dir);
  ExperimentSummary full = RunExperiment(e, QuietRunOptions(&sink)).value();
  ASSERT_EQ(full.grid.size(), 4u);
  const fs::path run = fs::path(dir) / "small";
  const fs::path edited = run / full.grid[1].dir / "result.textproto";
  std::string text = Read(edited);
  text.replace(text.find("exact: "), 7, "exact: 7");
  std::ofstream(edited) << text;
  const fs::path linked = run / full.grid[2].dir, elsewhere = fs::path(dir + "_elsewhere");
  fs::remove_all(elsewhere);
  fs::rename(linked, elsewhere);
  fs::create_directory_symlink(elsewhere, linked);
  RunOptions agg = QuietRunOptions(&sink);
  agg.aggregate_only = true;
  ExperimentSummary judged = RunExperiment(e, agg).value();
  ASSERT_EQ(judged.refused.size(), 2u);
  EXPECT_EQ(judged.refused[0].dir, full.grid[1].dir);
  EXPECT_THAT(judged.refused[0].why, HasSubstr(edited.string() + "': final[0].exact is 7"));
  EXPECT_THAT(judged.refused[1].why, HasSubstr("is a symbolic link"));
  EXPECT_FALSE(judged.runs[1].finished);
  EXPECT_FALSE(judged.runs[2].finished);
  EXPECT_TRUE(judged.runs[0].finished);
  EXPECT_EQ(judged.aggregate.unfinished.size(), 2u);
  EXPECT_THAT(judged.table, HasSubstr("Refused (2; not counted above)"));
  // Training again does not run over a refused result: it stops naming it (rerunning would not fix it).
  RunOptions two = QuietRunOptions(&sink);
  two.jobs = 2;
  absl::Status again = RunExperiment(e, two).status();
  EXPECT_TRUE(absl::IsDataLoss(again)) << again;
  EXPECT_THAT(again.message(), HasSubstr("final[0].exact is 7"));
}

TEST(RunnerTest, AggregateOverADirectoryWithoutARunIsAClearError) {
  std::ostringstream sink;
  RunOptions agg = QuietRunOptions(&sink);
  agg.aggregate_only = true;
  EXPECT_THAT(RunExperiment(Small(::testing::TempDir() + "/nothing_here", 4), agg).status().message(),
              HasSubstr("holds no sweep"));
  // A directory that exists but where nothing was run or submitted holds no sweep either.
  const std::string empty = ::testing::TempDir() + "/empty_run";
  fs::create_directories(fs::path(empty) / "small");
  absl::Status s = RunExperiment(Small(empty, 4), agg).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("holds no sweep (no sweep.textproto)"));
}

TEST(RunnerTest, JobsRunPointsInChildProcessesWithTheSameResultsAsOneThreadInProcess) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  const std::string self = std::string(srcdir) + "/mimetic/mimetic/experiments/run";
  ASSERT_TRUE(fs::exists(self)) << self;
  std::ostringstream sink;
  SetThreadCount(1);
  ExperimentSummary in_process =
      RunExperiment(Small(::testing::TempDir() + "/jobs1", 6), QuietRunOptions(&sink)).value();
  RunOptions jobs = QuietRunOptions(&sink);
  jobs.jobs = 2;
  jobs.cores = 2;
  jobs.self = self;
  ExperimentSummary children = RunExperiment(Small(::testing::TempDir() + "/jobs2", 6), jobs).value();
  ASSERT_EQ(children.runs.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(children.runs[i].finished) << sink.str();
    EXPECT_EQ(children.runs[i].result.threads(), 1);
    EXPECT_EQ(children.runs[i].result.final_loss(), in_process.runs[i].result.final_loss());
    EXPECT_EQ(children.runs[i].result.final(1).token(), in_process.runs[i].result.final(1).token());
  }
  EXPECT_THAT(sink.str(), HasSubstr("2 at a time, 1 thread each"));
  // More jobs than cores: capped at the cores, and said (it used to start 2 one-thread children on 1).
  std::ostringstream capped_log;
  RunOptions capped = jobs;
  capped.progress = &capped_log;
  capped.cores = 1;
  ExperimentSummary one_core = RunExperiment(Small(::testing::TempDir() + "/jobs_capped", 6), capped).value();
  ASSERT_EQ(one_core.runs.size(), 2u);
  EXPECT_EQ(one_core.runs[0].result.final_loss(), in_process.runs[0].result.final_loss());
  EXPECT_THAT(capped_log.str(),
              HasSubstr("--jobs=2 is more than the 1 core this process may use: running 1 at a time"));
  EXPECT_THAT(capped_log.str(), HasSubstr("1 at a time, 1 thread each"));
  RunOptions zero = jobs;
  zero.jobs = 0;
  EXPECT_THAT(RunExperiment(Small(::testing::TempDir() + "/jobs0", 6), zero).status().message(),
              HasSubstr("--jobs=0"));
}

// --points trains a slice of the grid: in process, in --jobs children and on Slurm the others are left
// unfinished, and a later run with another slice trains them; the summaries cover every finished point.
TEST(RunnerTest, PointsTrainsOnlyTheMatchingGridPointsInProcessInChildrenAndOnSlurm) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  const std::string dir = ::testing::TempDir() + "/points_filter";
  Experiment e = Small(dir, 4);
  e.clear_seeds();
  e.add_seeds(1);
  e.add_seeds(2);
  std::ostringstream sink;
  RunOptions first = QuietRunOptions(&sink);
  first.points = "seed1$";
  ExperimentSummary s1 = RunExperiment(e, first).value();
  ASSERT_EQ(s1.runs.size(), 4u);
  for (const RunResult& r : s1.runs) {
    EXPECT_EQ(r.finished, r.point.seed == 1) << r.point.dir;
    EXPECT_EQ(fs::exists(fs::path(dir) / "small" / r.point.dir / "result.textproto"), r.point.seed == 1);
  }
  EXPECT_THAT(sink.str(), HasSubstr("--points=seed1$: training at most 2 of 4 grid points"));
  // On Slurm only the selected unfinished points are submitted (a dry run: nothing is written).
  RunOptions slurm = QuietRunOptions(&sink);
  slurm.launcher = RunOptions::Launcher::kSlurm;
  slurm.slurm.dry_run = true;
  slurm.points = "^points/mimetic/";
  ExperimentSummary submitted = RunExperiment(e, slurm).value();
  ASSERT_TRUE(submitted.submitted.has_value());
  EXPECT_EQ(submitted.submitted->points, 1);  // mimetic seed 2; mimetic seed 1 has finished
  // Children (--jobs) train the second slice; the first slice is not trained again.
  RunOptions jobs = QuietRunOptions(&sink);
  jobs.jobs = 2;
  jobs.cores = 2;
  jobs.self = std::string(srcdir) + "/mimetic/mimetic/experiments/run";
  jobs.points = "seed2";
  ExperimentSummary s2 = RunExperiment(e, jobs).value();
  for (const RunResult& r : s2.runs) {
    EXPECT_TRUE(r.finished) << r.point.dir << sink.str();
    if (r.point.seed == 1) {
      EXPECT_EQ(r.result.seconds(), s1.runs[r.point.index].result.seconds());
    }
  }
  EXPECT_THAT(sink.str(), HasSubstr("running 2 of 4 grid points"));
  // A regex matching no point is an error naming it and some of the grid's points, as is one that
  // does not parse.
  RunOptions none = QuietRunOptions(&sink);
  none.points = "seed3$";
  absl::Status s = RunExperiment(e, none).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("--points=seed3$ matches none of the grid's 4 point directories"));
  EXPECT_THAT(s.message(), HasSubstr("points/default/seed1"));
  none.points = "seed(";
  EXPECT_THAT(RunExperiment(e, none).status().message(), HasSubstr("is not a regular expression"));
}

}  // namespace
}  // namespace mimetic::experiments
