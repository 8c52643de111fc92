#include "mimetic/experiments/runner/slurm_launcher.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/dir_lock.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/runner/runner.h"
#include "mimetic/init/registry.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// A 4-point sweep (2 variants x 2 seeds) that trains in well under a second.
Experiment Sweep(const std::string& output_dir) {
  Experiment e = ParseExperiment(R"pb(
                   name: "tiny"
                   model {
                     vocab_size: 12
                     d_model: 8
                     n_layer: 1
                     default_layer { mamba2 { d_state: 4 headdim: 4 } }
                   }
                   variants { name: "default" }
                   variants {
                     name: "mimetic"
                     init { mimetic {} }
                   }
                   task { copy { vocab: 8 min_len: 2 max_len: 4 context_len: 16 } }
                   train { steps: 4 batch_size: 2 eval_every: 2 checkpoint_every: 2 log_every: 2 }
                   eval {
                     lengths: [ 4 ]
                     batch_size: 4
                     num_batches: 1
                     final_batches: 1
                   }
                   seeds: [ 1, 2 ]
                 )pb")
                     .value();
  e.set_output_dir(output_dir);
  return e;
}

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The #SBATCH lines of a script, in order.
std::vector<std::string> SbatchLines(const std::string& script) {
  std::vector<std::string> out;
  for (absl::string_view line : absl::StrSplit(script, '\n')) {
    if (absl::StartsWith(line, "#SBATCH ")) out.emplace_back(line);
  }
  return out;
}

