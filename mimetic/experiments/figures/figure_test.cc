#include "mimetic/experiments/figures/figure.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/memory_estimate.h"
#include "mimetic/experiments/config/room.h"
#include "mimetic/init/checkpoint_names.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

std::string Root() { return std::string(std::getenv("TEST_SRCDIR")) + "/mimetic"; }

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The :paper target at the smoke preset, end to end through the real binary: every figure's sweep,
// picture, claims and summary, then the report.
TEST(FigureTest, EverySmokeFigureAndTheReportAreWritten) {
  const std::string out = ::testing::TempDir() + "/paper_smoke";
  const std::string cmd = Root() +
                          "/mimetic/experiments/figure --figure=all --preset=smoke --output_dir=" + out +
                          " > " + out + ".log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << Read(out + ".log");
  for (const FigureDef& f : Figures()) {
    const fs::path dir = fs::path(out) / (f.id + "_smoke");
    for (const char* file : {"figure.png", "claims.md", "summary.csv", "summary.md", "sweep.textproto"}) {
      EXPECT_TRUE(fs::exists(dir / file)) << dir / file << "\n" << Read(out + ".log");
    }
    const std::string claims = Read(dir / "claims.md");
    EXPECT_THAT(claims, HasSubstr("| verdict |")) << f.id;
    EXPECT_TRUE(fs::exists(dir / "points")) << f.id;
  }
  EXPECT_TRUE(fs::exists(fs::path(out) / "paper_smoke/report.md"));
  EXPECT_TRUE(fs::exists(fs::path(out) / "paper_smoke/report.html"));
  EXPECT_THAT(Read(fs::path(out) / "paper_smoke/report.md"), HasSubstr("fig3"));
}

// --launcher=slurm --dry_run through the :paper binary: one job-array script per figure, printed;
// nothing written or submitted (sbatch need not exist).
TEST(FigureTest, SlurmDryRunOfEveryFigurePrintsOneScriptEachAndWritesNothing) {
  const std::string out = ::testing::TempDir() + "/slurm_dry";
  const std::string cmd = Root() + "/mimetic/experiments/figure --figure=all --preset=smoke " +
                          "--launcher=slurm --dry_run --slurm_partition=gpu --output_dir=" + out + " > " +
                          out + ".log 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << Read(out + ".log");
  const std::string log = Read(out + ".log");
  for (const FigureDef& f : Figures()) {
    EXPECT_THAT(log, HasSubstr("#SBATCH --job-name=mimetic-" + f.id + "_smoke\n")) << log;
  }
  EXPECT_THAT(log, HasSubstr("--point_of=\"$run_dir/sweep.textproto\""));
  EXPECT_THAT(log, HasSubstr("#SBATCH --array=0-3\n"));  // fig1: 2 variants x 2 seeds
  EXPECT_THAT(log, HasSubstr("report: once the jobs have finished"));
  EXPECT_FALSE(fs::exists(out));
}

TEST(FigureTest, BadPresetOrFigureIsAClearErrorBeforeAnyRun) {
  EXPECT_THAT(LoadPreset(Root(), "fig1", "laptop", {}).status().message(),
              HasSubstr("--preset=laptop does not exist; presets are: cpu, gpu, paper, smoke"));
  // The optional gpu preset: a figure without one names those that have it.
  const absl::Status no_gpu = LoadPreset(Root(), "fig1", "gpu", {}).status();
  EXPECT_TRUE(absl::IsNotFound(no_gpu)) << no_gpu;
  EXPECT_THAT(no_gpu.message(), HasSubstr("fig1 has no --preset=gpu"));
  EXPECT_THAT(no_gpu.message(), HasSubstr("figures with one: fig3, fig4, fig6, fig8, fig9, scaling"));
  EXPECT_TRUE(LoadPreset(Root(), "fig6", "gpu", {}).ok());
  EXPECT_THAT(FindFigure("fig99").status().message(), HasSubstr("figures are: fig1, fig2, fig3, fig4, fig5"));
  EXPECT_THAT(LoadPreset(Root(), "fig1", "smoke", {"sweep.axes[0].fields=model.nothing"}).status().message(),
              HasSubstr("out of range"));
  const std::string out = ::testing::TempDir() + "/bad";
  const std::string cmd =
      Root() + "/mimetic/experiments/figure --figure=fig1 --preset=smoke --jobs=0 --output_dir=" + out +
      " > " + out + ".log 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_THAT(Read(out + ".log"), HasSubstr("--jobs=0; expected >= 1"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "fig1_smoke"));
}

