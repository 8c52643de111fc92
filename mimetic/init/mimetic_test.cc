#include "mimetic/init/mimetic.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/random.h"
#include "mimetic/init/gamma.h"
#include "mimetic/models/attention_maps.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/test_specs.h"

namespace mimetic::init {
namespace {

using ::testing::HasSubstr;
using models::testing::MustParse;

std::vector<float> Host(const ParamTree& p, const std::string& path) {
  return p.Get(path).value().ToVector<float>().value();
}

Model Make(const ModelSpec& spec, const Transform& t, uint64_t seed = 0) {
  absl::StatusOr<Model> m = MakeModel(spec, t, Key::FromSeed(seed));
  if (!m.ok()) ADD_FAILURE() << m.status();
  return *m;
}

std::vector<models::LayerInternals> RunModel(const Model& m, int64_t batch, int64_t len, uint64_t seed = 9) {
  core::Tensor tokens = core::RandInt(Key::FromSeed(seed), {batch, len}, 0, m.spec.vocab_size()).value();
  std::vector<models::LayerInternals> internals;
  core::Tensor logits = models::Apply(m.params, m.spec, tokens, &internals);
  EXPECT_TRUE(logits.ok()) << logits.status();
  return internals;
}

double Correlation(const std::vector<float>& a, const std::vector<float>& b) {
  double ma = 0, mb = 0;
  for (size_t i = 0; i < a.size(); ++i) ma += a[i], mb += b[i];
  ma /= a.size();
  mb /= b.size();
  double sab = 0, saa = 0, sbb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return sab / std::sqrt(saa * sbb);
}

TEST(MimeticDeltaTest, EveryDeltaIsOneForRandomInputs) {
  for (const ModelSpec& spec : {models::testing::TinyMamba1(), models::testing::TinyMamba2()}) {
    Model m = Make(spec, Compose({DefaultInit(), OnMambaLayers(MimeticDelta())}));
    for (const models::LayerInternals& li : RunModel(m, 3, 17)) {
      const core::Tensor& delta = li.kind == LayerSpec::kMamba1 ? li.mamba1.delta : li.mamba2.delta;
      const std::vector<float> values = delta.ToVector<float>().value();
      for (float d : values) ASSERT_NEAR(d, 1.0f, 1e-6f);
    }
  }
}

TEST(MimeticConvTest, ConvOutputEqualsItsInput) {
  for (const ModelSpec& spec : {models::testing::TinyMamba1(), models::testing::TinyMamba2()}) {
    Model m = Make(spec, Compose({DefaultInit(), OnMambaLayers(MimeticConv())}));
    for (const models::LayerInternals& li : RunModel(m, 2, 13)) {
      const bool m1 = li.kind == LayerSpec::kMamba1;
      EXPECT_EQ((m1 ? li.mamba1.conv_out : li.mamba2.conv_out).ToVector<float>().value(),
                (m1 ? li.mamba1.conv_in : li.mamba2.conv_in).ToVector<float>().value());
    }
  }
}

TEST(MimeticBCTest, CorrelationOfWBAndWCIsOneOverSqrtTwo) {
  // Mamba 1: x_proj rows [R, R+N) are W_B, [R+N, R+2N) are W_C; 64 x 512 entries each.
  ModelSpec m1 = MustParse("vocab_size: 8 d_model: 256 n_layer: 1 default_layer { mamba1 { d_state: 64 } }");
  Model a = Make(m1, Compose({DefaultInit(), OnLayers({0}, MimeticBC())}));
  std::vector<float> x = Host(a.params, "layers/0/mixer/x_proj/weight");
  const int R = 16, N = 64, E = 512;
  std::vector<float> wb(x.begin() + R * E, x.begin() + (R + N) * E), wc(x.begin() + (R + N) * E, x.end());
  EXPECT_NEAR(Correlation(wb, wc), 1 / std::sqrt(2.0), 0.02);
  // Mamba 2: in_proj rows [2E, 2E+GN) and [2E+GN, 2E+2GN).
  ModelSpec m2 = MustParse("vocab_size: 8 d_model: 256 n_layer: 1 default_layer { mamba2 { d_state: 64 headdim: 64 } }");
  Model b = Make(m2, Compose({DefaultInit(), OnLayers({0}, MimeticBC())}));
  std::vector<float> w = Host(b.params, "layers/0/mixer/in_proj/weight");
  const int D = 256, E2 = 512;
  std::vector<float> b2(w.begin() + 2 * E2 * D, w.begin() + (2 * E2 + N) * D);
  std::vector<float> c2(w.begin() + (2 * E2 + N) * D, w.begin() + (2 * E2 + 2 * N) * D);
  EXPECT_NEAR(Correlation(b2, c2), 1 / std::sqrt(2.0), 0.02);
  // Default init: uncorrelated.
  Model d = Make(m2, DefaultInit());
  std::vector<float> wd = Host(d.params, "layers/0/mixer/in_proj/weight");
  EXPECT_NEAR(Correlation(std::vector<float>(wd.begin() + 2 * E2 * D, wd.begin() + (2 * E2 + N) * D),
                          std::vector<float>(wd.begin() + (2 * E2 + N) * D, wd.begin() + (2 * E2 + 2 * N) * D)),
              0.0, 0.02);
}

TEST(MimeticATest, ReparameterizationChangesTheSpecNotTheValues) {
  ModelSpec spec = models::testing::TinyMamba1(1);
  Model base = Make(spec, DefaultInit());
  Model re = Make(spec, Compose({DefaultInit(), OnLayers({0}, MimeticA(8, true))}));
  Model io = Make(spec, Compose({DefaultInit(), OnLayers({0}, MimeticA(8, false))}));
  EXPECT_FLOAT_EQ(re.spec.layers(0).mamba1().a_log_scale(), -8.f);
  EXPECT_EQ(Host(re.params, "layers/0/mixer/A_log"), Host(base.params, "layers/0/mixer/A_log"));
  EXPECT_FLOAT_EQ(io.spec.layers(0).mamba1().a_log_scale(), 1.f);
  // Both readings give the same initial A = -(n+1)^-8 (n = 0 keeps A = -1).
  std::vector<models::LayerInternals> ri = RunModel(re, 1, 3), ii = RunModel(io, 1, 3);
  std::vector<float> ar = ri[0].mamba1.A.ToVector<float>().value(), ai = ii[0].mamba1.A.ToVector<float>().value();
  for (int n = 0; n < 4; ++n) {
    EXPECT_NEAR(ar[n], -std::pow(n + 1.0, -8.0), 1e-7);
    EXPECT_NEAR(ai[n], ar[n], 1e-7);
  }
}

TEST(MimeticTest, AverageMaskOfMamba2IsNearOneOver100TokensDefaultIsNot) {
  // 32 heads, so the ~2% of heads with A0 < 10^(1/8) (|A| > 0.1 under c = 8) barely move the mean.
  ModelSpec spec = MustParse("vocab_size: 20 d_model: 128 n_layer: 1 default_layer { mamba2 { d_state: 16 headdim: 8 } }");
  Model mim = Make(spec, Compose({DefaultInit(), OnMambaLayers(Mimetic())}));
  Model def = Make(spec, DefaultInit());
  core::Tensor tokens = core::RandInt(Key::FromSeed(4), {1, 100}, 0, 20).value();
  models::LayerMap mm = models::ComputeAllLayerMaps(mim.params, mim.spec, tokens, 0).value()[0];
  models::LayerMap dm = models::ComputeAllLayerMaps(def.params, def.spec, tokens, 0).value()[0];
  const double mimetic_mean = models::MeanLowerTriangle(mm.mask, 100);
  const double default_mean = models::MeanLowerTriangle(dm.mask, 100);
  EXPECT_GT(mimetic_mean, 0.9);
  EXPECT_LT(default_mean, 0.6);
  // Over the full 100-token look-back (row 99, column 0).
  EXPECT_GT(mm.mask[99 * 100 + 0], 0.85);
}

TEST(MimeticTest, RecipesPerArchitecture) {
  Model m1 = Make(models::testing::TinyMamba1(1), Compose({DefaultInit(), OnMambaLayers(Mimetic())}));
  Model d1 = Make(models::testing::TinyMamba1(1), DefaultInit());
  // Mamba 1 recipe: no conv identity.
  EXPECT_EQ(Host(m1.params, "layers/0/mixer/conv1d/weight"), Host(d1.params, "layers/0/mixer/conv1d/weight"));
  for (float w : Host(m1.params, "layers/0/mixer/dt_proj/weight")) EXPECT_EQ(w, 0.f);
  Model m2 = Make(models::testing::TinyMamba2(1), Compose({DefaultInit(), OnMambaLayers(Mimetic())}));
  std::vector<float> conv = Host(m2.params, "layers/0/mixer/conv1d/weight");
  for (size_t i = 0; i < conv.size(); ++i) EXPECT_EQ(conv[i], i % 4 == 3 ? 1.f : 0.f);
  EXPECT_FLOAT_EQ(m2.spec.layers(0).mamba2().a_log_scale(), -8.f);
}

TEST(MimeticTest, TransformOnLayerThreeLeavesOtherLayersBitIdentical) {
  ModelSpec spec = models::testing::TinyMamba2(5);
  Model base = Make(spec, DefaultInit(), 21);
  Model t = Make(spec, Compose({DefaultInit(), OnLayers({3}, Mimetic())}), 21);
  int changed = 0;
  for (const std::string& path : base.params.Paths()) {
    if (path.rfind("layers/3/", 0) == 0) {
      changed += Host(base.params, path) != Host(t.params, path);
      continue;
    }
    EXPECT_EQ(Host(base.params, path), Host(t.params, path)) << path;
  }
  EXPECT_GE(changed, 3);  // in_proj (Δ rows, C rows), dt_bias, conv weight and bias
  for (int i = 0; i < 5; ++i) {
    if (i != 3) {
      EXPECT_EQ(t.spec.layers(i).SerializeAsString(), base.spec.layers(i).SerializeAsString());
    }
  }
}

TEST(MimeticTest, SameKeySameTree) {
  Transform t = Compose({DefaultInit(), OnMambaLayers(Mimetic()), GammaInit(0.7)});
  Model a = Make(models::testing::TinyHybrid(), t, 5), b = Make(models::testing::TinyHybrid(), t, 5);
  for (const std::string& path : a.params.Paths()) EXPECT_EQ(Host(a.params, path), Host(b.params, path)) << path;
}

TEST(MimeticTest, TransformsThatDoNotFitAreErrors) {
  ModelSpec hybrid = models::testing::TinyHybrid();  // layer 2 is attention
  absl::Status s = MakeModel(hybrid, Compose({DefaultInit(), OnLayers({2}, MimeticConv())}), Key::FromSeed(0)).status();
  EXPECT_THAT(s.message(), HasSubstr("conv≈I needs a Mamba 1 or Mamba 2 layer, but layer 2 is attention"));
  s = MakeModel(hybrid, Compose({DefaultInit(), OnLayers({9}, Mimetic())}), Key::FromSeed(0)).status();
  EXPECT_THAT(s.message(), HasSubstr("layer index 9 is outside the model's 4 layers"));
  // Mimetic on all Mamba layers skips attention layers instead of failing.
  EXPECT_TRUE(MakeModel(hybrid, Compose({DefaultInit(), OnMambaLayers(Mimetic())}), Key::FromSeed(0)).ok());
}

TEST(GammaInitTest, StdIsFanInToTheMinusGamma) {
  ModelSpec spec = MustParse("vocab_size: 100 d_model: 64 n_layer: 1 default_layer { mamba2 { d_state: 16 headdim: 16 } }");
  for (double gamma : {0.5, 1.0}) {
    Model m = Make(spec, Compose({DefaultInit(), GammaInit(gamma)}));
    for (const auto& [path, fan_in] : std::vector<std::pair<std::string, double>>{
             {"layers/0/mixer/in_proj/weight", 64}, {"layers/0/mixer/out_proj/weight", 128}, {"embedding/weight", 104}}) {
      std::vector<float> v = Host(m.params, path);
      double s = 0;
      for (float x : v) s += double(x) * x;
      const double want = std::pow(fan_in, -gamma);
      EXPECT_NEAR(std::sqrt(s / v.size()), want, 0.05 * want) << path;
    }
    // Not covered: conv, A_log, dt_bias, norms.
    Model d = Make(spec, DefaultInit());
    EXPECT_EQ(Host(m.params, "layers/0/mixer/conv1d/weight"), Host(d.params, "layers/0/mixer/conv1d/weight"));
    EXPECT_EQ(Host(m.params, "layers/0/mixer/A_log"), Host(d.params, "layers/0/mixer/A_log"));
  }
}

}  // namespace
}  // namespace mimetic::init
