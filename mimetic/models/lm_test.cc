#include "mimetic/models/lm.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/random.h"
#include "mimetic/models/mixers.h"
#include "mimetic/models/spec.h"
#include "mimetic/models/test_specs.h"

namespace mimetic::models {
namespace {

using ::testing::HasSubstr;
using testing::MustParse;

std::vector<float> Host(const core::ParamTree& p, const std::string& path) {
  return p.Get(path).value().ToVector<float>().value();
}

double Mean(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s / v.size();
}
double Std(const std::vector<float>& v) {
  const double m = Mean(v);
  double s = 0;
  for (float x : v) s += (x - m) * (x - m);
  return std::sqrt(s / v.size());
}

TEST(SpecTest, OverridesBuildAHybrid) {
  ModelSpec s = testing::TinyHybrid();
  ASSERT_EQ(s.layers_size(), 4);
  EXPECT_EQ(MixerKind(s.layers(0)), "mamba2");
  EXPECT_EQ(MixerKind(s.layers(1)), "mamba1");
  EXPECT_EQ(MixerKind(s.layers(2)), "attention");
  EXPECT_EQ(MixerKind(s.layers(3)), "linear_attention");
  EXPECT_EQ(PaddedVocab(s), 16);
}

// Every kind in the LayerSpec oneof has exactly one row in the mixer table, named as its field.
TEST(MixersTest, EveryOneofCaseHasARowNamedAsItsField) {
  const google::protobuf::OneofDescriptor* mixer = LayerSpec::descriptor()->FindOneofByName("mixer");
  ASSERT_NE(mixer, nullptr);
  EXPECT_EQ(Mixers().size(), static_cast<size_t>(mixer->field_count()));
  for (int i = 0; i < mixer->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = mixer->field(i);
    const Mixer* row = FindMixer(static_cast<LayerSpec::MixerCase>(field->number()));
    ASSERT_NE(row, nullptr) << field->name();
    EXPECT_EQ(row->name, field->name());
  }
  EXPECT_EQ(FindMixer(LayerSpec::MIXER_NOT_SET), nullptr);
}

TEST(SpecTest, BadFieldsAreNamed) {
  EXPECT_THAT(
      ParseModelSpec("vocab_size: 10 d_model: 16 n_layer: 1 default_layer { mamba2 { headdim: 5 } }")
          .status()
          .message(),
      HasSubstr("layers[0].mamba2.headdim = 5; expected a divisor of d_inner = expand * d_model = 32"));
  EXPECT_THAT(ParseModelSpec("vocab_size: 10 d_model: 16 n_layer: 2 default_layer { mamba1 {} } "
                             "layer_overrides { index: 7 layer { attention {} } }")
                  .status()
                  .message(),
              HasSubstr("layer_overrides.index = 7"));
  EXPECT_THAT(
      ParseModelSpec("vocab_size: 0 d_model: 16 n_layer: 1 default_layer { mamba1 {} }").status().message(),
      HasSubstr("vocab_size = 0"));
  EXPECT_FALSE(ParseModelSpec("vocab_size: 10 no_such_field: 3").ok());
}

TEST(InitTest, Mamba1ShapesNamesAndConstants) {
  ModelSpec s = MustParse(
      "vocab_size: 50 d_model: 64 norm: LAYER_NORM pad_vocab_size_multiple: 1 n_layer: 4 "
      "default_layer { mamba1 { d_state: 16 } }");
  core::ParamTree p = Init(core::Key::FromSeed(1), s).value();
  // E = 128, R = ceil(64/16) = 4, N = 16, K = 4.
  EXPECT_EQ(p.Get("layers/0/mixer/in_proj/weight")->shape(), (core::Shape{256, 64}));
  EXPECT_EQ(p.Get("layers/0/mixer/conv1d/weight")->shape(), (core::Shape{128, 1, 4}));
  EXPECT_EQ(p.Get("layers/0/mixer/x_proj/weight")->shape(), (core::Shape{4 + 32, 128}));
  EXPECT_EQ(p.Get("layers/0/mixer/dt_proj/weight")->shape(), (core::Shape{128, 4}));
  EXPECT_EQ(p.Get("layers/3/mixer/A_log")->shape(), (core::Shape{128, 16}));
  EXPECT_EQ(p.Get("layers/0/norm/bias")->shape(), (core::Shape{64}));
  EXPECT_FALSE(p.Contains("lm_head/weight"));  // tied
  // S4D-real A_log = ln(n + 1) for every channel.
  std::vector<float> a = Host(p, "layers/1/mixer/A_log");
  for (int e : {0, 77}) {
    for (int n = 0; n < 16; ++n) EXPECT_FLOAT_EQ(a[e * 16 + n], std::log(float(n + 1)));
  }
  for (float d : Host(p, "layers/1/mixer/D")) EXPECT_EQ(d, 1.f);
  // Embedding N(0, 0.02^2).
  EXPECT_NEAR(Std(Host(p, "embedding/weight")), 0.02, 0.002);
  // in_proj U(±1/8): std = 1/(8 sqrt 3); out_proj U(±1/sqrt(128)) / sqrt(4 layers).
  EXPECT_NEAR(Std(Host(p, "layers/0/mixer/in_proj/weight")), 1.0 / (8 * std::sqrt(3.0)), 0.003);
  EXPECT_NEAR(Std(Host(p, "layers/0/mixer/out_proj/weight")), 1.0 / std::sqrt(128.0) / std::sqrt(3.0) / 2.0,
              0.002);
  // Conv bias is kept (not zeroed): U(±0.5).
  std::vector<float> cb = Host(p, "layers/0/mixer/conv1d/bias");
  EXPECT_GT(Std(cb), 0.2);
  // dt_proj.weight U(±R^-1/2) = U(±0.5).
  std::vector<float> dtw = Host(p, "layers/0/mixer/dt_proj/weight");
  for (float x : dtw) EXPECT_LE(std::abs(x), 0.5f);
  EXPECT_NEAR(Std(dtw), 0.5 / std::sqrt(3.0), 0.03);
}

TEST(InitTest, DtBiasIsInverseSoftplusOfLogUniformDt) {
  ModelSpec s = MustParse("vocab_size: 8 d_model: 256 n_layer: 1 default_layer { mamba1 { d_state: 2 } }");
  std::vector<float> bias = Host(Init(core::Key::FromSeed(3), s).value(), "layers/0/mixer/dt_proj/bias");
  ASSERT_EQ(bias.size(), 512u);
  // log(softplus(bias)) uniform on [ln 0.001, ln 0.1]: check range, mean and variance.
  std::vector<float> logdt;
  for (float b : bias) {
    const double dt = std::log1p(std::exp(double(b)));
    EXPECT_GE(dt, 0.001 * (1 - 1e-4));
    EXPECT_LE(dt, 0.1 * (1 + 1e-4));
    logdt.push_back(std::log(dt));
  }
  const double lo = std::log(0.001), hi = std::log(0.1);
  const double se = (hi - lo) / std::sqrt(12.0 * logdt.size());
  EXPECT_NEAR(Mean(logdt), (lo + hi) / 2, 5 * se);
  EXPECT_NEAR(Std(logdt), (hi - lo) / std::sqrt(12.0), 0.1 * (hi - lo) / std::sqrt(12.0));
}

TEST(InitTest, Mamba2ShapesAndConstants) {
  ModelSpec s = MustParse(
      "vocab_size: 30 d_model: 64 n_layer: 2 default_layer { mamba2 { d_state: 16 headdim: 16 ngroups: 2 } "
      "}");
  core::ParamTree p = Init(core::Key::FromSeed(2), s).value();
  // E = 128, H = 8, G = 2, N = 16: in_proj rows 2E + 2GN + H = 256 + 64 + 8.
  EXPECT_EQ(p.Get("layers/0/mixer/in_proj/weight")->shape(), (core::Shape{328, 64}));
  EXPECT_EQ(p.Get("layers/0/mixer/conv1d/weight")->shape(), (core::Shape{128 + 64, 1, 4}));
  EXPECT_EQ(p.Get("layers/0/mixer/dt_bias")->shape(), (core::Shape{8}));
  EXPECT_EQ(p.Get("embedding/weight")->shape(), (core::Shape{32, 64}));  // padded to a multiple of 8
  for (float a : Host(p, "layers/1/mixer/A_log")) {
    EXPECT_GE(a, 0.f);
    EXPECT_LE(a, std::log(16.f) + 1e-6f);
  }
  for (float w : Host(p, "layers/1/mixer/norm/weight")) EXPECT_EQ(w, 1.f);
}

// mamba_ssm's MambaLMHeadModel runs _init_weights twice (mixer_seq_simple.py): MixerModel's pass with
// n_residuals_per_layer = 2 when there is an MLP, then the LM head model's pass with the default 1,
// which redraws out_proj/fc2 and divides by sqrt(n_layer). The last pass wins, with or without MLP.
TEST(InitTest, OutProjAndFc2AreRescaledBySqrtNLayerAsMambaLMHeadModelLeavesThem) {
  for (const std::string mlp : {"", "d_intermediate: 128 "}) {
    ModelSpec s = MustParse("vocab_size: 13 d_model: 16 n_layer: 4 " + mlp +
                            "default_layer { mamba2 { d_state: 8 headdim: 8 } }");
    const core::Key key = core::Key::FromSeed(5);
    core::ParamTree p = Init(key, s).value();
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> rescaled = {
        {"layers/2/mixer/out_proj/weight", {16, 32}}};
    if (!mlp.empty()) rescaled.push_back({"layers/2/mlp/fc2/weight", {16, 128}});
    for (const auto& [path, shape] : rescaled) {
      // The unscaled draw is nn.Linear's default init from the parameter's own key.
      std::vector<float> draw =
          LinearWeight(ParamKey(key, path), shape.first, shape.second).value().ToVector<float>().value();
      std::vector<float> actual = Host(p, path);
      ASSERT_EQ(actual.size(), draw.size()) << path;
      for (size_t i = 0; i < draw.size(); ++i) {
        ASSERT_FLOAT_EQ(actual[i], static_cast<float>(draw[i] / std::sqrt(4.0))) << mlp << path << " " << i;
      }
    }
  }
}

// mamba_ssm's GatedMLP rounds hidden_features up to a multiple of multiple_of = 128 (modules/mlp.py),
// so d_intermediate: 24 gives the same tensor shapes as there.
TEST(InitTest, GatedMlpWidthIsRoundedUpToAMultipleOf128) {
  ModelSpec s = MustParse(
      "vocab_size: 13 d_model: 16 n_layer: 2 d_intermediate: 24 "
      "default_layer { mamba2 { d_state: 8 headdim: 8 } }");
  EXPECT_EQ(s.d_intermediate(), 128);
  core::ParamTree p = Init(core::Key::FromSeed(0), s).value();
  EXPECT_EQ(p.Get("layers/1/mlp/fc1/weight")->shape(), (core::Shape{256, 16}));
  EXPECT_EQ(p.Get("layers/1/mlp/fc2/weight")->shape(), (core::Shape{16, 128}));
  EXPECT_EQ(MustParse("vocab_size: 13 d_model: 16 n_layer: 1 d_intermediate: 129 "
                      "default_layer { mamba2 { d_state: 8 headdim: 8 } }")
                .d_intermediate(),
            256);
  EXPECT_EQ(MustParse("vocab_size: 13 d_model: 16 n_layer: 1 d_intermediate: 24 mlp_multiple_of: 1 "
                      "default_layer { mamba2 { d_state: 8 headdim: 8 } }")
                .d_intermediate(),
            24);
}

TEST(InitTest, SameKeySameTreeAndLayersAreIndependent) {
  core::ParamTree a = Init(core::Key::FromSeed(7), testing::TinyMamba2(2)).value();
  core::ParamTree b = Init(core::Key::FromSeed(7), testing::TinyMamba2(2)).value();
  core::ParamTree c = Init(core::Key::FromSeed(7), testing::TinyMamba2(3)).value();
  for (const std::string& path : a.Paths()) {
    EXPECT_EQ(Host(a, path), Host(b, path)) << path;
    // Adding a layer changes only out_proj's 1/sqrt(n_layer) rescale, never the draws.
    if (path.find("out_proj") == std::string::npos) {
      EXPECT_EQ(Host(a, path), Host(c, path)) << path;
    }
  }
  core::ParamTree d = Init(core::Key::FromSeed(8), testing::TinyMamba2(2)).value();
  EXPECT_NE(Host(a, "layers/0/mixer/in_proj/weight"), Host(d, "layers/0/mixer/in_proj/weight"));
}

TEST(ApplyTest, EveryMixerKindRuns) {
  for (const ModelSpec& s : {testing::TinyMamba1(), testing::TinyMamba2(), testing::TinyAttention(),
                             testing::TinyLinearAttention(), testing::TinyHybrid()}) {
    core::ParamTree p = Init(core::Key::FromSeed(0), s).value();
    core::Tensor tokens = core::RandInt(core::Key::FromSeed(1), {2, 9}, 0, 13).value();
    absl::StatusOr<core::Tensor> logits = ApplyChecked(p, s, tokens);
    ASSERT_TRUE(logits.ok()) << logits.status();
    EXPECT_EQ(logits->shape(), (core::Shape{2, 9, PaddedVocab(s)}));
    const std::vector<float> values = logits->ToVector<float>().value();
    for (float x : values) ASSERT_TRUE(std::isfinite(x));
  }
}

// Regression: with conv_bias false the zero bias must cover all E + 2GN conv channels, not E.
TEST(ApplyTest, Mamba2WithoutConvBiasEqualsAZeroConvBias) {
  const std::string body =
      "vocab_size: 13 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 8 headdim: 8 "
      "chunk_size: 4 conv_bias: ";
  ModelSpec with_bias = MustParse(body + "true } }");
  ModelSpec without_bias = MustParse(body + "false } }");
  core::ParamTree p = Init(core::Key::FromSeed(0), with_bias).value();
  for (int i = 0; i < 2; ++i) {
    const std::string path = LayerPrefix(i) + "mixer/conv1d/bias";
    std::vector<float> zeros(p.Get(path)->numel(), 0.f);
    p = p.Replace(path, core::Tensor::FromHost<float>(p.Get(path)->shape(), zeros).value()).value();
  }
  // The same weights without the conv biases, which is the tree Init builds for conv_bias: false.
  std::vector<std::pair<std::string, core::Tensor>> kept;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p.Paths()[i].find("conv1d/bias") == std::string::npos) kept.emplace_back(p.Paths()[i], p.Leaves()[i]);
  }
  core::ParamTree q = core::ParamTree::FromPairs(kept).value();
  ASSERT_TRUE(q.SameStructure(Init(core::Key::FromSeed(0), without_bias).value()));
  core::Tensor tokens = core::RandInt(core::Key::FromSeed(1), {2, 9}, 0, 13).value();
  absl::StatusOr<core::Tensor> expected = ApplyChecked(p, with_bias, tokens);
  absl::StatusOr<core::Tensor> actual = ApplyChecked(q, without_bias, tokens);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(actual->ToVector<float>().value(), expected->ToVector<float>().value());
}

TEST(ApplyTest, BadInputsGiveStatuses) {
  ModelSpec s = testing::TinyMamba2();
  core::ParamTree p = Init(core::Key::FromSeed(0), s).value();
  core::Tensor bad_tokens = core::Tensor::FromHost<int32_t>({1, 2}, {1, 99}).value();
  EXPECT_THAT(ApplyChecked(p, s, bad_tokens).status().message(), HasSubstr("99"));
  core::Tensor f = core::Tensor::FromHost<float>({1, 2}, {1, 2}).value();
  EXPECT_THAT(ApplyChecked(p, s, f).status().message(), HasSubstr("expected i32"));
  core::ParamTree missing = p.Select("embedding/**");
  EXPECT_THAT(
      ApplyChecked(missing, s, core::Tensor::FromHost<int32_t>({1, 1}, {1}).value()).status().message(),
      HasSubstr("layers/0/norm/weight"));
}

}  // namespace
}  // namespace mimetic::models