// --save_results keeps fig1's small results in a checkout; --from_results draws and judges them again
// there without training and without checkpoints: the same verdicts, the map claim's included (read from
// final_maps.pb), and the report says where they came from.
TEST(FigureTest, SavedResultsAreJudgedAgainToTheSameClaimsWithoutCheckpoints) {
  const std::string out = ::testing::TempDir() + "/saved_run", checkout = ::testing::TempDir() + "/checkout";
  const std::string fig = Root() + "/mimetic/experiments/figure --figure=fig1 --preset=smoke ";
  const std::string run = fig + "--output_dir=" + out + " --save_results --results_root=" + checkout +
                          " --results_note='smoke test' > " + out + ".log 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0) << Read(out + ".log");
  const fs::path saved = fs::path(checkout) / "mimetic/experiments/figures/fig1/results/smoke";
  for (const char* f : {"sweep.textproto", "claims.md", "claims.json", "summary.csv", "run.md",
                        "points/mimetic/seed1/result.textproto", "points/mimetic/seed1/final_maps.pb"}) {
    EXPECT_TRUE(fs::exists(saved / f)) << f;
  }
  EXPECT_FALSE(fs::exists(saved / "points/mimetic/seed1/checkpoints"));
  const std::string run_md = Read(saved / "run.md");
  EXPECT_THAT(run_md, HasSubstr("- Command: `tools/bazel run //mimetic/experiments:fig1 -- --preset=smoke "
                                "--output_dir=" +
                                out + "`"));
  EXPECT_THAT(run_md, HasSubstr("this command trained 4 of 4 grid points"));
  EXPECT_THAT(run_md, HasSubstr("- Note: smoke test"));

  const std::string again_out = ::testing::TempDir() + "/from_saved";
  const std::string again = fig + "--output_dir=" + again_out + " --from_results --results_root=" + checkout +
                            " > " + again_out + ".log 2>&1";
  ASSERT_EQ(std::system(again.c_str()), 0) << Read(again_out + ".log");
  const std::string claims = Read(fs::path(again_out) / "from_results/fig1_smoke/claims.json");
  EXPECT_EQ(claims, Read(fs::path(out) / "fig1_smoke/claims.json"));
  EXPECT_THAT(claims, HasSubstr("fig1.maps"));
  EXPECT_THAT(claims, Not(HasSubstr("maps need the final checkpoints")));
  // A figure with nothing saved is named, not fatal, when others have results.
  const std::string both = Root() + "/mimetic/experiments/figure --figure=fig1,fig9 --preset=smoke " +
                           "--output_dir=" + again_out + " --from_results --results_root=" + checkout +
                           " > " + again_out + ".log 2>&1";
  EXPECT_NE(std::system(both.c_str()), 0);
  EXPECT_THAT(Read(again_out + ".log"), HasSubstr("skipped: fig9: no saved results at"));

  // A hostile clone of those results. A result that could not have been made (exact 7) is refused by name
  // and the figure says on which points it stands, its verdicts provisional.
  const fs::path hostile = fs::path(::testing::TempDir()) / "hostile";
  const fs::path kept = hostile / "mimetic/experiments/figures/fig1/results/smoke";
  fs::remove_all(hostile);
  fs::create_directories(kept.parent_path());
  fs::copy(saved, kept, fs::copy_options::recursive);
  const fs::path bad = kept / "points/mimetic/seed1/result.textproto";
  std::string text = Read(bad);
  text.replace(text.find("exact: "), 7, "exact: 7");  // the first final accuracy, 7 followed by its digits
  std::ofstream(bad) << text;
  const std::string judge = fig + "--output_dir=" + again_out + " --from_results --results_root=" +
                            hostile.string() + " > " + again_out + ".log 2>&1";
  ASSERT_EQ(std::system(judge.c_str()), 0) << Read(again_out + ".log");
  const std::string md = Read(fs::path(again_out) / "from_results/fig1_smoke/claims.md");
  EXPECT_THAT(md, HasSubstr("- Points judged: 3 of 4 grid points: the verdicts are **provisional**"));
  EXPECT_THAT(md, HasSubstr("points/mimetic/seed1/result.textproto': final[0].exact is 7"));
  EXPECT_THAT(md, HasSubstr("(provisional) |"));
  // The same result as a link to a file outside: refused, the file untouched, no crash, nothing judged.
  const fs::path precious = hostile / "bashrc";
  std::ofstream(precious) << "precious";
  fs::remove(bad);
  fs::create_symlink(fs::relative(precious, bad.parent_path()), bad);
  ASSERT_TRUE(fs::exists(bad));  // the link reaches it
  EXPECT_NE(std::system(judge.c_str()), 0);
  EXPECT_THAT(Read(again_out + ".log"), HasSubstr("result.textproto' is a symbolic link"));
  EXPECT_EQ(Read(precious), "precious");
  // A results folder committed as a link out of the checkout: neither read nor written through.
  fs::remove_all(kept);
  fs::create_directory_symlink(hostile, kept);
  EXPECT_NE(std::system(judge.c_str()), 0);
  EXPECT_THAT(Read(again_out + ".log"), HasSubstr("results/smoke' is a symbolic link"));
}

