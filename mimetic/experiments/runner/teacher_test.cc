#include "mimetic/experiments/runner/teacher.h"

#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/init/pretrained.h"
#include "mimetic/train/checkpoint.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kModel[] =
    "vocab_size: 12 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } }";

Experiment TwoStage(const std::string& dir) {
  const std::string common = R"pb(
    task { copy { vocab: 8 min_len: 2 max_len: 4 context_len: 16 } }
    train { steps: 3 batch_size: 2 warmup_steps: 1 eval_every: 3 checkpoint_every: 3 log_every: 1 }
    eval {
      lengths: [ 4 ]
      batch_size: 2
      num_batches: 1
      final_batches: 1
    }
    seeds: [ 1 ]
  )pb";
  absl::StatusOr<Experiment> e = ParseExperiment(absl::StrCat(
      "name: \"two_stage\" output_dir: \"", dir, "\" model { ", kModel, " }",
      "variants { name: \"pretrained\" init { pretrained { teacher: true } } }",
      "variants { name: \"t1\" init { transplant { teacher: true source_layer: 1 } } }", common,
      "teacher { name: \"teacher\" model { ", kModel,
      " } variants { name: \"mimetic\" init { mimetic { reparameterize: false } } } ", common, " }"));
  EXPECT_TRUE(e.ok()) << e.status();
  EXPECT_TRUE(ValidateExperiment(&*e).ok());
  return *e;
}

TEST(TeacherTest, TrainsTheTeacherWritesItsFileAndPointsTheEntriesAtIt) {
  const std::string dir = (fs::path(std::getenv("TEST_TMPDIR")) / "teacher").string();
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  options.plots = false;
  absl::StatusOr<PreparedTeacher> t = PrepareTeacher(TwoStage(dir), options);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->file, dir + "/two_stage/teacher/teacher.safetensors");
  EXPECT_FALSE(t->experiment.has_teacher());
  EXPECT_THAT(t->description, AllOf(HasSubstr("stand-in teacher that this target trained itself"),
                                    HasSubstr("2-layer mamba2, d_model 16"), HasSubstr("trained 3 steps"),
                                    HasSubstr("weights: teacher/teacher.safetensors in the run directory")));
  for (const Variant& v : t->experiment.variants()) {
    const CheckpointInit& c = v.init(0).has_pretrained() ? v.init(0).pretrained() : v.init(0).transplant();
    EXPECT_FALSE(c.teacher());
    EXPECT_EQ(c.path(), t->file);
    EXPECT_EQ(c.model().layers_size(), 2);
  }
  // The file is the teacher's final model, in mamba_ssm names, read back with its plain spec.
  Experiment rewritten = t->experiment;
  ASSERT_TRUE(ValidateExperiment(&rewritten).ok());
  init::Model from_file =
      init::LoadPretrained(rewritten.variants(0).init(0).pretrained().model(), t->file).value();
  train::LoadedCheckpoint last =
      train::LoadLatestCheckpoint(dir + "/two_stage/teacher/points/mimetic/seed1/checkpoints",
                                  from_file.params)
          .value();
  EXPECT_EQ(last.state.step, 3);
  for (size_t i = 0; i < from_file.params.size(); ++i) {
    EXPECT_EQ(from_file.params.Leaves()[i].ToVector<float>().value(),
              last.state.params.Leaves()[i].ToVector<float>().value())
        << from_file.params.Paths()[i];
  }
  // The pretrained variant starts as the teacher.
  absl::StatusOr<init::Transform> tr = MakeTransform(rewritten.variants(0));
  init::Model start = init::MakeModel(rewritten.model(), *tr, core::Key::FromSeed(9)).value();
  EXPECT_EQ(start.params.Get("layers/1/mixer/A_log")->ToVector<float>().value(),
            from_file.params.Get("layers/1/mixer/A_log")->ToVector<float>().value());
  // Again: the finished teacher is reused, not retrained.
  EXPECT_THAT(progress.str(), HasSubstr("eval step 3"));
  progress.str("");
  absl::StatusOr<PreparedTeacher> again = PrepareTeacher(TwoStage(dir), options);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->experiment.SerializeAsString(), t->experiment.SerializeAsString());
  EXPECT_THAT(progress.str(), ::testing::Not(HasSubstr("eval step 3")));
}

// --aggregate reuses the weights written when the teacher finished: with its checkpoints gone (as in restored
// saved results), the experiment is rewritten as before and the file is left as it was.
TEST(TeacherTest, AggregatingReusesTheWeightsWithoutCheckpoints) {
  const std::string dir = (fs::path(std::getenv("TEST_TMPDIR")) / "aggregate").string();
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  options.plots = false;
  absl::StatusOr<PreparedTeacher> trained = PrepareTeacher(TwoStage(dir), options);
  ASSERT_TRUE(trained.ok()) << trained.status();
  fs::remove_all(dir + "/two_stage/teacher/points/mimetic/seed1/checkpoints");
  const fs::file_time_type written = fs::last_write_time(trained->file);
  options.aggregate_only = true;
  absl::StatusOr<PreparedTeacher> judged = PrepareTeacher(TwoStage(dir), options);
  ASSERT_TRUE(judged.ok()) << judged.status();
  EXPECT_EQ(judged->experiment.SerializeAsString(), trained->experiment.SerializeAsString());
  EXPECT_EQ(judged->description, trained->description);
  EXPECT_EQ(fs::last_write_time(judged->file), written);
}

TEST(TeacherTest, AnUnfinishedTeacherStopsBeforeTheSweep) {
  const std::string dir = (fs::path(std::getenv("TEST_TMPDIR")) / "budget").string();
  std::ostringstream progress;
  RunOptions options;
  options.progress = &progress;
  options.plots = false;
  options.step_budget = 1;
  EXPECT_THAT(PrepareTeacher(TwoStage(dir), options).status().message(),
              AllOf(HasSubstr(dir + "/two_stage/teacher"), HasSubstr("has not finished training")));
}

TEST(TeacherTest, WithoutATeacherTheExperimentIsUnchanged) {
  Experiment e = TwoStage("/unused");
  e.clear_teacher();
  e.clear_variants();
  e.add_variants()->set_name("default");
  absl::StatusOr<PreparedTeacher> t = PrepareTeacher(e, RunOptions{});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->experiment.SerializeAsString(), e.SerializeAsString());
  EXPECT_TRUE(t->file.empty());
  EXPECT_TRUE(t->description.empty());
}

}  // namespace
}  // namespace mimetic::experiments
