#include "mimetic/experiments/config/config.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

constexpr char kBase[] = R"pb(
  name: "t"
  model {
    vocab_size: 12
    d_model: 16
    n_layer: 2
    default_layer { mamba2 { d_state: 8 headdim: 8 } }
  }
  variants { name: "default" }
  variants {
    name: "mimetic"
    init { mimetic {} }
  }
  task { copy { vocab: 8 min_len: 2 max_len: 6 context_len: 32 } }
  train { steps: 10 batch_size: 4 }
  eval { lengths: [ 6, 12 ] }
  seeds: [ 1 ]
)pb";

TaskSpec ParseTaskSpec(const std::string& text) {
  TaskSpec t;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &t)) << text;
  return t;
}

absl::Status Check(const std::vector<std::string>& overrides) {
  Experiment e = ParseExperiment(kBase).value();
  for (const std::string& o : overrides) RETURN_IF_ERROR(ApplyOverride(o, &e));
  return ValidateExperiment(&e);
}

TEST(ConfigTest, TheShippedCopyConfigIsValid) {
  absl::StatusOr<Experiment> e = LoadExperiment("mimetic/experiments/configs/copy.textproto", {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->name(), "copy");
  // Kept unresolved, so that sweep axes over model fields still apply; every point resolves.
  EXPECT_EQ(e->model().layers_size(), 0);
  EXPECT_EQ(e->model().n_layer(), 2);
}

TEST(ConfigTest, EveryShippedConfigIsValid) {
  for (const char* name : {"copy", "mqar", "sort", "stack_copy_layer4", "gpu_check"}) {
    absl::StatusOr<Experiment> e =
        LoadExperiment(std::string("mimetic/experiments/configs/") + name + ".textproto", {});
    EXPECT_TRUE(e.ok()) << name << ": " << e.status();
  }
}

// The GPU check's paper-size run is Fig. 1's `paper` model, task and schedule at its first learning rate (a
// step budget stops it after 300 steps, tools/gpu/paper_check.sh), so its accuracies are the real first 300
// steps of the paper's 5000-step schedule, not those of a schedule that decays to zero at step 300.
TEST(ConfigTest, TheGpuCheckRunsFig1PapersScheduleAtItsFirstLearningRate) {
  Experiment check = LoadExperiment("mimetic/experiments/configs/gpu_check.textproto", {}).value();
  Experiment paper =
      LoadExperiment("mimetic/experiments/figures/fig1/paper.textproto", {"train.lr=1e-3"}).value();
  ASSERT_EQ(paper.sweep().axes(0).values(0), "1e-3");
  EXPECT_EQ(check.model().DebugString(), paper.model().DebugString());
  EXPECT_EQ(check.task().DebugString(), paper.task().DebugString());
  EXPECT_EQ(check.variants_size(), paper.variants_size());
  for (Experiment* e : {&check, &paper}) {  // when it evaluates, logs and checkpoints may differ
    e->mutable_train()->clear_eval_every();
    e->mutable_train()->clear_log_every();
    e->mutable_train()->clear_checkpoint_every();
  }
  EXPECT_EQ(check.train().DebugString(), paper.train().DebugString());
  EXPECT_EQ(check.train().steps(), 5000);
}

TEST(ConfigTest, OverridesSetScalarsRepeatedAndNestedFields) {
  Experiment e = ParseExperiment(kBase).value();
  ASSERT_TRUE(ApplyOverride("train.lr=5e-4", &e).ok());
  ASSERT_TRUE(ApplyOverride("seeds=[3, 4, 5]", &e).ok());
  ASSERT_TRUE(ApplyOverride("model.default_layer.mamba2.d_state=4", &e).ok());
  ASSERT_TRUE(ApplyOverride("name=other", &e).ok());
  EXPECT_EQ(e.train().lr(), 5e-4);
  EXPECT_EQ(e.seeds_size(), 3);
  EXPECT_EQ(e.model().default_layer().mamba2().d_state(), 4);
  EXPECT_EQ(e.name(), "other");
  EXPECT_TRUE(ValidateExperiment(&e).ok());
}

TEST(ConfigTest, AZeroVocabSizeIsTheTasksTokenCount) {
  Experiment e = ParseExperiment(kBase).value();
  ASSERT_TRUE(ApplyOverride("model.vocab_size=0", &e).ok());
  ASSERT_TRUE(ApplyOverride("task.copy.vocab=100", &e).ok());
  ASSERT_TRUE(ValidateExperiment(&e).ok());
  EXPECT_EQ(e.model().vocab_size(), 104);  // 100 content tokens + BOS, SEP, EOS, PAD
  // A set vocab_size is kept, and one too small for the task is still refused.
  EXPECT_THAT(Check({"model.vocab_size=50", "task.copy.vocab=100"}).message(), HasSubstr("model.vocab_size"));
}

TEST(ConfigTest, AZeroVocabSizeReportsTheTasksOwnErrorNotTheVocabSize) {
  // The vocabulary is resolved from the task, so a task that cannot be built must be reported as itself
  // (issue 30, item 6), not as "vocab_size = 0".
  absl::Status s = Check({"model.vocab_size=0", "task={ mqar { vocab: 64 seq_len: 12 num_kv_pairs: 40 } }",
                          "eval.lengths=[12]"});
  EXPECT_THAT(std::string(s.message()), HasSubstr("num_kv_pairs = 40"));
  EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("vocab_size")));
  // Likewise in a variant's own model.
  s = Check(
      {"variants[mimetic].model={ vocab_size: 0 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 8 "
       "headdim: 8 } } }",
       "task={ mqar { vocab: 64 seq_len: 12 num_kv_pairs: 40 } }", "eval.lengths=[12]"});
  EXPECT_THAT(std::string(s.message()), HasSubstr("num_kv_pairs = 40"));
  // A model that needs the task's vocabulary and no task: the task is what is missing.
  Experiment e = ParseExperiment(kBase).value();
  e.mutable_model()->set_vocab_size(0);
  e.clear_task();
  EXPECT_THAT(std::string(ValidateExperiment(&e).message()), HasSubstr("config: task = unset"));
}