// Fig. 10 trains a stand-in teacher first: its saved results keep the teacher's sweep, result and weights
// (not its checkpoints), and --from_results draws and judges them elsewhere to the same claims, byte for byte
// (the teacher's weights count by their place in the run directory, not their absolute path).
TEST(FigureTest, AFigureWithAStandInTeacherIsJudgedAgainFromSavedResults) {
  const std::string out = ::testing::TempDir() + "/teacher_run",
                    checkout = ::testing::TempDir() + "/t_checkout";
  const std::string fig = Root() + "/mimetic/experiments/figure --figure=fig10 --preset=smoke ";
  const std::string run =
      fig + "--output_dir=" + out + " --save_results --results_root=" + checkout + " > " + out + ".log 2>&1";
  ASSERT_EQ(std::system(run.c_str()), 0) << Read(out + ".log");
  const fs::path saved = fs::path(checkout) / "mimetic/experiments/figures/fig10/results/smoke";
  EXPECT_TRUE(fs::exists(saved / "teacher/sweep.textproto"));
  EXPECT_TRUE(fs::exists(saved / "teacher/points/pretrain/seed1/result.textproto"));
  EXPECT_TRUE(fs::exists(saved / "teacher/teacher.safetensors"));
  EXPECT_FALSE(fs::exists(saved / "teacher/points/pretrain/seed1/checkpoints"));
  EXPECT_THAT(Read(saved / "claims.md"),
              HasSubstr("weights: teacher/teacher.safetensors in the run directory"));

  const std::string again_out = ::testing::TempDir() + "/teacher_from_saved";
  const std::string again = fig + "--output_dir=" + again_out + " --from_results --results_root=" + checkout +
                            " > " + again_out + ".log 2>&1";
  ASSERT_EQ(std::system(again.c_str()), 0) << Read(again_out + ".log");
  const fs::path judged = fs::path(again_out) / "from_results/fig10_smoke";
  EXPECT_EQ(Read(judged / "claims.md"), Read(fs::path(out) / "fig10_smoke/claims.md"));
  EXPECT_EQ(Read(judged / "claims.json"), Read(fs::path(out) / "fig10_smoke/claims.json"));
}

// The paper's stated settings (its §5 and the figure captions; the settings it leaves open are the
// project's documented defaults), compared field by field with each paper preset.
struct PaperSettings {
  std::string figure;
  int n_layer, d_model, steps, seeds, train_len;
  std::vector<int> eval_lengths;
  std::string mixer;  // of the default layer
  int d_state;
};

