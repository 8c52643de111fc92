// The custom_init example: the new transform does what it says on the chosen layer and nothing
// anywhere else, and the comparison runs at smoke size and prints a row per variant.
#include "examples/custom_init.h"

#include <cmath>

#include "examples/orthogonal_bc.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/init/registry.h"
#include "mimetic/models/proj_layout.h"

namespace examples {
namespace {

using mimetic::experiments::Experiment;
using mimetic::init::Model;
using ::testing::HasSubstr;

std::vector<float> Leaf(const Model& m, const std::string& path) {
  return m.params.Get(path).value().ToVector<float>().value();
}

Model Build(const Experiment& e, int variant, uint64_t seed) {
  absl::StatusOr<mimetic::init::Transform> t = mimetic::experiments::MakeTransform(e.variants(variant));
  EXPECT_TRUE(t.ok()) << t.status();
  absl::StatusOr<Model> m = mimetic::init::MakeModel(
      mimetic::experiments::VariantModel(e, e.variants(variant)), *t, mimetic::core::Key::FromSeed(seed));
  EXPECT_TRUE(m.ok()) << m.status();
  return *m;
}

TEST(CustomInitTest, WcTransposeWbIsTheIdentityOnTheChosenLayerAndNothingElseChanges) {
  absl::StatusOr<Experiment> e = CustomInitExperiment({}, ::testing::TempDir());
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->variants(2).name(), "orthogonal_bc");
  const Model plain = Build(*e, 0, 7);   // default init
  const Model custom = Build(*e, 2, 7);  // orthogonal_bc + A≈1 + Δ≈1 on layer index 3
  const auto d = mimetic::models::Mamba2DimsOf(custom.spec.layers(3).mamba2(), custom.spec.d_model());
  const auto in = mimetic::models::Mamba2InProjOf(d);
  const std::vector<float> w = Leaf(custom, "layers/3/mixer/in_proj/weight");  // (rows, D)
  auto at = [&](int64_t row, int64_t col) { return static_cast<double>(w[row * d.D + col]); };
  for (int64_t g = 0; g < d.G; ++g) {
    const int64_t b0 = in.B.begin + g * d.N, c0 = in.C.begin + g * d.N;
    for (int64_t i = 0; i < d.N; ++i) {
      for (int64_t k = 0; k < d.D; ++k) ASSERT_EQ(at(c0 + i, k), at(b0 + i, k)) << "W_C := W_B exactly";
      for (int64_t j = 0; j < d.N; ++j) {  // W_C W_Bᵀ = I_N
        double dot = 0;
        for (int64_t k = 0; k < d.D; ++k) dot += at(c0 + i, k) * at(b0 + j, k);
        EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-6) << "group " << g << " (" << i << ", " << j << ")";
      }
    }
    // W_Cᵀ W_B (D x D) is the orthogonal projection onto W_B's rows: trace N, P P = P.
    std::vector<double> p(d.D * d.D, 0.0);
    for (int64_t r = 0; r < d.D; ++r) {
      for (int64_t s = 0; s < d.D; ++s) {
        for (int64_t i = 0; i < d.N; ++i) p[r * d.D + s] += at(c0 + i, r) * at(b0 + i, s);
      }
    }
    double trace = 0;
    for (int64_t r = 0; r < d.D; ++r) trace += p[r * d.D + r];
    EXPECT_NEAR(trace, static_cast<double>(d.N), 1e-5);
    for (int64_t r = 0; r < d.D; ++r) {
      for (int64_t s = 0; s < d.D; ++s) {
        double pp = 0;
        for (int64_t k = 0; k < d.D; ++k) pp += p[r * d.D + k] * p[k * d.D + s];
        EXPECT_NEAR(pp, p[r * d.D + s], 1e-5);
      }
    }
  }
  // The paper's A ≈ 1 and Δ ≈ 1 steps ran on layer 3 only (and only there does the spec change).
  EXPECT_EQ(custom.spec.layers(3).mamba2().a_log_scale(), -8.0);
  for (int64_t r = in.dt.begin; r < in.dt.end(); ++r) {
    for (int64_t k = 0; k < d.D; ++k) ASSERT_EQ(at(r, k), 0.0);
  }
  // Every other layer, and every leaf of layer 3 but in_proj and dt_bias, is bit-identical to the
  // un-transformed init; in_proj's z and x rows too.
  for (int l = 0; l < 8; ++l) {
    if (l != 3) {
      EXPECT_EQ(custom.spec.layers(l).SerializeAsString(), plain.spec.layers(l).SerializeAsString());
    }
  }
  for (const std::string& path : plain.params.Paths()) {
    if (path == "layers/3/mixer/in_proj/weight" || path == "layers/3/mixer/dt_bias") continue;
    EXPECT_EQ(Leaf(custom, path), Leaf(plain, path)) << path;
  }
  const std::vector<float> before = Leaf(plain, "layers/3/mixer/in_proj/weight");
  for (int64_t r = in.z.begin; r < in.x.end(); ++r) {
    for (int64_t k = 0; k < d.D; ++k) ASSERT_EQ(w[r * d.D + k], before[r * d.D + k]) << "row " << r;
  }
}