TEST(ConfigTest, TheGammaPapersTasksAreConfigs) {
  // Composite function: train split, evaluated on the held-out pair 43 of the test split.
  EXPECT_TRUE(Check({"model.vocab_size=0", "task={ composite { } }", "eval.lengths=[8]",
                     "eval.task={ composite { split: \"test\" only_unseen_pair: true } }"})
                  .ok());
  absl::StatusOr<std::unique_ptr<data::Task>> c = MakeTask(ParseTaskSpec("composite { split: \"test\" }"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->model_vocab(), 111);  // labels up to 110 (composite.h)
  absl::StatusOr<std::unique_ptr<data::Task>> inv =
      MakeTask(ParseTaskSpec("inverse_sequence { n_layers: 3 split: \"ood\" }"));
  ASSERT_TRUE(inv.ok()) << inv.status();
  EXPECT_EQ((*inv)->seq_len(), 23 + 3 * 3);
  // Words outside their lists name the field and the words.
  EXPECT_THAT(MakeTask(ParseTaskSpec("composite { split: \"dev\" }")).status().message(),
              HasSubstr("task.composite.split = \"dev\"; expected one of \"test\", \"train\""));
  EXPECT_THAT(MakeTask(ParseTaskSpec("inverse_sequence { split: \"x\" }")).status().message(),
              HasSubstr("\"ood\""));
  EXPECT_THAT(
      Check({"model.vocab_size=0", "task={ composite { } }", "eval.task={ composite { seq_len: 2 } }"})
          .message(),
      HasSubstr("eval.task"));
}

TEST(ConfigTest, MimeticConstantsAreNotRoundedToFloat) {
  // Real-valued constants are doubles, as in the model spec: 0.1 must reach the init as written.
  std::string text = kBase;
  const std::string empty_mimetic = "mimetic {}";
  text.replace(text.find(empty_mimetic), empty_mimetic.size(), "mimetic { w_delta_scale: 0.1 }");
  absl::StatusOr<Experiment> parsed = ParseExperiment(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Experiment& e = *parsed;
  EXPECT_EQ(e.variants(1).init(0).mimetic().w_delta_scale(), 0.1);
  EXPECT_EQ(e.variants(1).init(0).mimetic().c(), 8.0);
}

TEST(ConfigTest, BadInputIsRejectedNamingTheField) {
  EXPECT_THAT(Check({"train.no_such=1"}).message(), HasSubstr("TrainSpec has no field 'no_such'"));
  EXPECT_THAT(Check({"train.lr=abc"}).message(), HasSubstr("cannot set train.lr"));
  EXPECT_THAT(Check({"task.copy.min_len=-3"}).message(), HasSubstr("min_len"));
  EXPECT_THAT(Check({"task.copy.max_len=40"}).message(),
              HasSubstr("context_len"));  // training length beyond context
  EXPECT_THAT(Check({"model.vocab_size=5"}).message(), HasSubstr("model.vocab_size = 5"));
  EXPECT_THAT(Check({"variants.0.name=x"}).message(), HasSubstr("not a singular message field"));
  EXPECT_THAT(Check({"train.steps=0"}).message(), HasSubstr("train.steps = 0"));
  EXPECT_THAT(Check({"eval.lengths=[]"}).message(), HasSubstr("eval.lengths"));
  EXPECT_THAT(Check({"seeds=[]"}).message(), HasSubstr("seeds"));
  EXPECT_THAT(Check({"device=tpu"}).message(), HasSubstr("device"));
  EXPECT_THAT(Check({"train.schedule=warm"}).message(), HasSubstr("train.schedule"));
  EXPECT_TRUE(Check({}).ok());
}

TEST(ConfigTest, InitTransformNamingAMissingLayerIsRejected) {
  Experiment e = ParseExperiment(kBase).value();
  e.mutable_variants(1)->mutable_init(0)->add_layers(7);
  EXPECT_THAT(ValidateExperiment(&e).message(), HasSubstr("variants[1].init.layers = 7"));
}

TEST(ConfigTest, UnknownFieldInAFileIsAParseErrorWithItsLine) {
  const std::string path = ::testing::TempDir() + "/bad.textproto";
  std::ofstream(path) << "name: \"x\"\nmodel { vocab_size: 3 }\nbogus_field: 1\n";
  absl::Status s = LoadExperiment(path, {}).status();
  EXPECT_THAT(s.message(), HasSubstr("line 3"));
  EXPECT_THAT(s.message(), HasSubstr("bogus_field"));
}

TEST(ConfigTest, ValuesThatMadeARunMeaninglessAreRefusedNamingTheField) {
  // The plainly invalid values that were accepted before the table of ranges (field_ranges.h).
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"train.eps=inf", "train.eps"},
      {"train.max_grad_norm=nan", "train.max_grad_norm"},
      {"train.early_stop_accuracy=nan", "train.early_stop_accuracy"},
      {"model.default_layer.mamba2.dt_init_floor=nan", "model.default_layer.mamba2.dt_init_floor"},
      {"model.default_layer.mamba2.dt_init_floor=-1", "model.default_layer.mamba2.dt_init_floor"},
      {"model.default_layer.mamba2.dt_max=inf", "model.default_layer.mamba2.dt_max"},
      {"model.default_layer.mamba1.dt_init_floor=inf", "model.default_layer.mamba1.dt_init_floor"},
      {"model.norm_eps=0", "model.norm_eps"},
      {"model.initializer_range=-0.02", "model.initializer_range"},
      {"variants[mimetic].init[0].mimetic.c=-1", "variants[1].init[0].mimetic.c"},
      {"variants[mimetic].init[0].mimetic.delta_bias=-inf", "variants[1].init[0].mimetic.delta_bias"},
      {"variants[mimetic].init[0].gamma.gamma=inf", "variants[1].init[0].gamma.gamma"},
      {"eval.lengths=[6,6]", "eval.lengths"},
      {"eval.map_length=-5", "eval.map_length"},
      {"train.batch_size=2147483647", "train.batch_size"},
      {"model.d_model=2147483647", "model.d_model"},
  };
  for (const auto& [set, field] : cases) {
    absl::Status s = Check({set});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << set;
    EXPECT_THAT(s.message(), HasSubstr(field + " = ")) << set;
  }
}

