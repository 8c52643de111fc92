#include "mimetic/experiments/config/sweep.h"

#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/runner/testing/tiny_experiment.h"

namespace mimetic::experiments {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Experiment Base() {
  return TinyExperiment({"name=s", "train.steps=4", "train.batch_size=2", "seeds=[1, 2]"});
}

SweepAxis* AddAxis(Experiment* e, const std::string& field, std::vector<std::string> values) {
  SweepAxis* a = e->mutable_sweep()->add_axes();
  a->add_fields(field);
  for (const std::string& v : values) a->add_values(v);
  return a;
}

TEST(SweepTest, WithoutAxesTheGridIsVariantsTimesSeeds) {
  std::vector<GridPoint> grid = ExpandGrid(Base()).value();
  ASSERT_EQ(grid.size(), 4u);
  EXPECT_EQ(grid[0].dir, "points/default/seed1");
  EXPECT_EQ(grid[1].dir, "points/mimetic/seed1");
  EXPECT_EQ(grid[3].dir, "points/mimetic/seed2");
  for (size_t i = 0; i < grid.size(); ++i) EXPECT_EQ(grid[i].index, static_cast<int>(i));
}

TEST(SweepTest, AxesMultiplyInOrderAndCanBeRestrictedToVariants) {
  Experiment e = Base();
  AddAxis(&e, "train.lr", {"1e-3", "5e-4", "1e-4"});
  SweepAxis* c = AddAxis(&e, "variants[mimetic].init[0].mimetic.c", {"2", "8"});
  c->add_variants("mimetic");
  std::vector<GridPoint> grid = ExpandGrid(e).value();
  // Per seed: default 3 rates + mimetic 3 rates x 2 values of c.
  ASSERT_EQ(grid.size(), 2u * (3 + 6));
  EXPECT_EQ(grid[0].dir, "points/default/lr=1e-3/seed1");
  EXPECT_EQ(grid[3].dir, "points/mimetic/lr=1e-3,c=2/seed1");
  EXPECT_EQ(grid[4].dir, "points/mimetic/lr=1e-3,c=8/seed1");
  EXPECT_THAT(grid[4].overrides, ElementsAre("train.lr=1e-3", "variants[mimetic].init[0].mimetic.c=8"));
  EXPECT_THAT(grid[4].axes, ElementsAre(AxisValue{"lr", "1e-3"}, AxisValue{"c", "8"}));
  Experiment one = PointExperiment(e, grid[4]).value();
  ASSERT_EQ(one.variants_size(), 1);
  EXPECT_EQ(one.variants(0).name(), "mimetic");
  EXPECT_EQ(one.variants(0).init(0).mimetic().c(), 8.0);  // exact: a double
  EXPECT_DOUBLE_EQ(one.train().lr(), 1e-3);
  EXPECT_THAT(one.seeds(), ElementsAre(1u));
  EXPECT_FALSE(one.has_sweep());
}

TEST(SweepTest, ModelFieldAxesApplyBeforeTheSpecIsResolved) {
  Experiment e = Base();
  AddAxis(&e, "model.default_layer.mamba2.d_state", {"8", "16"})->set_name("N");
  std::vector<GridPoint> grid = ExpandGrid(e).value();
  ASSERT_EQ(grid.size(), 8u);
  EXPECT_EQ(grid[1].dir, "points/default/N=16/seed1");
  Experiment one = PointExperiment(e, grid[1]).value();
  ASSERT_EQ(one.model().layers_size(), 2);  // resolved
  EXPECT_EQ(one.model().layers(1).mamba2().d_state(), 16);
}

TEST(SweepTest, MessageValuesNeedShortNames) {
  Experiment e = Base();
  SweepAxis* a = AddAxis(&e, "model.default_layer",
                         {"{ mamba1 { d_state: 8 } }", "{ mamba2 { d_state: 8 headdim: 8 } }"});
  a->set_name("arch");
  EXPECT_THAT(ExpandGrid(e).status().message(), HasSubstr("a name that can be a directory"));
  EXPECT_THAT(ExpandGrid(e).status().message(), HasSubstr("give the axis value_names"));
  a->add_value_names("mamba1");
  a->add_value_names("mamba2");
  std::vector<GridPoint> grid = ExpandGrid(e).value();
  EXPECT_EQ(grid[0].dir, "points/default/arch=mamba1/seed1");
  EXPECT_TRUE(PointExperiment(e, grid[0]).value().model().layers(0).has_mamba1());
}

TEST(SweepTest, BadSweepsAreRefusedNamingTheAxis) {
  auto error = [](std::function<void(Experiment*)> edit) {
    Experiment e = Base();
    edit(&e);
    return std::string(ExpandGrid(e).status().message());
  };
  EXPECT_THAT(error([](Experiment* e) { AddAxis(e, "train.nonsense", {"1"}); }),
              HasSubstr("sweep.axes[0].fields[0]: \"train.nonsense\" is not a field path: TrainSpec has no "
                        "field 'nonsense'"));
  // Named as the path it is, not as the bad axis name its last part ("/x") would make.
  EXPECT_THAT(error([](Experiment* e) { AddAxis(e, "../x", {"1"}); }),
              HasSubstr("sweep.axes[0].fields[0]: \"../x\" is not a field path"));
  EXPECT_THAT(error([](Experiment* e) { AddAxis(e, "train.lr", {}); }),
              HasSubstr("sweep.axes[0].values: []"));
  EXPECT_THAT(error([](Experiment* e) { e->mutable_sweep()->add_axes()->add_values("1"); }),
              HasSubstr("sweep.axes[0].fields: []"));
  EXPECT_THAT(error([](Experiment* e) {
                AddAxis(e, "train.lr", {"1e-3", "1e-3"});
              }),
              HasSubstr("appears twice"));
  EXPECT_THAT(error([](Experiment* e) { AddAxis(e, "train.lr", {"2"}); }), HasSubstr("train.lr = 2"));
  EXPECT_THAT(error([](Experiment* e) { AddAxis(e, "train.lr", {"1e-3"})->add_variants("nope"); }),
              HasSubstr("no variant is named 'nope'"));
  EXPECT_THAT(error([](Experiment* e) { AddAxis(e, "variants[7].name", {"x"}); }), HasSubstr("out of range"));
  EXPECT_THAT(error([](Experiment* e) { e->mutable_sweep()->set_select_length(99); }),
              HasSubstr("not one of eval.lengths"));
  EXPECT_THAT(error([](Experiment* e) {
                AddAxis(e, "train.lr", {"1e-3"});
                AddAxis(e, "train.weight_decay", {"1e-3"})->set_name("lr");
              }),
              HasSubstr("names two axes"));
}

TEST(SweepTest, TwoAxesThatSetOneFieldAreRefusedNamingBoth) {
  // The later axis would win at every point and the summary would list values never used (issue 30, item 7).
  Experiment e = Base();
  AddAxis(&e, "train.lr", {"1e-3", "5e-4"});
  AddAxis(&e, "train.steps", {"4"});
  AddAxis(&e, "train.lr", {"1e-4"})->set_name("rate");
  EXPECT_THAT(std::string(ExpandGrid(e).status().message()),
              HasSubstr("sweep.axes[2].fields[0]: \"train.lr\" is also set by sweep.axes[0]"));
  // A field named by index in one axis and by variant name in the other is the same field.
  e = Base();
  AddAxis(&e, "variants[mimetic].init[0].mimetic.c", {"2"});
  AddAxis(&e, "variants[1].init[0].mimetic.c", {"8"})->set_name("c2");
  EXPECT_THAT(std::string(ExpandGrid(e).status().message()), HasSubstr("is also set by sweep.axes[0]"));
  // One field in several axes is fine when no variant takes both.
  e = Base();
  AddAxis(&e, "train.lr", {"1e-3"})->add_variants("default");
  SweepAxis* other = AddAxis(&e, "train.lr", {"1e-4"});
  other->set_name("lr_mimetic");
  other->add_variants("mimetic");
  EXPECT_TRUE(ExpandGrid(e).ok()) << ExpandGrid(e).status();
}

TEST(SweepTest, AnAxisOverAFieldEveryPointSetsIsRefused) {
  for (const char* field : {"seeds", "name", "output_dir"}) {
    Experiment e = Base();
    AddAxis(&e, field, {"3"});
    EXPECT_THAT(std::string(ExpandGrid(e).status().message()),
                HasSubstr(absl::StrCat("sweep.axes[0].fields[0]: \"", field, "\"")))
        << field;
  }
}

TEST(SweepTest, AxisValuesThatParseEqualAreRefusedNamingBoth) {
  auto error = [](const std::string& field, std::vector<std::string> values) {
    Experiment e = Base();
    AddAxis(&e, field, values);
    return std::string(ExpandGrid(e).status().message());
  };
  EXPECT_THAT(error("train.steps", {"4", "6", "04"}), HasSubstr("sweep.axes[0].values: '4' and '04'"));
  EXPECT_THAT(error("train.lr", {"1e-3", "0.001"}), HasSubstr("sweep.axes[0].values: '1e-3' and '0.001'"));
  Experiment layers = Base();
  SweepAxis* a =
      AddAxis(&layers, "model.default_layer", {"{ mamba2 { d_state: 8 } }", "{mamba2{d_state:8}}"});
  a->add_value_names("spaced");
  a->add_value_names("tight");
  EXPECT_THAT(std::string(ExpandGrid(layers).status().message()), HasSubstr("the same value"));
  // Values that differ stay a grid.
  Experiment e = Base();
  AddAxis(&e, "train.lr", {"1e-3", "1e-4"});
  EXPECT_TRUE(ExpandGrid(e).ok()) << ExpandGrid(e).status();
}

TEST(SweepTest, DuplicateVariantNamesSeedsAndEscapingNamesAreRefused) {
  Experiment e = Base();
  e.mutable_variants(1)->set_name("default");
  EXPECT_THAT(ValidateExperiment(&e).message(), HasSubstr("share one run directory"));
  e = Base();
  e.add_seeds(1);
  EXPECT_THAT(ValidateExperiment(&e).message(), HasSubstr("1 appears twice"));
  e = Base();
  e.mutable_variants(0)->set_name("../outside");
  EXPECT_THAT(ValidateExperiment(&e).message(), HasSubstr("variants[0].name"));
}

TEST(SweepTest, CountGridCountsWithoutExpanding) {
  Experiment e = Base();
  AddAxis(&e, "train.lr", {"1e-3", "5e-4", "1e-4"});
  AddAxis(&e, "variants[mimetic].init[0].mimetic.c", {"2", "8"})->add_variants("mimetic");
  const GridSize size = CountGrid(e);
  EXPECT_EQ(size.configurations, 3 + 3 * 2);
  EXPECT_EQ(size.points, 2 * (3 + 3 * 2));
  EXPECT_EQ(static_cast<int64_t>(ExpandGrid(e).value().size()), size.points);
}

// Issue 51 item 7: a 2,000,000-point sweep was listed and checked (3.6 GB, 50 s, nothing printed) before
// anything said it could not run. A grid over the limit is refused from its count alone.
TEST(SweepTest, AGridOverTheLimitIsRefusedBeforeItIsListed) {
  Experiment e = Base();
  e.clear_seeds();
  for (int s = 1; s <= 1001; ++s) e.add_seeds(s);
  std::vector<std::string> rates;
  for (int i = 1; i <= 500; ++i) rates.push_back(absl::StrCat(i, "e-5"));
  AddAxis(&e, "train.lr", rates);
  absl::StatusOr<std::vector<GridPoint>> grid = ExpandGrid(e);
  EXPECT_EQ(grid.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(grid.status().message(), HasSubstr("1001000 grid points (1001 seeds x 1000 configurations"));
  EXPECT_THAT(grid.status().message(), HasSubstr("at most 1000000 can run"));
}

TEST(SweepTest, ALargeGridSaysWhatItIsDoing) {
  Experiment seeds = Base();
  seeds.clear_seeds();
  for (int s = 1; s <= kAnnouncedGridPoints / 2; ++s) seeds.add_seeds(s);
  std::ostringstream said;
  ASSERT_TRUE(ExpandGrid(seeds, &said).ok());
  EXPECT_EQ(said.str(),
            "sweep: listing 100000 grid points and checking 2 configurations before anything runs\n");

  Experiment configurations = Base();
  configurations.clear_seeds();
  configurations.add_seeds(1);
  std::vector<std::string> rates;
  for (int i = 1; i <= kConfigurationsPerProgressLine / 2; ++i) rates.push_back(absl::StrCat(i, "e-6"));
  AddAxis(&configurations, "train.lr", rates);
  said.str("");
  ASSERT_TRUE(ExpandGrid(configurations, &said).ok());
  EXPECT_THAT(said.str(), HasSubstr("checking 10000 configurations"));
  EXPECT_THAT(said.str(), HasSubstr("sweep: checked 10000 of 10000 configurations\n"));
  // A small grid says nothing.
  said.str("");
  ASSERT_TRUE(ExpandGrid(Base(), &said).ok());
  EXPECT_EQ(said.str(), "");
}

}  // namespace
}  // namespace mimetic::experiments