TEST(FigureTest, PaperPresetsMatchThePapersSettings) {
  const std::vector<PaperSettings> table = {
      {"fig1", 4, 512, 5000, 5, 50, {50, 100}, "mamba2", 128},
      {"fig2", 8, 512, 5000, 5, 50, {50, 100}, "mamba2", 128},
      {"fig3", 24, 1024, 5000, 10, 50, {50, 100, 300}, "mamba2", 0},  // the arch axis sets both
      {"fig4", 8, 512, 5000, 5, 50, {50, 100}, "mamba2", 128},
      {"fig5", 8, 512, 5000, 5, 50, {50, 100, 200}, "mamba2", 32},
      {"fig6", 2, 1024, 5000, 5, 50, {50, 100, 200}, "mamba2", 0},         // the arch axis sets the mixer
      {"fig8", 2, 1024, 5000, 5, 50, {50, 100, 256, 512}, "mamba2", 128},  // the axes set width and depth
      {"fig7", 2, 1024, 5000, 5, 50, {50, 100, 150, 200}, "mamba2", 0},    // the N axis sets the state
      // The transfer paper states no copy setting: the mimetic paper's copy setup in the transfer's shape.
      {"transfer", 4, 512, 5000, 5, 50, {50, 100}, "mamba2", 64},
  };
  for (const PaperSettings& p : table) {
    SCOPED_TRACE(p.figure);
    Experiment e = LoadPreset(Root(), p.figure, "paper", {}).value();
    EXPECT_EQ(e.model().n_layer(), p.n_layer);
    EXPECT_EQ(e.model().d_model(), p.d_model);
    EXPECT_EQ(e.train().steps(), p.steps);
    EXPECT_EQ(e.seeds_size(), p.seeds);
    EXPECT_EQ(e.task().copy().max_len(), p.train_len);
    EXPECT_EQ(std::vector<int>(e.eval().lengths().begin(), e.eval().lengths().end()), p.eval_lengths);
    // Training rows hold the longest eval example, as in the paper's pipeline.
    EXPECT_FALSE(e.eval().allow_longer_than_training_rows());
    EXPECT_GE(TrainingRowTokens(e.task()).value(), ExampleTokens(e.task(), p.eval_lengths.back()).value());
    if (p.d_state > 0) {
      EXPECT_EQ(e.model().default_layer().mamba2().d_state(), p.d_state);
      EXPECT_EQ(e.model().default_layer().mamba2().headdim(), 64);
    }
    // The learning-rate sweep {1e-3, 5e-4, 1e-4}.
    bool lr = false;
    for (const SweepAxis& a : e.sweep().axes()) {
      if (a.fields(0) == "train.lr") {
        lr = true;
        EXPECT_THAT(a.values(), ::testing::ElementsAre("1e-3", "5e-4", "1e-4"));
      }
    }
    EXPECT_TRUE(lr);
  }
}