TEST(ConfigTest, AMapLengthIsCheckedBeforeTraining) {
  // It used to be checked only after training, when the attention maps (L x L per layer) were drawn.
  absl::Status s = Check({"eval.map_length=100000"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("eval.map_length = 100000"));
  EXPECT_TRUE(Check({"eval.map_length=12"}).ok());
}

TEST(ConfigTest, AConfigThatIsNoFileIsAClearErrorWithoutWaiting) {
  const std::string dir = ::testing::TempDir();
  const std::string empty = dir + "/empty.textproto", fifo = dir + "/fifo.textproto";
  std::ofstream(empty) << "  \n";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THAT(LoadExperiment(empty, {}).status().message(), HasSubstr("is empty"));
  EXPECT_THAT(LoadExperiment(dir, {}).status().message(), HasSubstr("not a regular file"));
  // Opening a FIFO for reading would block until a writer came: refused before opening it.
  EXPECT_THAT(LoadExperiment(fifo, {}).status().message(), HasSubstr("not a regular file"));
  EXPECT_EQ(LoadExperiment(dir + "/missing.textproto", {}).status().code(), absl::StatusCode::kNotFound);
}

// In the paper's pipeline every eval example fits a training row; here one that does not is refused,
// naming both sizes, unless the config opts in. Copy at 12: 2 * 12 + 3 = 27 ids; rows of 32 + 1 hold it,
// rows of 20 + 1 do not.
TEST(ConfigTest, AnEvalExampleLongerThanATrainingRowIsRefusedUnlessAllowed) {
  EXPECT_TRUE(Check({}).ok());
  const absl::Status s = Check({"task.copy.context_len=20"});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("eval.lengths = 12"));
  EXPECT_THAT(s.message(), HasSubstr("an example is 27 token ids, a training row holds 21"));
  EXPECT_THAT(s.message(), HasSubstr("task.copy.context_len to at least 26"));
  EXPECT_TRUE(Check({"task.copy.context_len=26"}).ok());
  EXPECT_TRUE(Check({"task.copy.context_len=20", "eval.allow_longer_than_training_rows=true"}).ok());
  // The attention-map example too.
  EXPECT_THAT(Check({"eval.map_length=20"}).message(), HasSubstr("eval.map_length = 20"));
}

