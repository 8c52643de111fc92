#include "mimetic/experiments/results/aggregate.h"

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

Experiment WithLrAxis() {
  Experiment e = ParseExperiment(R"pb(
                   name: "agg"
                   variants { name: "default" }
                   variants { name: "mimetic" }
                   eval { lengths: [ 50, 100 ] }
                   seeds: [ 1, 2, 3 ]
                   sweep {
                     axes {
                       fields: "train.lr"
                       values: [ "1e-3", "5e-4" ]
                     }
                   }
                 )pb")
                     .value();
  return e;
}

RunResult Finished(const std::string& variant, const std::string& lr, uint64_t seed, double exact50,
                   double exact100, double loss) {
  RunResult r;
  r.point.variant = variant;
  r.point.seed = seed;
  r.point.axes = {{"lr", lr}};
  r.point.dir = "points/" + variant + "/lr=" + lr + "/seed" + std::to_string(seed);
  r.finished = true;
  r.result.set_final_loss(loss);
  for (auto [len, x] : {std::pair<int, double>{50, exact50}, {100, exact100}}) {
    LengthAccuracy* a = r.result.add_final();
    a->set_length(len);
    a->set_exact(x);
    a->set_token(x / 2);
  }
  return r;
}

TEST(StatsTest, MeanAndStandardErrorSkipNaN) {
  Stat s = MeanSe({0.9, 0.8, 1.0, NAN});
  EXPECT_EQ(s.n, 3);
  EXPECT_NEAR(s.mean, 0.9, 1e-12);
  EXPECT_NEAR(s.se, 0.1 / std::sqrt(3.0), 1e-12);  // sample std 0.1
  EXPECT_EQ(MeanSe({0.5}).se, 0);
  EXPECT_TRUE(std::isnan(MeanSe({}).mean));
  EXPECT_EQ(FormatStat(MeanSe({})), "n/a");
  EXPECT_EQ(FormatStat(s), "0.900 ± 0.058");
}

TEST(AggregateTest, ChoosesTheRateWithTheBestExactAccuracyThenTheLowerLoss) {
  std::vector<RunResult> runs;
  for (uint64_t seed : {1, 2, 3}) {
    // default: 5e-4 is better at 50 (0.6 vs 0.4) although 1e-3 is better at 100.
    runs.push_back(Finished("default", "1e-3", seed, 0.4, 0.3, 1.0));
    runs.push_back(Finished("default", "5e-4", seed, 0.6, 0.1, 1.5));
    // mimetic: equal accuracy, so the lower loss (1e-3) wins.
    runs.push_back(Finished("mimetic", "1e-3", seed, 1.0, 0.9, 0.2));
    runs.push_back(Finished("mimetic", "5e-4", seed, 1.0, 0.95, 0.3));
  }
  Aggregate a = AggregateRuns(WithLrAxis(), runs);
  ASSERT_EQ(a.groups.size(), 2u);
  EXPECT_EQ(a.select_length, 50);
  EXPECT_EQ(a.groups[0].Label(), "default");
  EXPECT_EQ(a.groups[0].lr, "5e-4");
  EXPECT_NEAR(a.groups[0].exact.at(100).mean, 0.1, 1e-12);
  EXPECT_EQ(a.groups[0].runs.size(), 3u);
  EXPECT_EQ(a.groups[1].lr, "1e-3");
  EXPECT_NEAR(a.groups[1].exact.at(100).mean, 0.9, 1e-12);
  const std::string md = SummaryMarkdown(WithLrAxis(), a);
  EXPECT_THAT(md, HasSubstr("| default | 3 | 5e-4 |"));
  EXPECT_THAT(md, HasSubstr("| mimetic | 1e-3 (chosen) |"));
  const std::string csv = SummaryCsv(WithLrAxis(), a);
  EXPECT_THAT(csv, HasSubstr("variant,lr,length,seeds,exact_mean"));
  EXPECT_THAT(csv, HasSubstr("default,5e-4,100,3,0.1,"));
}

// `:scaling` has an axis named "length" beside the eval length column: two "length" columns made a
// reader keyed by name (csv.DictReader) keep one. The axis is headed "axis_length".
TEST(AggregateTest, SummaryCsvHasNoTwoColumnsWithOneName) {
  Experiment e = ParseExperiment(R"pb(
                   name: "agg"
                   variants { name: "default" }
                   eval { lengths: [ 50 ] }
                   seeds: [ 1 ]
                   sweep {
                     axes {
                       name: "length"
                       fields: "train.steps"
                       values: [ "10" ]
                     }
                     axes {
                       name: "seeds2"
                       fields: "train.batch_size"
                       values: [ "4" ]
                     }
                   }
                 )pb")
                     .value();
  RunResult r = Finished("default", "", 1, 0.5, 0.5, 1.0);
  r.point.axes = {{"length", "10"}, {"seeds2", "4"}};
  const std::string csv = SummaryCsv(e, AggregateRuns(e, {r}));
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header,
            "variant,axis_length,seeds2,lr,length,seeds,exact_mean,exact_se,token_mean,token_se,loss_mean,"
            "loss_se");
}