std::string Fresh(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/slurm_" + name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// An executable shell script at `path`.
void WriteScript(const fs::path& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/bash\n" << body;
  fs::permissions(path, fs::perms::owner_all);
}

RunOptions SlurmRun(std::ostream* progress) {
  RunOptions o;
  o.progress = progress;
  o.plots = false;
  o.launcher = RunOptions::Launcher::kSlurm;
  o.self = "/bin/true";  // copied into the run directory as the elements' binary
  return o;
}

TEST(SlurmLauncherTest, DryRunOfACpuSweepPrintsItsSbatchLinesAndWritesNothing) {
  const std::string out = Fresh("dry_cpu");
  std::ostringstream progress;
  RunOptions o = SlurmRun(&progress);
  o.slurm.dry_run = true;
  o.slurm.partition = "cpu";
  o.slurm.account = "lab";
  o.slurm.time = "2:00:00";
  o.slurm.cpus_per_task = 4;
  o.slurm.mem = "8G";
  o.slurm.throttle = 2;
  o.slurm.extra = {"--qos=long", "#SBATCH --mail-type=END,FAIL"};
  ExperimentSummary s = RunExperiment(Sweep(out), o).value();
  ASSERT_TRUE(s.submitted.has_value());
  const std::string run_dir = core::AbsolutePath(out) + "/tiny";
  EXPECT_THAT(SbatchLines(s.submitted->script),
              ElementsAre("#SBATCH --job-name=mimetic-tiny", "#SBATCH --array=0-3%2",
                          "#SBATCH --output=" + run_dir + "/slurm/%A_%a.out", "#SBATCH --ntasks=1",
                          "#SBATCH --partition=cpu", "#SBATCH --account=lab", "#SBATCH --time=2:00:00",
                          "#SBATCH --cpus-per-task=4", "#SBATCH --mem=8G", "#SBATCH --qos=long",
                          "#SBATCH --mail-type=END,FAIL"));
  // The element runs grid point $SLURM_ARRAY_TASK_ID of the saved sweep with the binary's copy.
  EXPECT_THAT(s.submitted->script, HasSubstr("binary=" + run_dir + "/slurm/true\n"));
  EXPECT_THAT(s.submitted->script,
              HasSubstr("exec \"$binary\" --point_of=\"$run_dir/sweep.textproto\" "
                        "--point=\"$SLURM_ARRAY_TASK_ID\" --threads=\"$threads\" --noplots"));
  EXPECT_THAT(s.submitted->script, HasSubstr("  points/mimetic/seed2  # 3\n"));
  EXPECT_EQ(s.submitted->job_id, "");
  EXPECT_EQ(s.submitted->script_path, run_dir + "/slurm.sbatch");
  EXPECT_THAT(SubmissionMessage(*s.submitted, "tiny", true), HasSubstr("#SBATCH --array=0-3%2"));
  EXPECT_FALSE(fs::exists(run_dir));  // a dry run writes nothing
}

// Validating a point experiment builds its variants' init transforms to try them on a narrow model (and
// samples every eval length): this transform counts how often a config builds it.
std::atomic<int64_t> counted_builds{0};
MIMETIC_REGISTER_INIT_TRANSFORM(CountedBuilds, [] {
  init::TransformInfo info;
  info.name = "counted_builds";
  info.doc = "test only: leaves the model as it is and counts how many times it is built";
  info.make_layer = [](const init::Params&) -> absl::StatusOr<init::LayerTransform> {
    ++counted_builds;
    return init::LayerTransform(
        "counted_builds",
        [](const init::Model& m, int, core::Key) -> absl::StatusOr<init::Model> { return m; });
  };
  return info;
});

// How many times a dry-run submission of Sweep() with seeds 1..`seeds` validates its "mimetic" variant; the
// config goes through a file, as a user's does.
int64_t ValidationsToSubmit(int seeds) {
  Experiment e = Sweep(Fresh(absl::StrCat("seeds", seeds)));
  e.mutable_variants(1)->add_init()->mutable_named()->set_name("counted_builds");
  e.clear_seeds();
  for (int s = 1; s <= seeds; ++s) e.add_seeds(s);
  const std::string path = e.output_dir() + "/config.textproto";
  std::ofstream(path) << OneLineText(e);
  std::ostringstream progress;
  RunOptions o = SlurmRun(&progress);
  o.slurm.dry_run = true;
  const int64_t before = counted_builds;
  Experiment loaded = LoadExperiment(path, {}).value();
  ExperimentSummary s = RunExperiment(loaded, o).value();
  EXPECT_EQ(s.grid.size(), 2u * seeds);
  EXPECT_EQ(s.submitted->points, 2 * seeds);
  return counted_builds - before;
}

// Seeds do not change what is valid: a submission validates each configuration (variant and axis values)
// a fixed number of times, so its work grows with the seed count only by listing the points. Validating
// every point made a 50,000-seed dry run take 38 s and a 200,000-seed one minutes (issue 30).
TEST(SlurmLauncherTest, ASubmissionValidatesEachConfigurationNotEachSeed) {
  const int64_t two_seeds = ValidationsToSubmit(2);
  EXPECT_GT(two_seeds, 0);
  EXPECT_EQ(ValidationsToSubmit(1000), two_seeds);
}

TEST(SlurmLauncherTest, A200kSeedSweepIsCheckedAndListedWithinTheTestsTimeout) {
  const int64_t two_seeds = ValidationsToSubmit(2);
  EXPECT_EQ(ValidationsToSubmit(200000), two_seeds);
}

TEST(SlurmLauncherTest, DryRunOfAGpuSweepAsksForOneGpuPerElement) {
  const std::string out = Fresh("dry_gpu");
  Experiment e = Sweep(out);
  e.set_device("cuda");
  std::ostringstream progress;
  RunOptions o = SlurmRun(&progress);
  o.slurm.dry_run = true;
  o.slurm.partition = "gpu";
  o.slurm.time = "1-00:00:00";
  ExperimentSummary s = RunExperiment(e, o).value();
  const std::string run_dir = core::AbsolutePath(out) + "/tiny";
  EXPECT_THAT(SbatchLines(s.submitted->script),
              ElementsAre("#SBATCH --job-name=mimetic-tiny", "#SBATCH --array=0-3",
                          "#SBATCH --output=" + run_dir + "/slurm/%A_%a.out", "#SBATCH --ntasks=1",
                          "#SBATCH --partition=gpu", "#SBATCH --time=1-00:00:00", "#SBATCH --gres=gpu:1"));
  // This test binary has no CUDA backend: the preview says a submission would be refused.
  EXPECT_THAT(progress.str(), HasSubstr("no CUDA backend"));
  // An explicit count wins, and a CPU sweep asks for no GPU.
  o.slurm.gpus = 2;
  EXPECT_THAT(RunExperiment(e, o).value().submitted->script, HasSubstr("#SBATCH --gres=gpu:2\n"));
  o.slurm.gpus = -1;
  EXPECT_THAT(RunExperiment(Sweep(out), o).value().submitted->script, Not(HasSubstr("--gres")));
}

TEST(SlurmLauncherTest, ArraySpecCompressesRunsAndAppendsTheThrottle) {
  EXPECT_EQ(ArraySpec({0, 1, 2, 3}, 0), "0-3");
  EXPECT_EQ(ArraySpec({1, 3, 4, 5, 9}, 0), "1,3-5,9");
  EXPECT_EQ(ArraySpec({7}, 3), "7%3");
}

TEST(SlurmLauncherTest, BadOptionsAreClearErrors) {
  EXPECT_EQ(SlurmMemoryBytes("8G").value(), int64_t{8} << 30);
  EXPECT_EQ(SlurmMemoryBytes("512").value(), int64_t{512} << 20);
  EXPECT_THAT(SlurmMemoryBytes("8 GB").status().message(), HasSubstr("expected a size"));
  EXPECT_THAT(SlurmMemoryBytes("lots").status().message(), HasSubstr("--slurm_mem='lots'"));
  SlurmOptions o;
  o.partition = "a b";
  EXPECT_THAT(ValidateSlurmOptions(o).message(), HasSubstr("--slurm_partition='a b' holds whitespace"));
  o = SlurmOptions();
  o.extra = {"qos=long"};
  EXPECT_THAT(ValidateSlurmOptions(o).message(), HasSubstr("is not an sbatch option"));
  o = SlurmOptions();
  o.throttle = -1;
  EXPECT_THAT(ValidateSlurmOptions(o).message(), HasSubstr("--slurm_throttle=-1"));
  // Each element must fit in the memory it asks for.
  std::ostringstream progress;
  RunOptions run = SlurmRun(&progress);
  run.slurm.dry_run = true;
  run.slurm.mem = "1K";
  EXPECT_THAT(RunExperiment(Sweep(Fresh("mem")), run).status().message(),
              HasSubstr("--slurm_mem=1K per element: grid point points/default/seed1 needs about"));
}

// Fake Slurm client tools in a directory that becomes the whole PATH for one test.
class FakeSlurmTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* path = std::getenv("PATH");
    saved_path_ = path != nullptr ? path : "";
    bin_ = Fresh(std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_bin");
    setenv("PATH", bin_.c_str(), 1);
  }
  void TearDown() override { setenv("PATH", saved_path_.c_str(), 1); }

  // sbatch that records its arguments in `calls` and answers with `body`.
  void FakeSbatch(const std::string& body) {
    WriteScript(fs::path(bin_) / "sbatch", absl::StrCat("echo \"$@\" >> ", bin_, "/calls\n", body));
  }
  std::string Calls() { return Read(fs::path(bin_) / "calls"); }

  std::string saved_path_, bin_;
};

