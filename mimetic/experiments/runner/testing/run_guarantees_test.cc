// What a run guarantees (README "What a run guarantees"): one writer per directory, signals that
// checkpoint and exit 128+n, a full disk that fails loudly and keeps the old files. Runs the runner
// in this process and as a real process (run_test_util.h) on the tiny config (a second or two each).
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/dir_lock.h"
#include "mimetic/core/file_util.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/runner/runner.h"
#include "mimetic/experiments/runner/testing/run_test_util.h"
#include "mimetic/experiments/runner/testing/tiny_experiment.h"
#include "mimetic/experiments/runner/threads.h"
#include "mimetic/init/safetensors.h"
#include "mimetic/train/checkpoint.h"

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

TEST(LockTest, ASecondWriterOfARunDirectoryIsRefusedNamingTheHolder) {
  const std::string out = OutDir("lock_sweep");
  ASSERT_TRUE(core::MakeDirs(out + "/tiny").ok());
  absl::StatusOr<core::DirLock> held = core::DirLock::Acquire(out + "/tiny");
  ASSERT_TRUE(held.ok());
  std::ostringstream sink;
  absl::Status s = RunExperiment(Tiny(out), QuietRunOptions(&sink)).status();
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
  absl::Status s = RunExperiment(Tiny(out), QuietRunOptions(&sink)).status();
  EXPECT_THAT(s.message(), HasSubstr(point));
  EXPECT_THAT(s.message(), HasSubstr("another process"));
  EXPECT_THAT(FilesNamed(point, "step_"), IsEmpty());
  // Once the holder is gone the same command runs (the first point was finished meanwhile).
  *held = core::DirLock();
  EXPECT_TRUE(RunExperiment(Tiny(out), QuietRunOptions(&sink)).ok());
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

constexpr int kSteps = 400;

std::vector<std::string> TinyArgs(const std::string& out, std::vector<std::string> more = {}) {
  std::vector<std::string> args = {
      TinyConfig(), "--set", "output_dir=" + out, "--set", absl::StrCat("train.steps=", kSteps), "--noplots"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

const char* const kPoints[] = {"tiny/points/default/seed1", "tiny/points/mimetic/seed1"};

// An uninterrupted run with one thread per point, once for every test below.
const std::string& Reference() {
  static const std::string* out = [] {
    auto* dir = new std::string(OutDir("reference"));
    EXPECT_EQ(RunToEnd(TinyArgs(*dir, {"--threads=1"}), *dir + ".log"), 0) << ReadFile(*dir + ".log");
    return dir;
  }();
  return *out;
}

// result.textproto without the wall-clock seconds.
std::string ResultWithoutTime(const std::string& point_dir) {
  std::string text = ReadFile(point_dir + "/result.textproto");
  const size_t at = text.find("seconds:");
  if (at != std::string::npos) text.erase(at, text.find('\n', at) - at);
  return text;
}

// The `seconds:` of a PointResult text file (0 when absent).
double SecondsIn(const std::string& path) {
  const std::string text = ReadFile(path);
  const size_t at = text.find("seconds:");
  return at == std::string::npos ? 0 : std::atof(text.c_str() + at + 8);
}

// Both points finished with the reference's bits: the final checkpoint's bytes and the results.
void ExpectSameAsReference(const std::string& out) {
  const std::string last = absl::StrCat(
      "/checkpoints/step_", std::string(8 - std::to_string(kSteps).size(), '0'), kSteps, ".safetensors");
  for (const char* p : kPoints) {
    const std::string a = Reference() + "/" + p, b = out + "/" + p;
    ASSERT_TRUE(fs::exists(b + last)) << b + last;
    EXPECT_TRUE(ReadFile(a + last) == ReadFile(b + last)) << p << ": the final weights differ";
    EXPECT_EQ(ResultWithoutTime(a), ResultWithoutTime(b)) << p;
  }
}

TEST(SignalTest, SigtermFinishesTheStepCheckpointsAndExits143AndTheResumeIsBitIdentical) {
  Reference();
  const std::string out = OutDir("sigterm");
  RunProcess p = StartRun(TinyArgs(out, {"--threads=1"}), out + ".log");
  ASSERT_TRUE(WaitForText(out + ".log", "[default seed 1] step 100/", 60)) << ReadFile(out + ".log");
  ::kill(p.pid, SIGTERM);
  EXPECT_EQ(WaitRun(p), 128 + SIGTERM);
  const std::string log = ReadFile(out + ".log");
  // Said when the signal arrives, not only once the step is done (a long evaluation deferred it silently).
  EXPECT_THAT(log, HasSubstr("stop signal: finishing the current step or evaluation, then checkpointing"));
  EXPECT_THAT(log, HasSubstr("SIGTERM: checkpointed step "));
  EXPECT_THAT(log, HasSubstr("/tiny/points/default/seed1/checkpoints/step_"));
  EXPECT_THAT(log, HasSubstr("stopped by SIGTERM"));
  EXPECT_FALSE(fs::exists(out + "/" + kPoints[0] + "/result.textproto"));
  EXPECT_THAT(FilesNamed(out, ".tmp."), IsEmpty());
  // The checkpoint it names is newer than the last periodic one (every 25 steps): nothing was lost.
  const std::vector<std::string> ckpts = FilesNamed(out + "/" + kPoints[0], "step_");
  ASSERT_FALSE(ckpts.empty());
  EXPECT_THAT(log, HasSubstr(ckpts.back()));
  const double first_seconds = SecondsIn(out + "/" + kPoints[0] + "/progress.textproto");
  EXPECT_GT(first_seconds, 0);
  ASSERT_EQ(RunToEnd(TinyArgs(out, {"--threads=1"}), out + ".log"), 0) << ReadFile(out + ".log");
  ExpectSameAsReference(out);
  // The training time counts both processes.
  EXPECT_GT(SecondsIn(out + "/" + kPoints[0] + "/result.textproto"), first_seconds);
}

// SIGINT (Ctrl-C) is handled as SIGTERM is: the step finishes, a checkpoint is written and named, exit 130.
TEST(SignalTest, AFirstSigintCheckpointsNamingItAndExits130) {
  const std::string out = OutDir("sigint");
  RunProcess p = StartRun(TinyArgs(out, {"--threads=1"}), out + ".log");
  ASSERT_TRUE(WaitForText(out + ".log", "[default seed 1] step 100/", 60)) << ReadFile(out + ".log");
  ::kill(p.pid, SIGINT);
  EXPECT_EQ(WaitRun(p), 128 + SIGINT);
  const std::string log = ReadFile(out + ".log");
  EXPECT_THAT(log, HasSubstr("SIGINT: checkpointed step "));
  EXPECT_THAT(log, HasSubstr("/tiny/points/default/seed1/checkpoints/step_"));
  EXPECT_THAT(log, HasSubstr("stopped by SIGINT"));
  EXPECT_THAT(FilesNamed(out, ".tmp."), IsEmpty());
}

TEST(SignalTest, TheJobsParentPassesSigtermToItsChildrenAndWaitsForThem) {
  Reference();
  const std::string out = OutDir("sigterm_jobs");
  RunProcess p = StartRun(TinyArgs(out, {"--jobs=2", "--threads=2"}), out + ".log");
  for (const char* point : kPoints) {
    ASSERT_TRUE(WaitForText(out + "/" + point + "/progress.log", "step 50/", 60)) << point;
  }
  ::kill(p.pid, SIGTERM);
  EXPECT_EQ(WaitRun(p), 128 + SIGTERM);
  const std::string log = ReadFile(out + ".log");
  EXPECT_THAT(log, HasSubstr("stopped by SIGTERM"));
  for (const char* point : kPoints) {
    const std::string dir = out + "/" + point;
    EXPECT_THAT(ReadFile(dir + "/progress.log"), HasSubstr("SIGTERM: checkpointed step")) << point;
    // The parent waited: the child is gone, its lock free.
    EXPECT_TRUE(core::DirLock::Acquire(dir).ok()) << point;
  }
  EXPECT_THAT(FilesNamed(out, ".tmp."), IsEmpty());
  ASSERT_EQ(RunToEnd(TinyArgs(out, {"--jobs=2", "--threads=2"}), out + ".log"), 0) << ReadFile(out + ".log");
  ExpectSameAsReference(out);
}

TEST(SignalTest, ASecondSignalExitsAtOnce) {
  const std::string out = OutDir("sigint_twice");
  // Larger batches: a step takes long enough for both signals to arrive within it.
  RunProcess p =
      StartRun(TinyArgs(out, {"--threads=1", "--set", "train.batch_size=1024", "--set", "train.log_every=1"}),
               out + ".log");
  ASSERT_TRUE(WaitForText(out + ".log", "step 2/", 60)) << ReadFile(out + ".log");
  ::kill(p.pid, SIGINT);
  // Apart, or the kernel merges the two into one pending signal.
  ::usleep(50000);
  ::kill(p.pid, SIGINT);
  EXPECT_EQ(WaitRun(p), 128 + SIGINT);
  const std::string log = ReadFile(out + ".log");
  EXPECT_THAT(log, HasSubstr("second stop signal: exiting at once"));
  EXPECT_THAT(log, ::testing::Not(HasSubstr("checkpointed step")));
}

// Every regular file below `dir` and its bytes (but the lock files, which hold their last holder's pid).
std::map<std::string, std::string> Snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  for (const std::string& f : FilesNamed(dir, "")) {
    if (fs::path(f).filename() != ".lock") files[f] = ReadFile(dir + "/" + f);
  }
  return files;
}

// The files that differ between two snapshots (added, removed or changed).
std::vector<std::string> Changed(const std::map<std::string, std::string>& a,
                                 const std::map<std::string, std::string>& b) {
  std::vector<std::string> out;
  for (const auto& [name, bytes] : a) {
    auto it = b.find(name);
    if (it == b.end() || it->second != bytes) out.push_back(name);
  }
  for (const auto& [name, bytes] : b) {
    if (a.count(name) == 0) out.push_back(name);
  }
  return out;
}

TEST(DiskFullTest, ARerunOnAFullDiskFailsAndKeepsEveryFile) {
  // It used to truncate config.textproto to 0 bytes and exit 0, leaving a run that could not resume.
  const std::string out = OutDir("full_rerun");
  const std::vector<std::string> args = TinyArgs(out, {"--threads=1", "--set", "train.steps=30"});
  ASSERT_EQ(RunToEnd(args, out + ".log"), 0) << ReadFile(out + ".log");
  const std::map<std::string, std::string> before = Snapshot(out + "/tiny");
  // A disk on which no file can grow past 64 bytes (RLIMIT_FSIZE; writes fail with EFBIG).
  EXPECT_EQ(RunToEnd(args, out + ".full.log", /*file_size_limit=*/64), 1);
  EXPECT_THAT(ReadFile(out + ".full.log"), HasSubstr("File too large"));
  EXPECT_THAT(Changed(before, Snapshot(out + "/tiny")), IsEmpty());
  // With space again the same command finds every point finished.
  EXPECT_EQ(RunToEnd(args, out + ".again.log"), 0);
  EXPECT_THAT(ReadFile(out + ".again.log"), ::testing::Not(HasSubstr("step 10/")));
}

TEST(DiskFullTest, AFreshRunOnAFullDiskExitsNonZeroWithoutTornFiles) {
  const std::string out = OutDir("full_fresh");
  const std::vector<std::string> args = TinyArgs(out, {"--threads=1", "--set", "train.steps=30"});
  // Room for the small text files, not for a checkpoint.
  EXPECT_EQ(RunToEnd(args, out + ".full.log", /*file_size_limit=*/4096), 1);
  EXPECT_THAT(ReadFile(out + ".full.log"), HasSubstr("File too large"));
  EXPECT_THAT(FilesNamed(out, ".tmp."), IsEmpty());
  EXPECT_THAT(FilesNamed(out, "step_"), IsEmpty());
  EXPECT_THAT(FilesNamed(out, "result.textproto"), IsEmpty());
  for (const std::string& f : FilesNamed(out, ".textproto")) {
    EXPECT_FALSE(ReadFile(out + "/" + f).empty()) << f << " is empty";
  }
  EXPECT_EQ(RunToEnd(args, out + ".log"), 0) << ReadFile(out + ".log");
}

TEST(DiskFullTest, AFileSizeLimitBelowACheckpointFailsNamingItNotBySignal) {
  // `ulimit -f` smaller than a checkpoint: the kernel sends SIGXFSZ, whose default action killed the run
  // without a word. The runner ignores it, so the write fails with EFBIG and the error names the file.
  const std::string out = OutDir("ulimit");
  const std::vector<std::string> args = TinyArgs(
      out, {"--threads=1", "--set", "train.checkpoint_every=5", "--set", "variants=[{name: \"default\"}]"});
  std::vector<std::string> first = args;
  first.push_back("--step_budget=10");
  ASSERT_EQ(RunToEnd(first, out + ".first.log"), 0) << ReadFile(out + ".first.log");
  const std::string ckpts = out + "/tiny/points/default/seed1/checkpoints";
  const std::map<std::string, std::string> before = Snapshot(ckpts);
  ASSERT_FALSE(before.empty());
  const int64_t checkpoint_bytes = static_cast<int64_t>(before.begin()->second.size());

  const int code = RunToEnd(args, out + ".limited.log", /*file_size_limit=*/checkpoint_bytes / 2,
                            /*ignore_sigxfsz=*/false);
  const std::string log = ReadFile(out + ".limited.log");
  EXPECT_EQ(code, 1) << "128 + " << SIGXFSZ << " is death by SIGXFSZ\n" << log;
  EXPECT_THAT(log, HasSubstr("checkpoints/step_00000015.safetensors"));
  EXPECT_THAT(log, HasSubstr("File too large"));
  EXPECT_THAT(Changed(before, Snapshot(ckpts)), IsEmpty());
  EXPECT_THAT(FilesNamed(out, ".tmp."), IsEmpty());
}

// Issue 51 item 8: an attention-map PNG that cannot be written on a full disk was fatal (exit 1, no
// result), where a gnuplot plot was a warning. Now it is a warning too, and the earlier picture stays.
TEST(DiskFullTest, AnAttentionMapThatCannotBeWrittenIsAWarningAndTheOldPictureStays) {
  const std::string out = OutDir("full_maps");
  // TinyArgs less --noplots: the maps are what this is about.
  std::vector<std::string> args = {TinyConfig(), "--threads=1"};
  for (const std::string& set :
       {"output_dir=" + out, std::string("train.steps=4"), std::string("train.checkpoint_every=2"),
        std::string("variants=[{name: \"default\"}]")}) {
    args.insert(args.end(), {"--set", set});
  }
  ASSERT_EQ(RunToEnd(args, out + ".log"), 0) << ReadFile(out + ".log");
  const std::string point = out + "/tiny/points/default/seed1";
  const std::map<std::string, std::string> pictures = Snapshot(point + "/plots");
  ASSERT_EQ(pictures.size(), 4u);  // a map and a mask per layer
  // The point finishes again (final evaluation, maps, result) on a disk with room for its small text files
  // (under 1 KB) but not for a picture (each about 2.4 KB).
  ASSERT_TRUE(fs::remove(point + "/result.textproto"));
  EXPECT_EQ(RunToEnd(args, out + ".full.log", /*file_size_limit=*/2048), 0) << ReadFile(out + ".full.log");
  const std::string log = ReadFile(out + ".full.log");
  EXPECT_THAT(log, HasSubstr("warning: attention maps not written"));
  EXPECT_THAT(log, HasSubstr("_map.png"));
  EXPECT_THAT(log, HasSubstr("File too large"));
  EXPECT_THAT(Changed(pictures, Snapshot(point + "/plots")), IsEmpty());
  EXPECT_FALSE(ReadFile(point + "/result.textproto").empty());
  EXPECT_THAT(FilesNamed(out, ".tmp"), IsEmpty());
}

// A plot that gnuplot cannot draw whole (on a full disk it writes part of the image and exits 0) is a
// warning, not a failed run, and the earlier picture stays. The stand-in gnuplot on PATH writes 9 bytes.
TEST(DiskFullTest, APlotThatCannotBeDrawnWholeIsAWarningAndTheOldPictureStays) {
  const std::string out = OutDir("short_plot");
  const std::vector<std::string> sets = {"train.steps=4", "train.eval_every=2", "train.checkpoint_every=2",
                                         "variants=[{name: \"default\"}]"};
  std::ostringstream sink;
  RunOptions o = QuietRunOptions(&sink);
  o.plots = true;
  ASSERT_TRUE(RunExperiment(Tiny(out, sets), o).ok()) << sink.str();
  const std::string png = out + "/tiny/plots/accuracy_len6.png";
  const std::string drawn = ReadFile(png);
  ASSERT_FALSE(drawn.empty()) << "the real gnuplot drew no " << png << ": " << sink.str();

  const std::string bin = out + "/bin";
  fs::create_directories(bin);
  ASSERT_TRUE(core::WriteTextFile(bin + "/gnuplot",
                                  "#!/bin/sh\neval \"$2\"\nprintf 'not a png' > \"$outfile\"\nexit 0\n")
                  .ok());
  fs::permissions(bin + "/gnuplot", fs::perms::owner_all);
  const char* old_path = std::getenv("PATH");
  const std::string path = old_path != nullptr ? old_path : "/usr/bin:/bin";
  ::setenv("PATH", (bin + ":" + path).c_str(), 1);
  sink.str("");
  const absl::StatusOr<ExperimentSummary> again = RunExperiment(Tiny(out, sets), o);
  ::setenv("PATH", path.c_str(), 1);
  EXPECT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(sink.str(), HasSubstr("warning: plot not written"));
  EXPECT_EQ(ReadFile(png), drawn);
}

TEST(DivergenceTest, ANonFiniteStateIsNeverCheckpointedNorEvaluated) {
  // A state whose loss is still finite but whose update is not: a checkpoint whose first moments are the
  // largest float and second moments 0 (a checkpoint with NaN moments is refused at load). The next
  // update overflows to infinity; the loss check before it passes, so only a check of the updated state
  // can stop it from being saved and evaluated.
  const std::string out = OutDir("diverged");
  std::ostringstream sink;
  RunOptions budget = QuietRunOptions(&sink);
  budget.step_budget = 4;
  const std::vector<std::string> sets = {"train.steps=12", "train.checkpoint_every=1", "train.eval_every=2",
                                         "variants=[{name: \"default\"}]"};
  ASSERT_TRUE(RunExperiment(Tiny(out, sets), budget).ok());
  const std::string ckpts = out + "/tiny/points/default/seed1/checkpoints";
  const std::string last = ckpts + "/step_00000004.safetensors";
  std::map<std::string, std::string> metadata;
  core::ParamTree tree = init::ReadSafetensors(last, &metadata).value();
  tree = tree.MapWithPath([](const std::string& path, const core::Tensor& t) {
    const bool m = path.rfind("opt/m/", 0) == 0, v = path.rfind("opt/v/", 0) == 0;
    if (!m && !v) return t;
    const float value = m ? std::numeric_limits<float>::max() : 0.0f;
    return core::Tensor::FromHost<float>(t.shape(), std::vector<float>(t.numel(), value)).value();
  });
  metadata[train::kCheckpointDigestKey] = train::CheckpointDigest(tree, metadata);  // signed as a run would
  ASSERT_TRUE(init::WriteSafetensors(last, tree, metadata).ok());

  ExperimentSummary s = RunExperiment(Tiny(out, sets), QuietRunOptions(&sink)).value();
  ASSERT_TRUE(s.runs[0].finished);
  EXPECT_TRUE(s.runs[0].result.diverged());
  EXPECT_EQ(s.runs[0].result.final(0).exact(), 0);
  EXPECT_THAT(sink.str(), HasSubstr("values that are NaN or infinite; the last good checkpoint is kept"));
  // Nothing was saved after the planted step, and no evaluation printed an accuracy of the NaN model.
  EXPECT_THAT(FilesNamed(ckpts, "step_").back(), HasSubstr("step_00000004"));
  EXPECT_THAT(sink.str(), ::testing::Not(HasSubstr("eval step 6")));
}

TEST(DivergenceTest, ACheckpointHoldingANaNIsRefusedAtLoadNamingTheTensor) {
  // It used to load, and the point was then recorded as diverged and the run exited 0.
  const std::string out = OutDir("nan_checkpoint");
  std::ostringstream sink;
  RunOptions budget = QuietRunOptions(&sink);
  budget.step_budget = 4;
  const std::vector<std::string> sets = {"train.steps=12", "train.checkpoint_every=2",
                                         "variants=[{name: \"default\"}]"};
  ASSERT_TRUE(RunExperiment(Tiny(out, sets), budget).ok());
  const std::string last = out + "/tiny/points/default/seed1/checkpoints/step_00000004.safetensors";
  std::map<std::string, std::string> metadata;
  core::ParamTree tree = init::ReadSafetensors(last, &metadata).value();
  std::vector<float> d = tree.Get("layers/0/mixer/D").value().ToVector<float>().value();
  d[0] = std::nanf("");
  tree = tree.Replace("layers/0/mixer/D",
                      core::Tensor::FromHost<float>({static_cast<int64_t>(d.size())}, d).value())
             .value();
  metadata[train::kCheckpointDigestKey] = train::CheckpointDigest(tree, metadata);  // signed as a run would
  ASSERT_TRUE(init::WriteSafetensors(last, tree, metadata).ok());

  absl::StatusOr<ExperimentSummary> s = RunExperiment(Tiny(out, sets), QuietRunOptions(&sink));
  const std::string message = s.ok() ? "" : std::string(s.status().message());
  EXPECT_FALSE(s.ok() && s->runs[0].finished && s->runs[0].result.diverged()) << "recorded as diverged";
  EXPECT_THAT(message, HasSubstr("step_00000004.safetensors"));
  EXPECT_THAT(message, HasSubstr("'layers/0/mixer/D'"));
  EXPECT_THAT(message, HasSubstr("NaN or infinite"));
}

TEST(ThreadsTest, AResumeWithAnotherThreadCountSaysSoNamingBoth) {
  const std::string out = OutDir("threads");
  std::ostringstream first, second;
  RunOptions budget = QuietRunOptions(&first);
  budget.step_budget = 5;
  SetThreadCount(2);
  ASSERT_TRUE(RunExperiment(Tiny(out, {"train.steps=10"}), budget).ok());
  SetThreadCount(1);
  ASSERT_TRUE(RunExperiment(Tiny(out, {"train.steps=10"}), QuietRunOptions(&second)).ok());
  EXPECT_THAT(second.str(), HasSubstr("was written with 2 CPU threads and this process uses 1"));
  EXPECT_THAT(second.str(), HasSubstr("--threads=2"));
  // The same count says nothing.
  std::ostringstream third;
  const std::string same = OutDir("threads_same");
  ASSERT_TRUE(RunExperiment(Tiny(same, {"train.steps=10"}), budget).ok());
  ASSERT_TRUE(RunExperiment(Tiny(same, {"train.steps=10"}), QuietRunOptions(&third)).ok());
  EXPECT_THAT(third.str(), ::testing::Not(HasSubstr("CPU threads")));
}

TEST(EarlyStopTest, AnEarlyStoppedRunCheckpointsItsFinalWeights) {
  // Copying one token of two is learned in about ten steps.
  const std::string out = OutDir("early_stop");
  std::ostringstream sink;
  ExperimentSummary s =
      RunExperiment(Tiny(out, {"task.copy.vocab=2", "task.copy.min_len=1", "task.copy.max_len=1",
                               "eval.lengths=[1]", "train.early_stop_accuracy=0.3", "train.eval_every=2",
                               "train.steps=200", "train.checkpoint_every=50"}),
                    QuietRunOptions(&sink))
          .value();
  int stopped = 0;
  for (const RunResult& r : s.runs) {
    if (!r.result.early_stopped()) continue;
    ++stopped;
    EXPECT_LT(r.result.steps(), 200);
    const std::string last = absl::StrCat(out, "/tiny/", r.point.dir, "/checkpoints/step_",
                                          absl::StrFormat("%08d", r.result.steps()), ".safetensors");
    EXPECT_TRUE(fs::exists(last)) << last;
  }
  EXPECT_GT(stopped, 0) << sink.str();
}

}  // namespace
}  // namespace mimetic::experiments