TEST(FigureTest, PaperPresetsOfSweptFiguresMatchThePapersSettings) {
  // Fig. 6: Mamba 1 with state 32, Mamba 2 with state 128 and head dim 64, V up to 512, L = 50 and 100.
  Experiment fig6 = LoadPreset(Root(), "fig6", "paper", {}).value();
  std::vector<GridPoint> grid6 = ExpandGrid(fig6).value();
  EXPECT_EQ(grid6.size(), 2u * 2 * 5 * 2 * 3 * 5);
  Experiment p6 = PointExperiment(fig6, grid6[0]).value();
  EXPECT_EQ(p6.model().layers(0).mamba1().d_state(), 32);
  EXPECT_EQ(p6.model().vocab_size(), 26 + 4);  // sized to the task
  // Fig. 9: the 1024-dim 2-layer Mamba 2, copy and MQAR at training lengths past the paper's limits.
  Experiment fig9 = LoadPreset(Root(), "fig9", "paper", {}).value();
  EXPECT_EQ(fig9.model().d_model(), 1024);
  EXPECT_EQ(fig9.model().n_layer(), 2);
  EXPECT_EQ(fig9.model().default_layer().mamba2().headdim(), 64);
  EXPECT_THAT(fig9.sweep().axes(0).value_names(),
              ::testing::ElementsAre("copy500", "copy1000", "copy2000", "copy4000", "mqar500", "mqar1000",
                                     "mqar2000", "mqar4000"));
  // Each copy point's rows hold its own 2L example (the longer lengths are evaluated but not read).
  for (const std::string& value : fig9.sweep().axes(0).values()) {
    TaskSpec task;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(value.substr(1, value.size() - 2), &task))
        << value;
    if (!task.has_copy()) continue;
    EXPECT_GE(TrainingRowTokens(task).value(), ExampleTokens(task, 2 * task.copy().max_len()).value())
        << value;
  }
  // γ-init ("Achilles' heel of Mamba" App. C.1, D): Mamba 2 of width 32, state 128, expand 2, one head,
  // depth 2..6, AdamW weight decay 0.01, lr 2.5e-4 cosine to 1e-5, batch 2048, 200 epochs of 300 000.
  Experiment gamma = LoadPreset(Root(), "gamma", "paper", {}).value();
  EXPECT_EQ(gamma.model().d_model(), 32);
  EXPECT_EQ(gamma.model().default_layer().mamba2().d_state(), 128);
  EXPECT_EQ(gamma.model().default_layer().mamba2().headdim(), 64);  // d_inner 64: one head
  EXPECT_EQ(gamma.model().default_layer().mamba2().expand(), 2);
  EXPECT_EQ(gamma.train().batch_size(), 2048);
  EXPECT_EQ(gamma.train().steps(), (200 * 300000 + 2047) / 2048);  // rounded up
  EXPECT_EQ(gamma.train().weight_decay(), 0.01);
  EXPECT_EQ(gamma.train().lr(), 2.5e-4);
  EXPECT_EQ(gamma.train().schedule(), "cosine");
  EXPECT_DOUBLE_EQ(gamma.train().lr() * gamma.train().final_lr_fraction(), 1e-5);
  EXPECT_EQ(gamma.seeds_size(), 3);
  EXPECT_THAT(gamma.sweep().axes(1).values(), ::testing::ElementsAre("2", "3", "4", "5", "6"));
  EXPECT_EQ(gamma.task().composite().seq_len(), 8);
  EXPECT_TRUE(gamma.eval().task().composite().only_unseen_pair());
  // Fig. 7: Mamba 2 with head dim 64 and N from 16 (<= 32, as the paper says) up to 512.
  Experiment fig7 = LoadPreset(Root(), "fig7", "paper", {}).value();
  EXPECT_EQ(fig7.model().default_layer().mamba2().headdim(), 64);
  EXPECT_THAT(fig7.sweep().axes(0).values(), ::testing::ElementsAre("16", "32", "64", "128", "256", "512"));
  // The transfer: attention heads x head dim = the Mamba 2's d_inner = ngroups x d_state (expand 1),
  // attention at layers 1 and 3 of the teacher, which trains as long as the students.
  Experiment transfer = LoadPreset(Root(), "transfer", "paper", {}).value();
  const models::Mamba2Spec& m2 = transfer.model().default_layer().mamba2();
  EXPECT_EQ(m2.expand(), 1);
  const Experiment& teacher = transfer.teacher();
  ASSERT_EQ(teacher.model().layer_overrides_size(), 2);
  for (const models::LayerOverride& o : teacher.model().layer_overrides()) {
    EXPECT_EQ(o.layer().attention().num_heads() * o.layer().attention().head_dim(),
              transfer.model().d_model());
    EXPECT_EQ(o.layer().attention().num_heads(), m2.ngroups());
    EXPECT_EQ(o.layer().attention().head_dim(), m2.d_state());
    // Llama's attention has no biases, and the Mamba 2 in_proj/out_proj it maps to has no place for them.
    EXPECT_FALSE(o.layer().attention().qkv_bias());
    EXPECT_FALSE(o.layer().attention().out_bias());
  }
  EXPECT_EQ(teacher.train().steps(), 5000);
  EXPECT_EQ(teacher.task().copy().max_len(), 50);
  EXPECT_THAT(transfer.variants(0).init(1).layers(), ::testing::ElementsAre(1, 3));
  // Fig. 3: Mamba 1 with state 32, Mamba 2 with state 128 and head dim 64, c = 8, b = 0.54, 16 combinations.
  Experiment fig3 = LoadPreset(Root(), "fig3", "paper", {}).value();
  std::vector<GridPoint> grid = ExpandGrid(fig3).value();
  EXPECT_EQ(grid.size(), 2u * 16 * 3 * 10);
  Experiment m1 = PointExperiment(fig3, grid[0]).value();
  EXPECT_EQ(m1.model().layers(0).mamba1().d_state(), 32);
  EXPECT_EQ(m1.variants(0).init(0).mimetic().c(), 8.0);  // exact: a double
  EXPECT_NEAR(m1.variants(0).init(0).mimetic().delta_bias(), 0.5413, 1e-4);
}