TEST_F(FakeSlurmTest, NoSbatchOnPathIsAClearErrorAndCreatesNothing) {
  const std::string out = Fresh("no_sbatch");
  std::ostringstream progress;
  absl::Status s = RunExperiment(Sweep(out), SlurmRun(&progress)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("'sbatch' was not found on PATH"));
  EXPECT_THAT(s.message(), HasSubstr("--launcher=local"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "tiny"));
}

TEST_F(FakeSlurmTest, SubmitsWithParsableAndReturnsTheJobId) {
  const std::string out = Fresh("submit");
  FakeSbatch("echo 'sbatch: warning: a warning on stderr' >&2\necho '4242;cluster1'\n");
  std::ostringstream progress;
  ExperimentSummary s = RunExperiment(Sweep(out), SlurmRun(&progress)).value();
  ASSERT_TRUE(s.submitted.has_value());
  EXPECT_EQ(s.submitted->job_id, "4242");
  EXPECT_EQ(s.submitted->array, "0-3");
  const fs::path run_dir = fs::path(core::AbsolutePath(out)) / "tiny";
  EXPECT_EQ(Calls(), "--parsable " + (run_dir / "slurm.sbatch").string() + "\n");
  EXPECT_EQ(Read(run_dir / "slurm.sbatch"), s.submitted->script);
  EXPECT_TRUE(fs::exists(run_dir / "sweep.textproto"));
  EXPECT_TRUE(fs::exists(run_dir / "slurm/true"));  // the binary's copy
  EXPECT_THAT(Read(run_dir / "slurm/submissions.txt"), HasSubstr(" job 4242 array 0-3\n"));
  EXPECT_THAT(SubmissionMessage(*s.submitted, "tiny", false), HasSubstr("submitted Slurm job 4242"));
}