TEST(CustomInitTest, TheTransformIsRegisteredWithACheckedGain) {
  const mimetic::init::TransformRegistry& r = mimetic::init::GlobalTransformRegistry();
  ASSERT_NE(r.Find("orthogonal_bc"), nullptr);
  EXPECT_THAT(r.ParseParams("orthogonal_bc", {{"gain", "0"}}).status().message(),
              HasSubstr("gain = \"0\"; expected a number in (0, 10]"));
  EXPECT_THAT(
      CustomInitExperiment({"variants[orthogonal_bc].init[0].named.params[gain]=20"}, ::testing::TempDir())
          .status()
          .message(),
      HasSubstr("expected a number in (0, 10]"));
  // On a Mamba 1 layer it says what it needs.
  absl::StatusOr<Experiment> e =
      CustomInitExperiment({"model.default_layer={ mamba1 { d_state: 4 } }"}, ::testing::TempDir());
  EXPECT_THAT(e.status().message(), HasSubstr("orthogonal_bc needs a Mamba 2 layer; layer 3 is mamba1"));
}

// The same comparison as a config file for //examples:run, which names the transform by text.
TEST(CustomInitTest, TheConfigFileNamesTheTransformAndIsValid) {
  absl::StatusOr<Experiment> e = mimetic::experiments::LoadExperiment("examples/orthogonal_bc.textproto", {});
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->variants(2).init(0).named().name(), "orthogonal_bc");
}

TEST(CustomInitTest, TheComparisonRunsAtSmokeSizeAndPrintsEveryVariant) {
  absl::StatusOr<Experiment> e = CustomInitExperiment({}, ::testing::TempDir() + "/runs");
  ASSERT_TRUE(e.ok()) << e.status();
  std::ostringstream progress;
  absl::StatusOr<mimetic::experiments::ExperimentSummary> s = RunCustomInit(*e, &progress);
  ASSERT_TRUE(s.ok()) << s.status() << "\n" << progress.str();
  ASSERT_EQ(s->runs.size(), 3u);
  for (const auto& run : s->runs) {
    EXPECT_TRUE(run.finished) << progress.str();
    EXPECT_TRUE(std::isfinite(run.result.final_loss()));
    for (const auto& acc : run.result.final()) {
      EXPECT_GE(acc.token(), 0.0);
      EXPECT_LE(acc.token(), 1.0);
    }
  }
  for (const char* variant : {"| default |", "| mimetic |", "| orthogonal_bc |"}) {
    EXPECT_THAT(s->table, HasSubstr(variant)) << s->table;
  }
}

}  // namespace
}  // namespace examples