TEST(FigureTest, PaperPresetsRunAFewStepsOnTheCpu) {
  for (const FigureDef& f : Figures()) {
    SCOPED_TRACE(f.id);
    // Figs. 10 and 11 read the published mamba-130m / mamba-370m files, which a test cannot download:
    // PretrainedFiguresSayWhatToFetch checks their presets up to the file instead.
    if (f.id == "fig10" || f.id == "fig11") continue;
    const std::string out = ::testing::TempDir() + "/paper_steps";
    Experiment e =
        LoadPreset(Root(), f.id, "paper",
                   {"output_dir=" + out, "train.steps=1", "train.batch_size=1", "eval.batch_size=1",
                    "eval.num_batches=1", "eval.final_batches=1", "train.eval_every=1"})
            .value();
    std::ostringstream sink;
    if (e.has_teacher()) {
      // A teacher stage trains first (one step here) and the sweep reads its file.
      for (const std::string& set :
           {"teacher.train.steps=1", "teacher.train.batch_size=1", "teacher.eval.batch_size=1",
            "teacher.eval.num_batches=1", "teacher.eval.final_batches=1", "teacher.train.eval_every=1"}) {
        ASSERT_TRUE(ApplyOverride(set, &e).ok()) << set;
      }
      RunOptions o;
      o.progress = &sink;
      o.plots = false;
      e = PrepareTeacher(e, o).value().experiment;
    }
    std::vector<GridPoint> grid = ExpandGrid(e).value();
    Experiment one = PointExperiment(e, grid[0]).value();
    RunResult r =
        RunPoint(one, grid[0], out + "/" + f.id + "/" + grid[0].dir, PointOptions{&sink, false, 0}).value();
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.losses.size(), 1u);
  }
}

// An unvalidated preset (one reading a published checkpoint fails validation without the file).
Experiment RawPreset(const std::string& figure, const std::string& preset) {
  return ParseExperiment(Read(fs::path(Root()) / PresetPath(figure, preset))).value();
}

// Figs. 10 and 11 (§6): mamba-130m fine-tuned on copy and MQAR of 50-token strings vs mimetic from scratch;
// 12-layer students from each of mamba-370m's 48 layers, maps on a 26-token string.
TEST(FigureTest, PretrainedFigurePresetsMatchThePapersSettings) {
  Experiment fig10 = RawPreset("fig10", "paper");
  models::ModelSpec m130 = models::ResolveSpec(fig10.model()).value();
  google::protobuf::util::MessageDifferencer same;
  same.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
  EXPECT_TRUE(same.Compare(m130, models::PretrainedSpec("state-spaces/mamba-130m").value()));
  EXPECT_EQ(fig10.variants(0).init(0).pretrained().name(), "state-spaces/mamba-130m");
  EXPECT_TRUE(fig10.variants(1).init(0).has_mimetic());
  EXPECT_THAT(fig10.sweep().axes(0).value_names(), ::testing::ElementsAre("copy50", "mqar50"));
  EXPECT_THAT(fig10.eval().lengths(), ::testing::ElementsAre(50, 100));
  EXPECT_EQ(fig10.train().steps(), 5000);
  EXPECT_EQ(fig10.seeds_size(), 5);
  EXPECT_THAT(fig10.sweep().axes(1).values(), ::testing::ElementsAre("1e-3", "5e-4", "1e-4"));
  Experiment fig11 = RawPreset("fig11", "paper");
  models::ModelSpec student = models::ResolveSpec(fig11.model()).value();
  models::ModelSpec m370 = models::PretrainedSpec("state-spaces/mamba-370m").value();
  EXPECT_EQ(m370.layers_size(), 48);
  EXPECT_EQ(student.layers_size(), 12);
  EXPECT_EQ(student.d_model(), m370.d_model());
  EXPECT_TRUE(same.Compare(student.layers(0), m370.layers(0)));
  EXPECT_EQ(fig11.variants(0).init(0).transplant().name(), "state-spaces/mamba-370m");
  EXPECT_EQ(fig11.variants(0).init(0).layers_size(), 0);  // every student layer
  EXPECT_EQ(fig11.sweep().axes(0).values_size(), 48);
  EXPECT_EQ(fig11.sweep().axes(0).values(31), "31");
  EXPECT_EQ(fig11.eval().map_length(), 26);
  EXPECT_EQ(fig11.task().copy().max_len(), 50);
}

