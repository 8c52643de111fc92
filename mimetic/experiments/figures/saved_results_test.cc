#include "mimetic/experiments/figures/saved_results.h"

#include <filesystem>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Fresh(const std::string& name) {
  const std::string d = ::testing::TempDir() + "/" + name;
  fs::remove_all(d);
  return d;
}

void Put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  ASSERT_TRUE(core::WriteTextFile(p.string(), text).ok()) << p;
}

// The files under `dir`, relative, sorted.
std::set<std::string> Files(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) out.insert(fs::relative(e.path(), dir).string());
  }
  return out;
}

// A finished run directory of two points, with the files a run leaves that are not kept.
std::string FakeRun(const std::string& name) {
  const fs::path run = Fresh(name);
  Put(run / "sweep.textproto", "name: \"fig1\"");
  Put(run / "claims.md", "| verdict |");
  Put(run / "claims.json", "[]");
  Put(run / "summary.md", "table");
  Put(run / "figure.gp", "plot");
  for (const char* p : {"points/mimetic/seed1", "points/default/seed1"}) {
    Put(run / p / "result.textproto", "steps: 2");
    Put(run / p / "final_maps.pb", "maps");
    Put(run / p / "checkpoints/step_00000002.safetensors", "weights");
    Put(run / p / "metrics.jsonl", "{}");
    Put(run / p / "tb/events.out", "events");
  }
  return run.string();
}

TEST(SavedResultsTest, KeepsTheSmallFilesOnlyAndRunMd) {
  const std::string run = FakeRun("run_a"), dest = Fresh("checkout_a") + "/fig1/results/cpu";
  ASSERT_TRUE(SaveResults(run, dest, "# how\n").ok());
  EXPECT_EQ(Files(dest), (std::set<std::string>{
                             "sweep.textproto", "claims.md", "claims.json", "run.md",
                             "points/mimetic/seed1/result.textproto", "points/mimetic/seed1/final_maps.pb",
                             "points/default/seed1/result.textproto", "points/default/seed1/final_maps.pb"}));
  EXPECT_EQ(core::ReadTextFile(dest + "/run.md").value(), "# how\n");
}

TEST(SavedResultsTest, ReplacesOlderResultsWhollyAndKeepsThemWhenTheRunIsNotJudged) {
  const std::string run = FakeRun("run_b"), dest = Fresh("checkout_b") + "/results/cpu";
  Put(fs::path(dest) / "points/stale/seed9/result.textproto", "old");
  ASSERT_TRUE(SaveResults(run, dest, "new").ok());
  EXPECT_FALSE(fs::exists(fs::path(dest) / "points/stale"));  // a point no longer in the sweep goes
  // A run directory that was never drawn and judged has nothing to save: refused, the saved ones stay.
  fs::remove(fs::path(run) / "claims.md");
  absl::Status s = SaveResults(run, dest, "newer");
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("has no claims.md (run or --aggregate the figure there first)"));
  EXPECT_EQ(core::ReadTextFile(dest + "/run.md").value(), "new");
}

TEST(SavedResultsTest, RestoresIntoARunDirectoryAndNeverOverwritesARealRun) {
  const std::string run = FakeRun("run_c"), saved = Fresh("checkout_c");
  ASSERT_TRUE(SaveResults(run, saved, "how").ok());
  const std::string restored = Fresh("restored_c");
  ASSERT_TRUE(RestoreResults(saved, restored).ok());
  EXPECT_TRUE(fs::exists(fs::path(restored) / "points/mimetic/seed1/final_maps.pb"));
  EXPECT_TRUE(fs::exists(fs::path(restored) / "sweep.textproto"));
  ASSERT_TRUE(RestoreResults(saved, restored).ok());  // its own earlier copy is replaced
  // The real run directory (no marker) is refused and left as it was.
  absl::Status s = RestoreResults(saved, run);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("exists and was not made from saved results; not replacing it"));
  EXPECT_TRUE(fs::exists(fs::path(run) / "points/mimetic/seed1/checkpoints/step_00000002.safetensors"));
  absl::Status none = RestoreResults(Fresh("nothing_saved"), Fresh("restored_d"));
  EXPECT_TRUE(absl::IsNotFound(none)) << none;
  EXPECT_THAT(none.message(), HasSubstr("run the figure with --save_results"));
}