// The experiment's name is a directory under output_dir: the variant-name rule, one message for both.
TEST(ConfigTest, AnExperimentNameThatWouldLeaveTheOutputDirectoryIsRefused) {
  for (const char* name : {"..", "../../x", "/tmp/x", "a/b", ".hidden"}) {
    const absl::Status s = Check({absl::StrCat("name=", name)});
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(s.message(), HasSubstr("config: name = ")) << name;
    EXPECT_THAT(s.message(), HasSubstr("a name that can be a directory")) << name;
  }
  EXPECT_TRUE(Check({"name=fig1_cpu.v2+x"}).ok());
  // The same words as for a variant's name.
  EXPECT_THAT(Check({"variants[0].name=.."}).message(), HasSubstr("a name that can be a directory"));
}

// A --set value is text for its one field: a string that closes its quote and goes on would set other
// fields unseen (config_fuzz_test found `name=x" device: "cuda` accepted, setting device), and a singular
// field given twice would keep only the last.
TEST(ConfigTest, AnOverrideSetsItsOneFieldOnly) {
  Experiment e = ParseExperiment(kBase).value();
  EXPECT_THAT(ApplyOverride(R"(name=x" device: "cuda)", &e).message(),
              HasSubstr("the value also sets 'device'; it may set only 'name'"));
  EXPECT_THAT(ApplyOverride(R"(device=x" device: "cuda)", &e).message(),
              HasSubstr("specified multiple times"));
  EXPECT_THAT(ApplyOverride("train.lr=1e-3 steps: 5", &e).message(), HasSubstr("also sets 'steps'"));
  EXPECT_EQ(e.device(), "cpu");
  EXPECT_EQ(e.train().steps(), 10);
  // Quoted, a string may hold a quote; a message value still merges, a list still replaces.
  ASSERT_TRUE(ApplyOverride(R"(name="x\" y")", &e).ok());
  EXPECT_EQ(e.name(), "x\" y");
  ASSERT_TRUE(ApplyOverride("train={ steps: 7 }", &e).ok());
  EXPECT_EQ(e.train().steps(), 7);
  EXPECT_EQ(e.train().batch_size(), 4);
  ASSERT_TRUE(ApplyOverride("seeds=[3, 4]", &e).ok());
  EXPECT_EQ(e.seeds_size(), 2);
}

// output_dir may be any path the file system can hold (slashes, "..", absolute), but not one it cannot:
// config_fuzz_test found a 5,000-byte output_dir and one with a NUL byte (where the C path would end,
// silently writing elsewhere) accepted.
TEST(ConfigTest, AnOutputDirTheFileSystemCannotHoldIsRefused) {
  for (const char* dir : {"a/b", "../x", "/abs/path", "runs/../other"}) {
    EXPECT_TRUE(Check({absl::StrCat("output_dir=", dir)}).ok()) << dir;
  }
  std::string deep;  // 21 parts of 200 bytes: each fits, the whole (4221 bytes) does not
  for (int i = 0; i < 21; ++i) deep += std::string(200, 'a') + "/";
  for (const std::string& dir : {std::string("\"\""), std::string(256, 'a'),
                                 "x/" + std::string(256, 'a') + "/y", deep, std::string(R"("a\0b")")}) {
    const absl::Status s = Check({"output_dir=" + dir});
    EXPECT_THAT(s.message(), HasSubstr("config: output_dir = ")) << dir.substr(0, 40);
    EXPECT_THAT(s.message(), HasSubstr("expected a path: not empty, no NUL byte, at most 255 bytes between "
                                       "slashes and 4095 in all"))
        << dir.substr(0, 40);
  }
  EXPECT_TRUE(Check({"output_dir=" + std::string(255, 'a')}).ok());
}

// `teacher` nests an Experiment in an Experiment, so text can nest without end. A config 8,000 levels deep,
// in a file or through --set, must be refused naming the limit rather than overflow the parser's stack.
// Each case runs in a child process so that a crash fails this test instead of the whole binary.
TEST(ConfigTest, NestingBeyondTheLimitIsRefusedNotACrash) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  constexpr int kDepth = 8000;
  std::string nested;
  for (int i = 0; i < kDepth; ++i) nested += "teacher { ";
  nested += std::string(kDepth, '}');
  // Exits 0 when `s` is the depth error; prints it so a failure shows what came back.
  const auto exit_on = [](const absl::Status& s) {
    std::fprintf(stderr, "status: %s\n", s.ToString().c_str());
    std::_Exit(absl::IsInvalidArgument(s) && absl::StrContains(s.message(), "limit of 64") ? 0 : 1);
  };
  const std::string path = ::testing::TempDir() + "/deep.textproto";
  std::ofstream(path) << kBase << nested << "\n";
  EXPECT_EXIT(exit_on(LoadExperiment(path, {}).status()), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(exit_on(Check({"teacher=" + nested.substr(sizeof("teacher ") - 1)})),
              ::testing::ExitedWithCode(0), "");
  std::string deep_path = "teacher";
  for (int i = 1; i < kDepth; ++i) deep_path += ".teacher";
  EXPECT_EXIT(exit_on(Check({deep_path + ".name=x"})), ::testing::ExitedWithCode(0), "");
  // Nesting within the limit still parses.
  EXPECT_TRUE(ParseExperiment(absl::StrCat(kBase, "teacher { teacher { name: \"x\" } }")).ok());
  Experiment e;
  EXPECT_TRUE(ApplyOverride("teacher.teacher.name=x", &e).ok());
  EXPECT_TRUE(ApplyOverride("teacher={ teacher { name: \"y\" } }", &e).ok());
  EXPECT_EQ(e.teacher().teacher().name(), "y");
}

}  // namespace
}  // namespace mimetic::experiments