// Without --pretrained the paper presets of Figs. 10 and 11 stop before training and say which file to
// fetch from where; with a file of another model they name it and the first tensor that does not fit.
TEST(FigureTest, PretrainedFiguresSayWhatToFetch) {
  const std::string out = ::testing::TempDir() + "/pretrained";
  for (const std::string& figure : {std::string("fig10"), std::string("fig11")}) {
    const std::string log = out + "_" + figure + ".log";
    const std::string cmd = Root() + "/mimetic/experiments/figure --figure=" + figure +
                            " --preset=paper --output_dir=" + out + " > " + log + " 2>&1";
    EXPECT_NE(std::system(cmd.c_str()), 0);
    const std::string name = figure == "fig10" ? "state-spaces/mamba-130m" : "state-spaces/mamba-370m";
    EXPECT_THAT(Read(log), ::testing::AllOf(HasSubstr("no checkpoint file given for " + name),
                                            HasSubstr("https://huggingface.co/" + name),
                                            HasSubstr("pytorch_model.bin"), HasSubstr("--pretrained=")));
  }
  // A small checkpoint in mamba_ssm names, of another model.
  const std::string small = out + "_small.safetensors";
  models::ModelSpec spec =
      models::ParseModelSpec("vocab_size: 36 d_model: 16 n_layer: 2 default_layer { mamba1 { d_state: 4 } }")
          .value();
  init::Model m = init::MakeModel(spec, init::DefaultInit(), core::Key::FromSeed(1)).value();
  ASSERT_TRUE(init::WriteMambaCheckpoint(small, m.params).ok());
  const std::string log = out + "_shape.log";
  const std::string cmd = Root() +
                          "/mimetic/experiments/figure --figure=fig10 --preset=paper --pretrained=" + small +
                          " --output_dir=" + out + " > " + log + " 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  EXPECT_THAT(Read(log),
              ::testing::AllOf(HasSubstr(small), HasSubstr("embedding/weight"), HasSubstr("shape")));
  // A flag no preset of this figure uses is refused.
  const std::string unused =
      Root() + "/mimetic/experiments/figure --figure=fig1 --preset=smoke --pretrained=" + small +
      " --output_dir=" + out + " > " + log + " 2>&1";
  EXPECT_NE(std::system(unused.c_str()), 0);
  EXPECT_THAT(Read(log), HasSubstr("has no init entry of a published model"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "fig10_paper"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "fig1_smoke"));
}

// Asked for several figures (`all` on a GPU without the published files), the ones that need a file are
// skipped with the same message before anything runs, the others go ahead, and the exit status says
// that something was left out. The Slurm dry run stands in for the paper-sized training.
TEST(FigureTest, SeveralFiguresSkipThoseWhosePublishedFileIsMissing) {
  const std::string out = ::testing::TempDir() + "/skip";
  const std::string log = out + ".log";
  const std::string cmd = Root() +
                          "/mimetic/experiments/figure --figure=fig10,gamma --preset=paper --launcher=slurm "
                          "--dry_run --output_dir=" +
                          out + " > " + log + " 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);
  const std::string text = Read(log);
  EXPECT_THAT(text, ::testing::AllOf(HasSubstr("skipped: fig10 --preset=paper"),
                                     HasSubstr("https://huggingface.co/state-spaces/mamba-130m")));
  EXPECT_LT(text.find("skipped: fig10"), text.find("== "));  // named before anything runs
  EXPECT_THAT(text, HasSubstr("sbatch"));                    // gamma went ahead (its script)
  EXPECT_FALSE(fs::exists(fs::path(out) / "fig10_paper"));
  // Only figures that need a file: nothing can run.
  const std::string both =
      Root() + "/mimetic/experiments/figure --figure=fig10,fig11 --preset=paper --output_dir=" + out + " > " +
      log + " 2>&1";
  EXPECT_NE(std::system(both.c_str()), 0);
  EXPECT_THAT(Read(log), HasSubstr("no figure can run"));
}