// A stand-in teacher's run directory inside the figure's (Figs. 10, 11) is kept as a run directory is, with
// its final weights but no checkpoints, and restored with the rest; a folder that is no run directory is not.
TEST(SavedResultsTest, KeepsARunDirectoryInsideTheRunWithItsWeights) {
  const std::string run = FakeRun("run_t"), dest = Fresh("checkout_t") + "/results/cpu";
  const fs::path teacher = fs::path(run) / "teacher";
  Put(teacher / "sweep.textproto", "name: \"teacher\"");
  Put(teacher / "summary.csv", "variant");
  Put(teacher / "teacher.safetensors", "weights");
  Put(teacher / "points/mimetic/seed1/result.textproto", "steps: 3");
  Put(teacher / "points/mimetic/seed1/checkpoints/step_00000003.safetensors", "weights");
  Put(fs::path(run) / "plots/loss.png", "png");
  ASSERT_TRUE(SaveResults(run, dest, "how").ok());
  const std::set<std::string> kept = Files(dest);
  EXPECT_TRUE(kept.count("teacher/sweep.textproto"));
  EXPECT_TRUE(kept.count("teacher/summary.csv"));
  EXPECT_TRUE(kept.count("teacher/points/mimetic/seed1/result.textproto"));
  EXPECT_TRUE(kept.count("teacher/teacher.safetensors"));
  EXPECT_FALSE(kept.count("teacher/points/mimetic/seed1/checkpoints/step_00000003.safetensors"));
  EXPECT_FALSE(kept.count("plots/loss.png"));
  const std::string restored = Fresh("restored_t");
  ASSERT_TRUE(RestoreResults(dest, restored).ok());
  EXPECT_EQ(core::ReadTextFile(restored + "/teacher/points/mimetic/seed1/result.textproto").value(),
            "steps: 3");
}

// Kept results are anyone's (a clone, a GPU machine's points): a result that is a link to a file outside
// (the attack: it overwrote ~/.bashrc) is refused, on restore and on save, and nothing is written
// outside; a link loop is refused, not walked until the copy aborts.
TEST(SavedResultsTest, RefusesLinksAndLoopsAndWritesNothingOutside) {
  const fs::path home = Fresh("home_l");
  Put(home / ".bashrc", "precious");
  const std::string run = FakeRun("run_l"), saved = Fresh("checkout_l") + "/results/cpu";
  ASSERT_TRUE(SaveResults(run, saved, "how").ok());
  const fs::path result = fs::path(saved) / "points/default/seed1/result.textproto";
  fs::remove(result);
  fs::create_symlink(fs::relative(home / ".bashrc", result.parent_path()), result);
  const std::string restored = Fresh("restored_l");
  fs::remove_all(restored);
  absl::Status s = RestoreResults(saved, restored);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("points/default/seed1/result.textproto' is a symbolic link; expected a "
                                     "plain file"));
  EXPECT_FALSE(fs::exists(restored));
  EXPECT_FALSE(fs::exists(restored + ".restoring"));
  // --save_results from a run directory holding the link: refused, the saved results stay as they were.
  const fs::path run_result = fs::path(run) / "points/default/seed1/result.textproto";
  fs::remove(run_result);
  fs::create_symlink(home / ".bashrc", run_result);
  s = SaveResults(run, Fresh("checkout_l2") + "/results/cpu", "how");
  EXPECT_THAT(s.message(), HasSubstr("is a symbolic link"));
  EXPECT_EQ(core::ReadTextFile((home / ".bashrc").string()).value(), "precious");
  // A loop: points/default/loop -> .. (it holds points/, which would be entered forever).
  fs::remove(result);
  Put(result, "steps: 2");
  fs::create_directory_symlink("..", fs::path(saved) / "points/default/loop");
  s = RestoreResults(saved, restored);
  EXPECT_THAT(s.message(), HasSubstr("points/default/loop' is a symbolic link"));
  EXPECT_FALSE(fs::exists(restored));
}

TEST(SavedResultsTest, RunMarkdownSaysHowTheResultsWereMade) {
  RunRecord r;
  r.figure = "fig1";
  r.preset = "cpu";
  r.command = "tools/bazel run //mimetic/experiments:fig1 -- --jobs=2";
  r.machine = "AMD EPYC, 2 cores";
  r.finished = absl::FromUnixSeconds(1795000000);
  r.points = 6;
  r.trained_here = 4;
  r.wall_seconds = 3723;
  r.training_seconds = 7200;
  r.note = "not idle";
  const std::string md = RunMarkdown(r);
  EXPECT_THAT(md, HasSubstr("- Command: `tools/bazel run //mimetic/experiments:fig1 -- --jobs=2`"));
  EXPECT_THAT(md, HasSubstr("wall time 62 min 03 s; this command trained 4 of 6 grid points (the others had "
                            "finished before it started)"));
  EXPECT_THAT(md, HasSubstr("summed over the points, each by its own clock: 120 min 00 s"));
  EXPECT_THAT(md, HasSubstr("- Machine: AMD EPYC, 2 cores"));
  EXPECT_THAT(md, HasSubstr("- Note: not idle"));
  r.aggregate_only = true;
  EXPECT_THAT(RunMarkdown(r), HasSubstr("drawn and judged from 6 grid points trained earlier"));
}

TEST(SavedResultsTest, CountsFinishedPoints) {
  const std::string run = FakeRun("run_e");
  EXPECT_EQ(CountFinishedPoints(run), 2);
  EXPECT_EQ(CountFinishedPoints(Fresh("empty_e")), 0);
}

}  // namespace
}  // namespace mimetic::experiments