TEST_F(FakeSlurmTest, ASecondSubmissionWhileTheFirstArrayIsActiveIsRefused) {
  const std::string out = Fresh("active");
  FakeSbatch("echo 4242\n");
  std::ostringstream progress;
  ASSERT_TRUE(RunExperiment(Sweep(out), SlurmRun(&progress)).ok());
  // squeue lists the sweep's array (and another job of the same name elsewhere): refused.
  WriteScript(fs::path(bin_) / "squeue", "[[ \"$*\" == *--name=mimetic-tiny* ]] && printf '77\\n4242\\n'\n");
  absl::Status s = RunExperiment(Sweep(out), SlurmRun(&progress)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("Slurm job 4242 of this sweep is still queued or running"));
  EXPECT_THAT(s.message(), HasSubstr("scancel 4242"));
  // Once it has left the queue, resubmitting is allowed.
  WriteScript(fs::path(bin_) / "squeue", "echo 77\n");
  EXPECT_TRUE(RunExperiment(Sweep(out), SlurmRun(&progress)).ok());
  const std::string calls = Calls();
  EXPECT_EQ(std::count(calls.begin(), calls.end(), '\n'), 2);  // sbatch ran twice, not three times
}

TEST_F(FakeSlurmTest, ASubmissionIsRefusedWhileAnotherProcessWritesTheRunDirectory) {
  const std::string out = Fresh("locked");
  FakeSbatch("echo 4242\n");
  const fs::path run_dir = fs::path(core::AbsolutePath(out)) / "tiny";
  fs::create_directories(run_dir);
  // A local run of the same sweep holds the directory (here: this process, through a second lock).
  absl::StatusOr<core::DirLock> held = core::DirLock::Acquire(run_dir.string());
  ASSERT_TRUE(held.ok()) << held.status();
  std::ostringstream progress;
  absl::Status s = RunExperiment(Sweep(out), SlurmRun(&progress)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("pid"));
  EXPECT_EQ(Calls(), "");  // sbatch never ran
  EXPECT_FALSE(fs::exists(run_dir / "sweep.textproto"));
}

TEST_F(FakeSlurmTest, ARejectedScriptShowsSbatchsMessage) {
  const std::string out = Fresh("rejected");
  FakeSbatch(
      "echo 'sbatch: error: Batch job submission failed: Invalid account or account/partition "
      "combination specified' >&2\nexit 1\n");
  std::ostringstream progress;
  RunOptions o = SlurmRun(&progress);
  o.slurm.account = "nobody";
  absl::Status s = RunExperiment(Sweep(out), o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(s.message(), HasSubstr("sbatch rejected"));
  EXPECT_THAT(s.message(), HasSubstr("nothing was submitted"));
  EXPECT_THAT(s.message(), HasSubstr("Invalid account or account/partition combination specified"));
}

TEST_F(FakeSlurmTest, AnUnknownPartitionIsRefusedNamingTheClustersPartitions) {
  const std::string out = Fresh("partition");
  FakeSbatch("echo 1\n");
  WriteScript(fs::path(bin_) / "sinfo", "printf 'debug\\ngpu\\n'\n");
  std::ostringstream progress;
  RunOptions o = SlurmRun(&progress);
  o.slurm.partition = "gpus";
  absl::Status s = RunExperiment(Sweep(out), o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("no partition 'gpus'; its partitions (sinfo) are: debug, gpu"));
  EXPECT_FALSE(fs::exists(fs::path(bin_) / "calls"));  // sbatch was not called
  o.slurm.partition = "gpu";
  EXPECT_TRUE(RunExperiment(Sweep(out), o).ok());
  // Without sinfo, sbatch judges the partition and its message is shown.
  fs::remove(fs::path(bin_) / "sinfo");
  FakeSbatch("echo 'sbatch: error: invalid partition specified: gpus' >&2\nexit 1\n");
  o.slurm.partition = "gpus";
  EXPECT_THAT(RunExperiment(Sweep(out), o).status().message(),
              HasSubstr("invalid partition specified: gpus"));
}

TEST_F(FakeSlurmTest, ACudaSweepFromABinaryWithoutTheCudaBackendIsRefusedBeforeSubmitting) {
  FakeSbatch("echo 1\n");
  Experiment e = Sweep(Fresh("cuda"));
  e.set_device("cuda");
  std::ostringstream progress;
  absl::Status s = RunExperiment(e, SlurmRun(&progress)).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("run_cuda"));
  EXPECT_FALSE(fs::exists(fs::path(bin_) / "calls"));
}