TEST(AggregateTest, SelectionLengthCanBeChosenAndUnfinishedPointsAreListed) {
  Experiment e = WithLrAxis();
  e.mutable_sweep()->set_select_length(100);
  std::vector<RunResult> runs = {Finished("default", "1e-3", 1, 0.4, 0.3, 1.0),
                                 Finished("default", "5e-4", 1, 0.6, 0.1, 1.5)};
  RunResult pending;
  pending.point.dir = "points/default/lr=1e-3/seed2";
  runs.push_back(pending);
  Aggregate a = AggregateRuns(e, runs);
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].lr, "1e-3");
  EXPECT_THAT(a.unfinished, ::testing::ElementsAre("points/default/lr=1e-3/seed2"));
  EXPECT_THAT(SummaryMarkdown(e, a), HasSubstr("Not finished (1)"));
}

TEST(AggregateTest, DivergedRunsAreCountedAndLoseTheSelection) {
  std::vector<RunResult> runs = {Finished("default", "1e-3", 1, 0, 0, NAN),
                                 Finished("default", "5e-4", 1, 0, 0, 2.0)};
  runs[0].result.set_diverged(true);
  Aggregate a = AggregateRuns(WithLrAxis(), runs);
  EXPECT_EQ(a.groups[0].lr, "5e-4");
  runs[1].result.set_diverged(true);
  runs[1].result.set_final_loss(NAN);
  a = AggregateRuns(WithLrAxis(), runs);
  EXPECT_EQ(a.groups[0].diverged, 1);
  EXPECT_THAT(SummaryMarkdown(WithLrAxis(), a), HasSubstr("(1 diverged)"));
}

// A finished point of a sweep over the task (a "copy<L>"-style axis applied by override) and the rate.
RunResult TaskPoint(const std::string& task_override, const std::string& lr,
                    std::map<int, std::pair<double, double>> exact_token) {
  RunResult r;
  r.point.variant = "default";
  r.point.seed = 1;
  r.point.axes = {{"task", task_override.substr(0, 8)}, {"lr", lr}};
  r.point.overrides = {"task=" + task_override, "train.lr=" + lr};
  r.point.dir = "points/default/" + lr;
  r.finished = true;
  r.result.set_final_loss(1.0);
  for (const auto& [len, et] : exact_token) {
    LengthAccuracy* a = r.result.add_final();
    a->set_length(len);
    a->set_exact(et.first);
    a->set_token(et.second);
  }
  return r;
}

Experiment TaskAndLrSweep(const std::string& base_task) {
  Experiment e = ParseExperiment(absl::StrCat(R"pb(
                                                name: "sel"
                                                variants { name: "default" }
                                                eval { lengths: [ 8, 16, 32 ] }
                                                seeds: [ 1 ]
                                                sweep {
                                                  axes {
                                                    fields: "train.lr"
                                                    values: [ "1e-3", "1e-4" ]
                                                  }
                                                } task)pb",
                                              base_task))
                     .value();
  return e;
}

// Fig. 9-like: the point trains copy at L = 16 (its task set by the sweep's override); 1e-3 copies the
// first eval length 8 perfectly but 16 poorly, 1e-4 copies 16 well. Before, every point was chosen at
// eval.lengths(0) = 8 (1e-3); now at its own training length 16.
TEST(AggregateTest, ChoosesTheRateAtThePointsOwnTrainingLength) {
  const std::string copy16 = "{ copy { max_len: 16 context_len: 64 } }";
  std::vector<RunResult> runs = {TaskPoint(copy16, "1e-3", {{8, {1.0, 1.0}}, {16, {0.2, 0.6}}}),
                                 TaskPoint(copy16, "1e-4", {{8, {0.9, 0.95}}, {16, {0.8, 0.9}}})};
  const Experiment e = TaskAndLrSweep("{ copy { max_len: 8 context_len: 64 } }");
  Aggregate a = AggregateRuns(e, runs);
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].lr, "1e-4");
  EXPECT_EQ(a.groups[0].select_length, 16);
  EXPECT_EQ(a.groups[0].select_metric, "exact");
  EXPECT_THAT(SummaryMarkdown(e, a), HasSubstr("| 1e-4 (chosen) | exact@16 |"));
  // A training length that is not evaluated falls back to the first eval length.
  const std::string copy12 = "{ copy { max_len: 12 context_len: 64 } }";
  runs = {TaskPoint(copy12, "1e-3", {{8, {1.0, 1.0}}, {16, {0.2, 0.6}}}),
          TaskPoint(copy12, "1e-4", {{8, {0.9, 0.95}}, {16, {0.8, 0.9}}})};
  a = AggregateRuns(e, runs);
  EXPECT_EQ(a.groups[0].lr, "1e-3");
  EXPECT_EQ(a.groups[0].select_length, 8);
}

// MQAR is read per query: rate a gets fewer whole examples right (0.1 vs 0.2) but more queries (0.6 vs
// 0.4). Before, the all-queries-exact score chose b.
TEST(AggregateTest, ChoosesMqarRatesByPerQueryAccuracy) {
  const std::string mqar16 = "{ mqar { vocab: 64 seq_len: 16 num_kv_pairs: 4 } }";
  const std::vector<RunResult> runs = {TaskPoint(mqar16, "1e-3", {{16, {0.1, 0.6}}}),
                                       TaskPoint(mqar16, "1e-4", {{16, {0.2, 0.4}}})};
  const Experiment e = TaskAndLrSweep(mqar16);
  const Aggregate a = AggregateRuns(e, runs);
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].lr, "1e-3");
  EXPECT_EQ(a.groups[0].select_length, 16);
  EXPECT_EQ(a.groups[0].select_metric, "per-query");
  EXPECT_THAT(SummaryMarkdown(e, a), HasSubstr("| 1e-3 (chosen) | per-query@16 |"));
}

}  // namespace
}  // namespace mimetic::experiments