// Claims on synthetic results: a run where the paper's Fig. 1 claims hold, and one where they fail.
RunResult Synthetic(const std::string& variant, uint64_t seed, double exact_l, double exact_2l,
                    int64_t reach_step) {
  RunResult r;
  r.point.variant = variant;
  r.point.seed = seed;
  r.point.dir = "points/" + variant + "/seed" + std::to_string(seed);
  r.finished = true;
  for (int64_t step : {100, 200, 300, 400, 500, 600, 700, 800}) {
    EvalPoint* p = r.result.add_curve();
    p->set_step(step);
    for (auto [len, x] : {std::pair<int, double>{25, exact_l}, {50, exact_2l}}) {
      LengthAccuracy* a = p->add_accuracy();
      a->set_length(len);
      a->set_exact(step >= reach_step ? x : 0.0);
    }
  }
  for (auto [len, x] : {std::pair<int, double>{25, exact_l}, {50, exact_2l}}) {
    LengthAccuracy* a = r.result.add_final();
    a->set_length(len);
    a->set_exact(x);
  }
  return r;
}

std::map<std::string, Verdict> Fig1Verdicts(double default_l, double default_2l, double mimetic_2l,
                                            int64_t reach) {
  FigureRun run;
  run.preset = "cpu";
  run.experiment = LoadPreset(Root(), "fig1", "cpu", {"eval.lengths=[25, 50]"}).value();
  for (uint64_t seed : {1, 2, 3}) {
    run.summary.runs.push_back(Synthetic("default", seed, default_l, default_2l, 100));
    run.summary.runs.push_back(Synthetic("mimetic", seed, 1.0, mimetic_2l + 0.01 * seed, reach));
  }
  run.summary.aggregate = AggregateRuns(run.experiment, run.summary.runs);
  std::map<std::string, Verdict> out;
  const std::vector<Claim> claims = FindFigure("fig1").value()->claims(run).value();
  for (const Claim& c : claims) out[c.id] = c.verdict;
  return out;
}

TEST(FigureTest, Fig1ClaimsOnSyntheticResultsReproducedAndFailed) {
  std::map<std::string, Verdict> good = Fig1Verdicts(0.1, 0.0, 0.8, 300);
  EXPECT_EQ(good["fig1.default_plateaus"], Verdict::kReproduced);
  EXPECT_EQ(good["fig1.mimetic_2x"], Verdict::kReproduced);
  EXPECT_EQ(good["fig1.few_hundred_steps"], Verdict::kReproduced);
  EXPECT_EQ(good["fig1.maps"], Verdict::kNotTested);  // no checkpoints behind synthetic results
  std::map<std::string, Verdict> bad = Fig1Verdicts(0.9, 0.6, 0.2, 800);
  EXPECT_EQ(bad["fig1.default_plateaus"], Verdict::kNotReproduced);
  EXPECT_EQ(bad["fig1.mimetic_2x"], Verdict::kNotReproduced);
  EXPECT_EQ(bad["fig1.few_hundred_steps"], Verdict::kNotReproduced);
  std::map<std::string, Verdict> late = Fig1Verdicts(0.1, 0.0, 0.8, 800);
  EXPECT_EQ(late["fig1.few_hundred_steps"], Verdict::kPartly);
}

}  // namespace
}  // namespace mimetic::experiments

namespace mimetic::experiments {
namespace {

TEST(FigureTest, AModelTheMachineCannotHoldIsRefusedBeforeAnyRun) {
  const std::string out = ::testing::TempDir() + "/too_big";
  Experiment e = LoadPreset(Root(), "fig3", "paper", {"output_dir=" + out}).value();
  RunOptions o;
  o.max_memory_bytes = int64_t{16} << 30;  // a 16 GiB laptop
  absl::Status s = RunExperiment(e, o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("needs about"));
  EXPECT_THAT(s.message(), HasSubstr("M parameters"));
  EXPECT_FALSE(fs::exists(fs::path(out) / "fig3_paper"));
  // The cpu preset fits easily.
  std::vector<GridPoint> grid = ExpandGrid(LoadPreset(Root(), "fig1", "cpu", {}).value()).value();
  EXPECT_TRUE(CheckMemory(LoadPreset(Root(), "fig1", "cpu", {}).value(), grid, o.max_memory_bytes, 2).ok());
}

}  // namespace
}  // namespace mimetic::experiments
