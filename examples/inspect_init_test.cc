#include "examples/inspect_init.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace examples {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(InspectInitTest, StatisticsAndMasksOfTheDefaultComposition) {
  absl::StatusOr<InspectReport> r = InspectInit(kInspectModel, kInspectVariant, /*seed=*/1, /*length=*/16);
  ASSERT_TRUE(r.ok()) << r.status();
  std::ostringstream text;
  PrintReport(*r, text);
  const std::string out = text.str();
  // Every parameter has a row.
  ASSERT_EQ(r->params.size(), r->model.params.size());
  for (const std::string& path : r->model.params.Paths()) EXPECT_THAT(out, HasSubstr(path + " "));
  // Mimetic conv ≈ I on layer 3: one tap of K = 4 is 1, the others 0.
  for (const ParamStats& s : r->params) {
    if (s.path == "layers/3/mixer/conv1d/weight") {
      EXPECT_EQ(s.min, 0.0);
      EXPECT_EQ(s.max, 1.0);
      EXPECT_DOUBLE_EQ(s.mean, 0.25);
      EXPECT_DOUBLE_EQ(s.zero_fraction, 0.75);
    }
    if (s.path == "layers/3/mixer/dt_bias") EXPECT_NEAR(s.mean, 0.5413, 1e-4);
  }
  // Both transformed layers look further back than any default one (measured: 0.96 and 0.99 against
  // 0.61..0.78; A ≈ 1 alone keeps the default init's small Δ, so its decay exp(AΔ) is closer to 1).
  ASSERT_EQ(r->mean_masks.size(), 8u);
  EXPECT_GT(r->mean_masks[3], 0.95);
  EXPECT_GT(r->mean_masks[5], 0.95);
  for (int l : {0, 1, 2, 4, 6, 7}) {
    EXPECT_LT(r->mean_masks[l], 0.9) << l;
    EXPECT_EQ(r->model.spec.layers(l).mamba2().a_log_scale(), 1.0);
  }
  EXPECT_THAT(out, HasSubstr("layer 3 (mamba2): mean over j <= i = 0.9"));
  EXPECT_THAT(out, HasSubstr("; A = -exp(-8 A_log)\n"));
  EXPECT_THAT(out, HasSubstr("; A = -exp(-2 A_log)\n"));
  EXPECT_THAT(out,
              HasSubstr("init: compose(default_init, on_layers([3], mimetic), on_layers([5], mimetic_a"));
}

TEST(InspectInitTest, BadInputNamesWhatWasExpected) {
  EXPECT_THAT(InspectInit(kInspectModel, "init { bogus {} }", 1, 8).status().message(),
              AllOf(HasSubstr("has no field named \"bogus\""), HasSubstr("expected Variant text")));
  EXPECT_THAT(InspectInit(kInspectModel, "init { named { name: \"nope\" } }", 1, 8).status().message(),
              HasSubstr("registered: "));
  EXPECT_THAT(InspectInit(kInspectModel, kInspectVariant, 1, 0).status().message(), HasSubstr(">= 1"));
}

}  // namespace
}  // namespace examples
