#include "mimetic/experiments/config/checkpoint_init.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/init/checkpoint_names.h"
#include "mimetic/init/safetensors.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kModel[] =
    "vocab_size: 12 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } }";

std::string TempPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return (fs::path(tmp != nullptr ? tmp : "/tmp") / name).string();
}

// A trained-looking checkpoint: the spec's default init from `seed`, written in mamba_ssm names.
init::Model WriteCheckpoint(const std::string& path, const std::string& spec_text, uint64_t seed) {
  models::ModelSpec spec = ParseExperiment(absl::StrCat("name: \"x\" model { ", spec_text, " }"))->model();
  init::Model m = init::MakeModel(spec, init::DefaultInit(), core::Key::FromSeed(seed)).value();
  EXPECT_TRUE(init::WriteMambaCheckpoint(path, m.params).ok());
  return m;
}

Experiment WithVariant(const std::string& variant_text, const std::string& model = kModel) {
  absl::StatusOr<Experiment> e = ParseExperiment(absl::StrCat(R"pb(
                                                                name: "t" model {)pb",
                                                              model, R"pb(}
                                                                          variants { )pb",
                                                              variant_text, R"pb(}
                                                                                 task { copy { vocab: 8 min_len: 2 max_len: 4 context_len: 16 } }
    train { steps: 2 batch_size: 2 }
    eval { lengths: [ 4 ] }
    seeds: [ 1 ]
  )pb"));
  EXPECT_TRUE(e.ok()) << e.status();
  return *e;
}

absl::StatusOr<init::Model> Build(const Experiment& e) {
  ASSIGN_OR_RETURN(init::Transform t, MakeTransform(e.variants(0)));
  return init::MakeModel(VariantModel(e, e.variants(0)), t, core::Key::FromSeed(5));
}

std::vector<float> Host(const init::Model& m, const std::string& path) {
  return m.params.Get(path).value().ToVector<float>().value();
}

TEST(CheckpointInitTest, PretrainedIsTheFilesModel) {
  const std::string path = TempPath("pretrained.safetensors");
  init::Model written = WriteCheckpoint(path, kModel, 3);
  Experiment e = WithVariant(
      absl::StrCat("name: \"p\" init { pretrained { path: \"", path, "\" model { ", kModel, " } } }"));
  ASSERT_TRUE(ValidateExperiment(&e).ok());
  init::Model m = Build(e).value();
  for (const std::string& p : written.params.Paths()) EXPECT_EQ(Host(m, p), Host(written, p)) << p;
}

TEST(CheckpointInitTest, AMissingPublishedFileSaysWhatToFetchAndFromWhere) {
  Experiment e = WithVariant(
      "name: \"p\" init { pretrained { name: \"state-spaces/mamba-130m\" path: "
      "\"/nonexistent/m.safetensors\" } }",
      "vocab_size: 50277 d_model: 768 n_layer: 24 default_layer { mamba1 {} }");
  absl::Status s = ValidateExperiment(&e);
  EXPECT_THAT(
      s.message(),
      AllOf(HasSubstr("variants[0].init[0]"), HasSubstr("'/nonexistent/m.safetensors' does not exist"),
            HasSubstr("https://huggingface.co/state-spaces/mamba-130m"), HasSubstr("pytorch_model.bin"),
            HasSubstr("save_file"), HasSubstr("--pretrained=/path/model.safetensors")));
  e = WithVariant("name: \"p\" init { pretrained { name: \"state-spaces/mamba-130m\" } }",
                  "vocab_size: 50277 d_model: 768 n_layer: 24 default_layer { mamba1 {} }");
  EXPECT_THAT(ValidateExperiment(&e).message(),
              AllOf(HasSubstr("no checkpoint file given for state-spaces/mamba-130m"),
                    HasSubstr("https://huggingface.co/state-spaces/mamba-130m")));
}

TEST(CheckpointInitTest, WrongShapesNameTheFileAndTheFirstMismatchingTensor) {
  const std::string path = TempPath("wide_state.safetensors");
  WriteCheckpoint(path,
                  "vocab_size: 12 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 16 headdim: 8 "
                  "chunk_size: 8 } }",
                  3);
  Experiment e = WithVariant(
      absl::StrCat("name: \"p\" init { pretrained { path: \"", path, "\" model { ", kModel, " } } }"));
  EXPECT_THAT(ValidateExperiment(&e).message(),
              AllOf(HasSubstr(path), HasSubstr("layers/0/mixer/"), HasSubstr("shape")));
}

TEST(CheckpointInitTest, PretrainedRefusesAVariantOfAnotherSpec) {
  const std::string path = TempPath("other.safetensors");
  WriteCheckpoint(path, kModel, 3);
  Experiment e = WithVariant(
      absl::StrCat("name: \"p\" init { pretrained { path: \"", path, "\" model { ", kModel, " } } }"),
      "vocab_size: 12 d_model: 16 n_layer: 3 default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } "
      "}");
  EXPECT_THAT(ValidateExperiment(&e).message(),
              AllOf(HasSubstr("not the checkpoint's"), HasSubstr("layers")));
}

TEST(CheckpointInitTest, TransplantCopiesTheSourceLayerIntoEveryListedLayer) {
  const std::string path = TempPath("teacher3.safetensors");
  const std::string teacher =
      "vocab_size: 12 d_model: 16 n_layer: 3 default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } "
      "}";
  init::Model t = WriteCheckpoint(path, teacher, 4);
  Experiment e = WithVariant(absl::StrCat("name: \"s\" init { transplant { path: \"", path, "\" model { ",
                                          teacher, " } source_layer: 2 } }"));
  ASSERT_TRUE(ValidateExperiment(&e).ok());
  init::Model s = Build(e).value();
  for (const std::string& p : s.params.Paths()) {
    for (int layer : {0, 1}) {
      const std::string prefix = absl::StrCat("layers/", layer, "/");
      if (p.rfind(prefix, 0) != 0) continue;
      EXPECT_EQ(Host(s, p), Host(t, "layers/2/" + p.substr(prefix.size()))) << p;
    }
  }
  // A layer the checkpoint lacks is named before anything runs.
  e = WithVariant(absl::StrCat("name: \"s\" init { transplant { path: \"", path, "\" model { ", teacher,
                               " } source_layer: 3 } }"));
  EXPECT_THAT(ValidateExperiment(&e).message(),
              HasSubstr("checkpoint layer 3 but the checkpoint has 3 layers"));
}

// The experiment path of the attention transfer: target layer i from attention layer i, through the file,
// x <- V, B <- K, C <- Q, out <- O (transfer_test checks the rows of one layer in memory).
TEST(CheckpointInitTest, TransferFromAttentionMapsEachLayerFromTheFile) {
  const std::string path = TempPath("attention.safetensors");
  const std::string teacher =
      "vocab_size: 12 d_model: 16 n_layer: 2 default_layer { attention { num_heads: 2 } }";
  init::Model t = WriteCheckpoint(path, teacher, 6);
  const std::string student =
      "vocab_size: 12 d_model: 16 n_layer: 2 default_layer { mamba2 { expand: 1 ngroups: 2 d_state: 8 "
      "headdim: 8 "
      "chunk_size: 8 } }";
  Experiment e = WithVariant(absl::StrCat("name: \"m\" init { transfer_from_attention { path: \"", path,
                                          "\" model { ", teacher, " } } }"),
                             student);
  ASSERT_TRUE(ValidateExperiment(&e).ok());
  init::Model s = Build(e).value();
  const int64_t D = 16, E = 16, HP = 16;
  auto rows = [&](const std::vector<float>& v, int64_t begin, int64_t n) {
    return std::vector<float>(v.begin() + begin * D, v.begin() + (begin + n) * D);
  };
  for (int layer : {0, 1}) {
    const std::string l = absl::StrCat("layers/", layer, "/mixer/");
    const std::vector<float> qkv = Host(t, l + "in_proj/weight"), in = Host(s, l + "in_proj/weight");
    EXPECT_EQ(rows(in, E, E), rows(qkv, 2 * HP, HP)) << layer;       // x <- V
    EXPECT_EQ(rows(in, 2 * E, HP), rows(qkv, HP, HP)) << layer;      // B <- K
    EXPECT_EQ(rows(in, 2 * E + HP, HP), rows(qkv, 0, HP)) << layer;  // C <- Q
    EXPECT_EQ(Host(s, l + "out_proj/weight"), Host(t, l + "out_proj/weight")) << layer;
  }
  // Mamba 2 of the default expand 2: the widths do not fit, said when the model is built.
  e = WithVariant(absl::StrCat("name: \"m\" init { transfer_from_attention { path: \"", path, "\" model { ",
                               teacher, " } } }"));
  ASSERT_TRUE(ValidateExperiment(&e).ok());
  EXPECT_THAT(Build(e).status().message(), HasSubstr("must equal the target's d_inner"));
}

TEST(CheckpointInitTest, TeacherEntriesNeedTheExperimentsTeacher) {
  Experiment e = WithVariant("name: \"p\" init { pretrained { teacher: true } }");
  EXPECT_THAT(ValidateExperiment(&e).message(), HasSubstr("the experiment has no teacher"));
  *e.mutable_teacher() = WithVariant("name: \"t\" init { mimetic { reparameterize: false } }");
  EXPECT_TRUE(ValidateExperiment(&e).ok());
  // Its file does not exist until the figure trains the teacher.
  EXPECT_THAT(Build(e).status().message(), HasSubstr("written by the figure that trains the teacher"));
  // A teacher whose init changes the parameterization could not be read back from its file.
  *e.mutable_teacher() = WithVariant("name: \"t\" init { mimetic {} }");
  EXPECT_THAT(ValidateExperiment(&e).message(), HasSubstr("reparameterize: false"));
}

// --pretrained: the published-model entries without a file get it, one path for all or one per model.
TEST(CheckpointInitTest, PretrainedPathOverridesFillThePublishedEntries) {
  Experiment e = ParseExperiment(R"pb(
                   name: "p"
                   variants {
                     name: "a"
                     init { pretrained { name: "state-spaces/mamba-130m" } }
                   }
                   variants {
                     name: "b"
                     init { mimetic {} }
                     init { transplant { name: "state-spaces/mamba-370m" } }
                   }
                   variants {
                     name: "c"
                     init { transplant { name: "state-spaces/mamba-370m" path: "/given" } }
                   }
                 )pb")
                     .value();
  EXPECT_THAT(PretrainedPathOverrides(e, "/m.safetensors").value(),
              ::testing::ElementsAre("variants[0].init[0].pretrained.path=/m.safetensors",
                                     "variants[1].init[1].transplant.path=/m.safetensors"));
  EXPECT_THAT(
      PretrainedPathOverrides(e, "state-spaces/mamba-370m=/b.st,state-spaces/mamba-130m=/a.st").value(),
      ::testing::ElementsAre("variants[0].init[0].pretrained.path=/a.st",
                             "variants[1].init[1].transplant.path=/b.st"));
  EXPECT_THAT(PretrainedPathOverrides(e, "state-spaces/mamba2-130m=/x").status().message(),
              HasSubstr("uses state-spaces/mamba2-130m"));
  e.clear_variants();
  EXPECT_THAT(PretrainedPathOverrides(e, "/m.safetensors").status().message(),
              HasSubstr("has no init entry of a published model without a file"));
}

}  // namespace
}  // namespace mimetic::experiments
