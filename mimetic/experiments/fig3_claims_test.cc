// Fig. 3's claims on synthetic results over the real grid of its smoke preset: the factorial effects,
// and the fallback to the training length when nothing generalises to 2x.
#include <cstdlib>
#include <functional>
#include <map>

#include "gtest/gtest.h"
#include "mimetic/experiments/aggregate.h"
#include "mimetic/experiments/figure.h"
#include "mimetic/experiments/sweep.h"

namespace mimetic::experiments {
namespace {

std::string Root() { return std::string(std::getenv("TEST_SRCDIR")) + "/mimetic"; }

// exact(point, length) gives each run's final exact accuracy; every grid point of the smoke preset
// (2 archs x 16 combinations x its seeds) gets one.
using ExactFn = std::function<double(const GridPoint&, int)>;

std::map<std::string, Verdict> Fig3Verdicts(const ExactFn& exact) {
  FigureRun run;
  run.preset = "smoke";
  run.experiment = LoadPreset(Root(), "fig3", "smoke", {}).value();
  const std::vector<GridPoint> grid = ExpandGrid(run.experiment).value();
  for (const GridPoint& p : grid) {
    RunResult r;
    r.point = p;
    r.finished = true;
    for (int len : run.experiment.eval().lengths()) {
      LengthAccuracy* a = r.result.add_final();
      a->set_length(len);
      a->set_exact(exact(p, len));
    }
    run.summary.runs.push_back(r);
  }
  run.summary.aggregate = AggregateRuns(run.experiment, run.summary.runs);
  std::map<std::string, Verdict> out;
  const std::vector<Claim> claims = FindFigure("fig3").value()->claims(run).value();
  for (const Claim& c : claims) out[c.id] = c.verdict;
  return out;
}

bool On(const GridPoint& p, const std::string& axis) {
  for (const AxisValue& a : p.axes) {
    if (a.axis == axis) return a.value == "1";
  }
  ADD_FAILURE() << "no axis " << axis << " in " << p.dir;
  return false;
}

TEST(Fig3ClaimsTest, OnlyAHelpingMamba1AtTwiceTheLengthReproducesTheMamba1Claims) {
  const auto v = Fig3Verdicts([](const GridPoint& p, int len) { return len <= 8 && On(p, "A") ? 0.9 : 0.0; });
  EXPECT_EQ(v.count("fig3.all"), 0u);
  EXPECT_EQ(v.at("fig3.m1_only_a"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig3.m1_delta_none"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig3.m1_conv_harmful"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig3.m2_bc_alone"), Verdict::kNotReproduced);
  EXPECT_EQ(v.count("fig3.train_len.m1_only_a"), 0u);
}

TEST(Fig3ClaimsTest, NothingAtTwiceTheLengthIsNotTestedAndTheRulesAreReadAtTheTrainingLength) {
  // Fits the training length only with A and Δ together; 0 at 2x and 6x everywhere.
  const auto v = Fig3Verdicts(
      [](const GridPoint& p, int len) { return len == 4 && On(p, "A") && On(p, "D") ? 0.8 : 0.0; });
  EXPECT_EQ(v.at("fig3.all"), Verdict::kNotTested);
  EXPECT_EQ(v.count("fig3.m1_only_a"), 0u);                       // the paper's reading is not judged
  EXPECT_EQ(v.at("fig3.train_len.m1_only_a"), Verdict::kPartly);  // A helps, but so does Δ
  EXPECT_EQ(v.at("fig3.train_len.m1_delta_none"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig3.train_len.m2_a"), Verdict::kReproduced);
  EXPECT_EQ(v.count("fig3.train_len.m2_longest"), 0u);  // compares 2x with 6x: not read at L
}

}  // namespace
}  // namespace mimetic::experiments
