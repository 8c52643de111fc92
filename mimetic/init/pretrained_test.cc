#include "mimetic/init/pretrained.h"

#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/init/checkpoint_names.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"
#include "mimetic/models/test_specs.h"

namespace mimetic::init {
namespace {

using ::testing::HasSubstr;

std::string TempPath(const std::string& name) { return absl::StrCat(::testing::TempDir(), "/", name); }

// A fake "pretrained" checkpoint of a small hybrid (Mamba 2, Mamba 1, attention, linear attention,
// GatedMLP) written in mamba_ssm naming reads back bit for bit through LoadPretrained's path.
TEST(PretrainedTest, CustomSpecRoundTrip) {
  const models::ModelSpec spec = models::testing::TinyHybrid();
  core::ParamTree written = models::Init(core::Key::FromSeed(7), spec).value();
  const std::string path = TempPath("fake_pretrained.safetensors");
  ASSERT_TRUE(WriteMambaCheckpoint(path, written).ok());

  std::vector<std::string> unused;
  absl::StatusOr<Model> model = LoadPretrained(spec, path, &unused);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(model->spec.SerializeAsString(), models::ResolveSpec(spec)->SerializeAsString());
  ASSERT_TRUE(model->params.CheckSameStructure(written).ok());
  for (size_t i = 0; i < written.size(); ++i) {
    EXPECT_EQ(model->params.Leaves()[i].ToVector<float>().value(),
              written.Leaves()[i].ToVector<float>().value())
        << written.Paths()[i];
  }
  // WriteMambaCheckpoint also writes lm_head.weight (a copy of the tied embedding), which the loader
  // checks against the embedding rather than reporting it unused.
  EXPECT_THAT(unused, ::testing::IsEmpty());
}

TEST(PretrainedTest, WrongSpecNamesTheParameterAndFile) {
  const std::string path = TempPath("mamba1_d4.safetensors");
  ASSERT_TRUE(
      WriteMambaCheckpoint(path, models::Init(core::Key::FromSeed(1), models::testing::TinyMamba1()).value())
          .ok());
  models::ModelSpec other = models::testing::TinyMamba1();
  other.mutable_layers(0)->mutable_mamba1()->set_d_state(8);
  absl::StatusOr<Model> model = LoadPretrained(other, path);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(model.status().message(), HasSubstr("layers/0/mixer/"));
  EXPECT_THAT(model.status().message(), HasSubstr(path));
}

TEST(PretrainedTest, ANonFiniteWeightIsRefusedNamingItAndTheFile) {
  // It used to load, and a run started from it was reported "diverged" with exit status 0.
  const models::ModelSpec spec = models::testing::TinyMamba1();
  core::ParamTree tree = models::Init(core::Key::FromSeed(1), spec).value();
  const core::Tensor d = tree.Get("layers/0/mixer/D").value();
  std::vector<float> values = d.ToVector<float>().value();
  values[0] = std::numeric_limits<float>::infinity();
  tree = tree.Replace("layers/0/mixer/D", core::Tensor::FromHost<float>(d.shape(), values).value()).value();
  const std::string path = TempPath("non_finite.safetensors");
  ASSERT_TRUE(WriteMambaCheckpoint(path, tree).ok());
  absl::StatusOr<Model> model = LoadPretrained(spec, path);
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr(path));
  EXPECT_THAT(model.status().message(), HasSubstr("backbone.layers.0.mixer.D"));
  EXPECT_THAT(model.status().message(), HasSubstr("NaN or infinite"));
}

TEST(PretrainedTest, MissingFileIsAnError) {
  absl::StatusOr<Model> model =
      LoadPretrained(models::testing::TinyMamba2(), TempPath("no_such.safetensors"));
  ASSERT_FALSE(model.ok());
  EXPECT_THAT(model.status().message(), HasSubstr("no_such.safetensors"));
}

TEST(PretrainedTest, UnknownNameListsKnownNames) {
  absl::StatusOr<Model> model = LoadPretrained("state-spaces/mamba-1.4b", TempPath("unused.safetensors"));
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(model.status().message(), HasSubstr("state-spaces/mamba-1.4b"));
  for (const std::string& name : models::PretrainedNames())
    EXPECT_THAT(model.status().message(), HasSubstr(name));
}

// Parameter count of a resolved spec by the parameter shapes of mamba_ssm modules/mamba_simple.py (Mamba 1)
// and modules/mamba2.py (Mamba 2), for the pure Mamba models the presets describe (RMSNorm: one weight per
// norm; tied head).
int64_t AnalyticCount(const models::ModelSpec& spec) {
  int64_t total = models::PaddedVocab(spec) * spec.d_model() + spec.d_model();  // embedding, norm_f
  for (const models::LayerSpec& layer : spec.layers()) {
    total += spec.d_model();  // block norm
    if (layer.has_mamba1()) {
      const models::Mamba1Dims d = models::Mamba1DimsOf(layer.mamba1(), spec.d_model());
      total += 2 * d.E * d.D + d.E * (d.K + 1) + d.E * (d.R + 2 * d.N) + d.R * d.E + d.E + d.E * d.N + d.E +
               d.E * d.D;
    } else {
      const models::Mamba2Dims d = models::Mamba2DimsOf(layer.mamba2(), spec.d_model());
      total += d.D * models::Mamba2InProjOf(d).rows() + models::Mamba2InProjOf(d).xBC().size * (d.K + 1) +
               3 * d.H + d.E + d.E * d.D;
    }
  }
  return total;
}

// The count models::Init gives for `spec`, measured on 1- and 2-layer copies with a vocabulary of 8
// (so no full-size tree is allocated) and extrapolated: per layer = n2 - n1, and the embedding
// scales with the padded vocabulary.
int64_t InitCountExtrapolated(const models::ModelSpec& spec) {
  auto count = [&](int n_layer) {
    models::ModelSpec small = spec;
    small.clear_layers();
    for (int i = 0; i < n_layer; ++i) *small.add_layers() = spec.layers(0);
    small.set_n_layer(n_layer);
    small.set_vocab_size(8);
    small.set_pad_vocab_size_multiple(8);
    return models::Init(core::Key::FromSeed(0), small).value().NumElements();
  };
  const int64_t n1 = count(1), per_layer = count(2) - n1;
  return n1 - per_layer - 8 * spec.d_model() + models::PaddedVocab(spec) * spec.d_model() +
         spec.layers_size() * per_layer;
}

struct KnownCount {
  std::string name;
  int64_t params;  // sum of numel over MambaLMHeadModel.parameters() (tied head counted once)
};

class PretrainedSpecTest : public ::testing::TestWithParam<KnownCount> {};

TEST_P(PretrainedSpecTest, ParameterCount) {
  absl::StatusOr<models::ModelSpec> spec = models::PretrainedSpec(GetParam().name);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(AnalyticCount(*spec), GetParam().params);
  EXPECT_EQ(InitCountExtrapolated(*spec), GetParam().params);
}

INSTANTIATE_TEST_SUITE_P(Presets, PretrainedSpecTest,
                         ::testing::Values(KnownCount{"state-spaces/mamba-130m", 129135360},
                                           KnownCount{"state-spaces/mamba-370m", 371516416},
                                           KnownCount{"state-spaces/mamba2-130m", 128989632}));

TEST(PretrainedSpecTest, Mamba130mFields) {
  models::ModelSpec spec = models::PretrainedSpec("state-spaces/mamba-130m").value();
  EXPECT_EQ(spec.layers_size(), 24);
  EXPECT_EQ(models::PaddedVocab(spec), 50280);
  EXPECT_EQ(spec.norm(), models::RMS_NORM);
  EXPECT_EQ(spec.norm_eps(), 1e-5);
  EXPECT_TRUE(spec.tie_embeddings());
  const models::Mamba1Dims d = models::Mamba1DimsOf(spec.layers(23).mamba1(), spec.d_model());
  EXPECT_EQ(d.E, 1536);
  EXPECT_EQ(d.N, 16);
  EXPECT_EQ(d.R, 48);  // config.json time_step_rank
  // ≈129M, as the model's name says.
  EXPECT_NEAR(AnalyticCount(spec) / 1e6, 129.1, 0.1);
}

TEST(PretrainedSpecTest, Mamba2130mFields) {
  models::ModelSpec spec = models::PretrainedSpec("state-spaces/mamba2-130m").value();
  EXPECT_EQ(spec.layers_size(), 24);
  EXPECT_EQ(models::PaddedVocab(spec), 50288);
  const models::Mamba2Dims d = models::Mamba2DimsOf(spec.layers(0).mamba2(), spec.d_model());
  EXPECT_EQ(d.N, 128);
  EXPECT_EQ(d.P, 64);
  EXPECT_EQ(d.H, 24);
  EXPECT_EQ(d.G, 1);
}

TEST(PretrainedSpecTest, UnknownNameIsNotFound) {
  absl::StatusOr<models::ModelSpec> spec = models::PretrainedSpec("mamba-130m");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(spec.status().message(),
              HasSubstr("state-spaces/mamba-130m, state-spaces/mamba-370m, state-spaces/mamba2-130m"));
}

}  // namespace
}  // namespace mimetic::init