TEST_F(FakeSlurmTest, ResubmissionRunsOnlyUnfinishedPointsAndLeavesFinishedOnesAlone) {
  const std::string out = Fresh("resubmit");
  std::ostringstream progress;
  RunOptions local;
  local.progress = &progress;
  local.plots = false;
  ExperimentSummary done = RunExperiment(Sweep(out), local).value();
  const fs::path run_dir = core::AbsolutePath(done.run_dir);
  // Points 1 and 2 unfinished: one never started, one stopped at its step-2 checkpoint.
  fs::remove_all(run_dir / done.grid[1].dir);
  fs::remove(run_dir / done.grid[2].dir / "result.textproto");
  const std::string kept = Read(run_dir / done.grid[0].dir / "result.textproto");
  FakeSbatch("echo 7\n");
  ExperimentSummary s = RunExperiment(Sweep(out), SlurmRun(&progress)).value();
  EXPECT_EQ(s.submitted->array, "1-2");
  EXPECT_THAT(SbatchLines(s.submitted->script), testing::Contains("#SBATCH --array=1-2"));
  EXPECT_EQ(Read(run_dir / done.grid[0].dir / "result.textproto"), kept);
  // The aggregate lists what has not finished.
  RunOptions aggregate = local;
  aggregate.aggregate_only = true;
  EXPECT_THAT(RunExperiment(Sweep(out), aggregate).value().aggregate.unfinished,
              ElementsAre(done.grid[1].dir, done.grid[2].dir));
  // With everything finished there is nothing to submit.
  ASSERT_TRUE(RunExperiment(Sweep(out), local).ok());
  ExperimentSummary none = RunExperiment(Sweep(out), SlurmRun(&progress)).value();
  EXPECT_THAT(none.submitted->array, IsEmpty());
  EXPECT_EQ(none.submitted->job_id, "");
  EXPECT_THAT(SubmissionMessage(*none.submitted, "tiny", false), HasSubstr("nothing was submitted"));
  EXPECT_EQ(Calls(), "--parsable " + (run_dir / "slurm.sbatch").string() + "\n");  // once
}

// The script itself, run by bash as Slurm would run element K: it trains grid point K into its own
// directory with the copied binary, and an element of a finished point exits 0 at once.
TEST_F(FakeSlurmTest, AnElementOfTheScriptRunsItsGridPoint) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  const std::string run = std::string(srcdir) + "/mimetic/mimetic/experiments/run";
  ASSERT_TRUE(fs::exists(run)) << run;
  FakeSbatch("echo 9\n");
  std::ostringstream progress;
  RunOptions o = SlurmRun(&progress);
  o.self = run;
  ExperimentSummary s = RunExperiment(Sweep(Fresh("element")), o).value();
  const fs::path point = fs::path(s.run_dir) / s.grid[3].dir;
  auto element = [&](int k) {
    return core::RunProgram({"/usr/bin/env", "PATH=/usr/bin:/bin", absl::StrCat("SLURM_ARRAY_TASK_ID=", k),
                             "bash", s.submitted->script_path})
        .value();
  };
  core::ProgramResult first = element(3);
  ASSERT_EQ(first.exit_code, 0) << first.output << Read(point / "progress.log");
  EXPECT_THAT(first.output, HasSubstr("grid point 3: points/mimetic/seed2"));
  EXPECT_TRUE(fs::exists(point / "result.textproto")) << Read(point / "progress.log");
  EXPECT_FALSE(fs::exists(fs::path(s.run_dir) / s.grid[0].dir / "result.textproto"));
  const std::string log = Read(point / "progress.log");
  EXPECT_EQ(element(3).exit_code, 0);
  EXPECT_EQ(Read(point / "progress.log"), log);  // finished: nothing trained, nothing logged
  // Run by hand without an index, it says what is missing.
  core::ProgramResult by_hand = core::RunProgram({"/usr/bin/env", "-u", "SLURM_ARRAY_TASK_ID",
                                                  "PATH=/usr/bin:/bin", "bash", s.submitted->script_path})
                                    .value();
  EXPECT_NE(by_hand.exit_code, 0);
  EXPECT_THAT(by_hand.output, HasSubstr("SLURM_ARRAY_TASK_ID: is unset: submit this script with sbatch"));
}

}  // namespace
}  // namespace mimetic::experiments
