// Claims of the sweep figures on synthetic results over the real grid of their smoke presets: Fig. 3's
// factorial effects (and its fallback to the training length when nothing generalises to 2x), Fig. 7's
// state-size comparisons.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/figures/figure.h"
#include "mimetic/experiments/figures/figure_common.h"
#include "mimetic/experiments/figures/variant_setup.h"
#include "mimetic/experiments/results/aggregate.h"

namespace mimetic::experiments {
namespace {

std::string Root() { return std::string(std::getenv("TEST_SRCDIR")) + "/mimetic"; }

// The figure's claims on `run`'s runs, once aggregated, by id.
std::map<std::string, Claim> JudgeClaims(FigureRun* run, const std::string& figure) {
  run->summary.aggregate = AggregateRuns(run->experiment, run->summary.runs);
  std::map<std::string, Claim> out;
  for (const Claim& c : JudgeFigure(*FindFigure(figure).value(), *run)) out[c.id] = c;
  return out;
}

// The figure's verdicts on `run`'s runs, once aggregated.
std::map<std::string, Verdict> Judge(FigureRun* run, const std::string& figure) {
  std::map<std::string, Verdict> out;
  for (const auto& [id, c] : JudgeClaims(run, figure)) out[id] = c.verdict;
  return out;
}

// exact(point, length) gives each run's final exact accuracy; every grid point of the smoke preset
// (2 archs x 16 combinations x its seeds) gets one.
using ExactFn = std::function<double(const GridPoint&, int)>;

// `token` (default: the same as exact) gives each run's final per-token accuracy. `preset` names the
// grid (smoke unless a rule needs variants only a larger preset has, e.g. Fig. 5's head dim above 32).
// Every grid has seeds 1, 2, 3, as the cpu presets: the rules' t intervals need two or more seeds
// (one seed has no spread; some smoke presets have one), and with three a seed-independent synthetic
// result has SE 0.
FigureRun SyntheticRun(const std::string& figure, const ExactFn& exact, const ExactFn& token = nullptr,
                       const std::string& preset = "smoke") {
  FigureRun run;
  run.preset = preset;
  run.experiment = LoadPreset(Root(), figure, preset, {"seeds=[1, 2, 3]"}).value();
  const std::vector<GridPoint> grid = ExpandGrid(run.experiment).value();
  for (const GridPoint& p : grid) {
    RunResult r;
    r.point = p;
    r.finished = true;
    for (int len : run.experiment.eval().lengths()) {
      LengthAccuracy* a = r.result.add_final();
      a->set_length(len);
      a->set_exact(exact(p, len));
      a->set_token(token ? token(p, len) : exact(p, len));
    }
    run.summary.runs.push_back(r);
  }
  return run;
}

std::map<std::string, Verdict> Verdicts(const std::string& figure, const ExactFn& exact,
                                        const ExactFn& token = nullptr, const std::string& preset = "smoke") {
  FigureRun run = SyntheticRun(figure, exact, token, preset);
  return Judge(&run, figure);
}

std::string AxisOf(const GridPoint& p, const std::string& axis) {
  for (const AxisValue& a : p.axes) {
    if (a.axis == axis) return a.value;
  }
  ADD_FAILURE() << "no axis " << axis << " in " << p.dir;
  return "";
}
bool On(const GridPoint& p, const std::string& axis) { return AxisOf(p, axis) == "1"; }

// The eval lengths of a figure's preset, e.g. {L, 2L, 4L}.
std::vector<int> EvalLengths(const std::string& figure, const std::string& preset) {
  const auto& l = LoadPreset(Root(), figure, preset, {}).value().eval().lengths();
  return std::vector<int>(l.begin(), l.end());
}

TEST(FigureClaimsTest, Fig3OnlyAHelpingMamba1AtTwiceTheLengthReproducesTheMamba1Claims) {
  const auto v =
      Verdicts("fig3", [](const GridPoint& p, int len) { return len <= 8 && On(p, "A") ? 0.9 : 0.0; });
  EXPECT_EQ(v.count("fig3.all"), 0u);
  EXPECT_EQ(v.at("fig3.m1_only_a"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig3.m1_delta_none"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig3.m1_conv_harmful"), Verdict::kNotReproduced);
  // BC-only and none are both 0 at 2x: comparing zeros says nothing.
  EXPECT_EQ(v.at("fig3.m2_bc_alone"), Verdict::kNotTested);
  EXPECT_EQ(v.count("fig3.train_len.m1_only_a"), 0u);
}

// A null claim must not get easier as the interval widens: Δ adds 0, 0.15, 0.30 by seed (mean 0.15 ±
// 0.087, inside t_{0.975, 2} SE = 0.37 but far above the 0.05 margin). "Only A has an effect" is then
// partly, not reproduced, and "no benefit from Δ" not reproduced.
TEST(FigureClaimsTest, Fig3ANoisyEffectIsStillAnEffect) {
  const auto v = Verdicts("fig3", [](const GridPoint& p, int len) {
    if (len > 8 || AxisOf(p, "arch") != "mamba1") return 0.0;
    return (On(p, "A") ? 0.6 : 0.0) + (On(p, "D") ? 0.15 * (static_cast<double>(p.seed) - 1) : 0.0);
  });
  EXPECT_EQ(v.at("fig3.m1_only_a"), Verdict::kPartly);
  EXPECT_EQ(v.at("fig3.m1_delta_none"), Verdict::kNotReproduced);
}

// Mamba 2 (seeds 1, 2, 3): none 0.1, BC only 0.1, A only 0.5 and A+BC 0.5 + slope x (seed - offset), so
// the interaction per seed is slope x (seed - offset). 0.06, 0.07, 0.08 (0.070 ± 0.006): reproduced;
// 0.035, 0.040, 0.045: partly (> 0.025 and its t interval); -0.1, 0, 0.1: not reproduced. The issue's
// case, 0.011, 0.016, 0.021 (+0.016 ± 0.003, about two strings in 128), clears 2 SE and even the t
// interval but not the smallest effect: not reproduced (was partly).
TEST(FigureClaimsTest, Fig3InteractionHasTheStandardErrorOfThePerSeedContrast) {
  auto judge = [](double slope, double offset) {
    return Verdicts("fig3", [=](const GridPoint& p, int) {
      if (AxisOf(p, "arch") != "mamba2" || On(p, "D") || On(p, "conv")) return 0.0;
      if (!On(p, "A")) return 0.1;
      return On(p, "BC") ? 0.5 + slope * (static_cast<double>(p.seed) - offset) : 0.5;
    });
  };
  EXPECT_EQ(judge(0.01, -5).at("fig3.m2_interaction"), Verdict::kReproduced);
  EXPECT_EQ(judge(0.005, -6).at("fig3.m2_interaction"), Verdict::kPartly);
  EXPECT_EQ(judge(0.1, 2).at("fig3.m2_interaction"), Verdict::kNotReproduced);
  EXPECT_EQ(judge(0.005, -1.2).at("fig3.m2_interaction"), Verdict::kNotReproduced);
  // Interactions 0.05, 0.10, 0.15 (0.10 ± 0.029): above 0.05 and 2 SE (reproduced before), inside
  // t_{0.975, 2} = 4.303 SE = 0.124; but above 0.025 and ... still inside: not reproduced.
  EXPECT_EQ(judge(0.05, 0).at("fig3.m2_interaction"), Verdict::kNotReproduced);
}

TEST(FigureClaimsTest, Fig3NothingAtTwiceTheLengthIsNotTestedAndTheRulesAreReadAtTheTrainingLength) {
  // Fits the training length only with A and Δ together; 0 at 2x and 6x everywhere.
  FigureRun run = SyntheticRun(
      "fig3", [](const GridPoint& p, int len) { return len == 4 && On(p, "A") && On(p, "D") ? 0.8 : 0.0; });
  const auto c = JudgeClaims(&run, "fig3");
  EXPECT_EQ(c.at("fig3.m1_only_a").verdict, Verdict::kNotTested);  // the paper's reading, not judged
  EXPECT_EQ(c.at("fig3.m1_only_a").kind, ClaimKind::kPaper);
  EXPECT_EQ(c.at("fig3.m2_longest").verdict, Verdict::kNotTested);        // 0 everywhere at 6x
  EXPECT_EQ(c.at("fig3.train_len.m1_only_a").verdict, Verdict::kPartly);  // A helps, but so does Δ
  EXPECT_EQ(c.at("fig3.train_len.m1_only_a").kind, ClaimKind::kStandIn);
  // At L, Δ is what lets Mamba 1 fit: "no benefit from Δ" (a 2x statement) has no stand-in.
  EXPECT_EQ(c.count("fig3.train_len.m1_delta_none"), 0u);
  EXPECT_EQ(c.at("fig3.train_len.m2_a").verdict, Verdict::kReproduced);
  EXPECT_EQ(c.count("fig3.train_len.m2_longest"), 0u);  // compares 2x with 6x: not read at L
}

// Mamba 2 copies 2x with A; Mamba 1 fits only L (with A). Before, the guard was one for both
// architectures, so Mamba 1's claims were read on its zeros at 2x (m1_only_a "not reproduced",
// m1_delta_none "reproduced"); now they are not tested, with stand-ins at L.
TEST(FigureClaimsTest, Fig3GuardsTwiceTheLengthPerArchitecture) {
  const auto v = Verdicts("fig3", [](const GridPoint& p, int len) {
    if (!On(p, "A")) return 0.0;
    return AxisOf(p, "arch") == "mamba2" || len == 4 ? 0.9 : 0.0;
  });
  EXPECT_EQ(v.at("fig3.m1_only_a"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig3.m1_delta_none"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig3.train_len.m1_only_a"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig3.m2_a"), Verdict::kReproduced);
  EXPECT_EQ(v.count("fig3.train_len.m2_a"), 0u);
}

// Mamba 1's accuracy is 0.1 A + 0.8 Δ plus a per-seed offset. Pooled on/off lists for A carry Δ's
// spread (SE ~0.15 against an effect of 0.1: not clearly positive); the per-seed contrast is 0.1 in
// every seed, so A is clearly positive (and Δ too: only partly "only A").
TEST(FigureClaimsTest, Fig3EffectsHaveTheStandardErrorOfThePerSeedContrast) {
  const auto v = Verdicts("fig3", [](const GridPoint& p, int) {
    return 0.1 * On(p, "A") + 0.8 * On(p, "D") + 0.05 * static_cast<double>(p.seed);
  });
  EXPECT_EQ(v.at("fig3.m1_only_a"), Verdict::kPartly);
}

// Fig. 3 m2_longest: the best Mamba 2 combination with A, BC and conv on (over Δ) against the best lacking
// one of them, at 2x and at the longest length.
TEST(FigureClaimsTest, Fig3LongestReadsTheInteractionGapAtBothLengths) {
  auto gaps = [](double rest2, double full6, double rest6) {
    return [=](const GridPoint& p, int len) {
      if (AxisOf(p, "arch") != "mamba2" || len == 4) return 1.0;
      if (!On(p, "A") && !On(p, "D") && !On(p, "BC") && !On(p, "conv")) return 0.0;  // none: 0
      const bool full = On(p, "A") && On(p, "BC") && On(p, "conv");
      if (len == 8) return full ? 1.0 : rest2;
      return full ? full6 : rest6;
    };
  };
  // Gap 0.2 at 2x, 0.7 at 6x. Before (full recipe minus none: 1.0 at both) this was only partly.
  EXPECT_EQ(Verdicts("fig3", gaps(0.8, 1.0, 0.3)).at("fig3.m2_longest"), Verdict::kReproduced);
  // No gap at 6x (before: partly, full minus none 0.5).
  EXPECT_EQ(Verdicts("fig3", gaps(0.8, 0.5, 0.5)).at("fig3.m2_longest"), Verdict::kNotReproduced);
  // 0 everywhere at 6x (before: not reproduced).
  EXPECT_EQ(Verdicts("fig3", gaps(0.8, 0.0, 0.0)).at("fig3.m2_longest"), Verdict::kNotTested);
}

// Fig. 6's smoke grid has V = 4, 16 and L = 3, 4 (eval 3, 4, 6, 8). Mamba 1: mimetic copies 2L at the
// small vocabulary only, the default never; Mamba 2: mimetic everywhere, the default at V = 4 only.
TEST(FigureClaimsTest, Fig6ClaimsHoldOnTheirPattern) {
  const auto v = Verdicts("fig6", [](const GridPoint& p, int len) {
    const bool small_v = AxisOf(p, "V") == "4", m1 = AxisOf(p, "arch") == "mamba1";
    if (len <= 4) return 1.0;  // everyone fits the training length
    if (p.variant == "mimetic") return !m1 || small_v ? 1.0 : 0.0;
    return !m1 && small_v ? 1.0 : 0.0;
  });
  EXPECT_EQ(v.at("fig6.m1_mimetic_degrades"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig6.m1_default_never"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig6.m2_mimetic_consistent"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig6.m2_default_degrades"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig6.m2_mimetic_prevents"), Verdict::kReproduced);
  EXPECT_EQ(v.count("fig6.all"), 0u);  // 2L is informative: no stand-in at the training length
  EXPECT_EQ(v.count("fig6.train_len.m2_mimetic_prevents"), 0u);
}

TEST(FigureClaimsTest, Fig6DefaultNeverIsNotTestedWhenNothingCopies2L) {
  const auto v = Verdicts("fig6", [](const GridPoint&, int len) { return len <= 4 ? 1.0 : 0.0; });
  EXPECT_EQ(v.at("fig6.m1_default_never"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig6.m2_mimetic_consistent"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig6.m2_default_degrades"), Verdict::kNotTested);  // nothing to degrade from
  EXPECT_EQ(v.at("fig6.all"), Verdict::kNotTested);
  // "The default never generalises" read at L tests a statement the paper did not make: not emitted
  // (before: "not reproduced" because the default fits L).
  EXPECT_EQ(v.count("fig6.train_len.m1_default_never"), 0u);
  // At the training length everyone fits: no degradation (a failing pattern).
  EXPECT_EQ(v.at("fig6.train_len.m2_default_degrades"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig6.train_len.m2_mimetic_consistent"), Verdict::kReproduced);
}

// The pattern of the first cpu run: nothing copies 2L; at L mimetic fits every vocabulary while the
// default fits only the smallest, so the stand-in claims about vocabulary size hold.
TEST(FigureClaimsTest, Fig6StandInAtTheTrainingLengthWhenNothingCopies2L) {
  const auto v = Verdicts("fig6", [](const GridPoint& p, int len) {
    const int l = std::atoi(AxisOf(p, "L").c_str());
    if (len != l) return 0.0;
    return p.variant == "mimetic" || AxisOf(p, "V") == "4" ? 1.0 : 0.0;
  });
  EXPECT_EQ(v.at("fig6.all"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig6.m2_mimetic_prevents"), Verdict::kNotTested);  // 0 vs 0 at 2L compares nothing
  EXPECT_EQ(v.at("fig6.train_len.m2_default_degrades"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig6.train_len.m2_mimetic_prevents"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig6.train_len.m2_mimetic_consistent"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig6.train_len.m1_mimetic_degrades"), Verdict::kPartly);  // fits, does not degrade
  EXPECT_EQ(v.count("fig6.train_len.m1_default_never"), 0u);
}

// The first run at the cut cpu preset: mimetic Mamba 2 copies 2L a little, Mamba 1 not at all. Mamba 1's
// 2L claims compare zeros: not tested, with its readings at L as stand-ins; Mamba 2's stay judged at 2L.
TEST(FigureClaimsTest, Fig6ArchitectureAtZeroAt2LIsReadAtTheTrainingLength) {
  const auto v = Verdicts("fig6", [](const GridPoint& p, int len) {
    const int l = std::atoi(AxisOf(p, "L").c_str());
    const bool m1 = AxisOf(p, "arch") == "mamba1", mimetic = p.variant == "mimetic";
    if (len == l) return mimetic ? 1.0 : 0.0;
    return !m1 && mimetic ? 0.3 : 0.0;
  });
  EXPECT_EQ(v.at("fig6.m1_mimetic_degrades"), Verdict::kNotTested);  // was "not reproduced" on zeros
  EXPECT_EQ(v.at("fig6.m1_default_never"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig6.train_len.m1_mimetic_degrades"), Verdict::kPartly);  // fits, does not degrade
  EXPECT_EQ(v.at("fig6.m2_mimetic_prevents"), Verdict::kReproduced);        // 0.3 vs 0 at 2L, judged there
  EXPECT_EQ(v.count("fig6.train_len.m2_mimetic_prevents"), 0u);
  EXPECT_EQ(v.count("fig6.all"), 0u);
}

// Readings at the training length are stand-ins, counted apart from the paper's claims.
TEST(FigureClaimsTest, Fig6ReadingsAtTheTrainingLengthAreStandIns) {
  FigureRun run = SyntheticRun("fig6", [](const GridPoint&, int len) { return len <= 4 ? 1.0 : 0.0; });
  for (const auto& [id, c] : JudgeClaims(&run, "fig6")) {
    EXPECT_EQ(c.kind, id.rfind("fig6.train_len.", 0) == 0 ? ClaimKind::kStandIn : ClaimKind::kPaper) << id;
  }
}

// Fig. 8's smoke grid: widths 16, 32, depths 1, 2, copy (L 4) and MQAR (T 8). Mimetic fits L
// everywhere and generalises better when deeper; the default learns nothing.
TEST(FigureClaimsTest, Fig8ClaimsHoldOnTheirPattern) {
  const auto v = Verdicts("fig8", [](const GridPoint& p, int len) {
    if (p.variant == "default") return 0.0;
    const int l = TaskAndLength(AxisOf(p, "task")).second;
    if (len == l) return 1.0;
    return len == 2 * l ? (AxisOf(p, "depth") == "2" ? 1.0 : 0.9) : 0.0;
  });
  EXPECT_EQ(v.at("fig8.two_layers_suffice"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig8.deeper_generalises"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig8.mqar_deeper"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig8.mimetic_better"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig8.wide_mamba2_copies"), Verdict::kReproduced);
  EXPECT_EQ(v.count("fig8.train_len.two_layers_suffice"), 0u);  // 2L is informative: no stand-in
  // Nothing learned anywhere: no informative cell.
  const auto none = Verdicts("fig8", [](const GridPoint&, int) { return 0.0; });
  EXPECT_EQ(none.at("fig8.mimetic_better"), Verdict::kNotTested);
  EXPECT_EQ(none.at("fig8.deeper_generalises"), Verdict::kNotTested);  // 0 at every depth
  EXPECT_EQ(none.at("fig8.mqar_deeper"), Verdict::kNotTested);
  EXPECT_EQ(none.at("fig8.two_layers_suffice"), Verdict::kNotReproduced);
}

// Everything fits L but the shallow models copy 2L only at 0.3: the paper's figure is drawn at 2L, so
// "two layers suffice" and "the widest Mamba 2 copies at every depth" are not reproduced (before, read
// at L: reproduced).
TEST(FigureClaimsTest, Fig8ShallowAndWideClaimsAreReadAtTwiceTheLength) {
  auto pattern = [](double shallow_2l) {
    return [=](const GridPoint& p, int len) {
      const int l = TaskAndLength(AxisOf(p, "task")).second;
      if (p.variant == "default") return 0.0;
      if (len == l) return 1.0;
      return len == 2 * l ? (AxisOf(p, "depth") == "2" ? 1.0 : shallow_2l) : 0.0;
    };
  };
  const auto v = Verdicts("fig8", pattern(0.3));
  EXPECT_EQ(v.at("fig8.two_layers_suffice"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig8.wide_mamba2_copies"), Verdict::kNotReproduced);
  EXPECT_EQ(Verdicts("fig8", pattern(0.6)).at("fig8.two_layers_suffice"), Verdict::kPartly);
  // Nothing copies 2L: the training-length readings come back as stand-ins.
  FigureRun run = SyntheticRun("fig8", [](const GridPoint& p, int len) {
    return len == TaskAndLength(AxisOf(p, "task")).second && p.variant == "mimetic" ? 1.0 : 0.0;
  });
  const auto c = JudgeClaims(&run, "fig8");
  EXPECT_EQ(c.at("fig8.two_layers_suffice").verdict, Verdict::kNotReproduced);
  EXPECT_EQ(c.at("fig8.train_len.two_layers_suffice").verdict, Verdict::kReproduced);
  EXPECT_EQ(c.at("fig8.train_len.two_layers_suffice").kind, ClaimKind::kStandIn);
  EXPECT_EQ(c.at("fig8.train_len.wide_mamba2_copies").kind, ClaimKind::kStandIn);
}

// Mamba 1 learns nothing at 2L (left out); Mamba 2 generalises better when deeper: the claim reads Mamba 2.
TEST(FigureClaimsTest, Fig8DeeperGeneralisesLeavesOutAnArchitectureAtZero) {
  auto at2l = [](double deep, double shallow) {
    return [=](const GridPoint& p, int len) {
      const int l = TaskAndLength(AxisOf(p, "task")).second;
      if (len != 2 * l || p.variant != "mimetic" || AxisOf(p, "arch") == "mamba1") return 0.0;
      return AxisOf(p, "depth") == "2" ? deep : shallow;
    };
  };
  EXPECT_EQ(Verdicts("fig8", at2l(0.9, 0.3)).at("fig8.deeper_generalises"), Verdict::kReproduced);
  EXPECT_EQ(Verdicts("fig8", at2l(0.3, 0.9)).at("fig8.deeper_generalises"), Verdict::kNotReproduced);
}

// Mimetic above the default in every cell but by a margin (0.02) below the smallest effect: a raw-mean
// "above" is no evidence, so not reproduced (was partly).
TEST(FigureClaimsTest, Fig8MimeticBetterWithinNoiseIsNotEvidence) {
  const auto v = Verdicts("fig8", [](const GridPoint& p, int len) {
    const int l = TaskAndLength(AxisOf(p, "task")).second;
    if (len != 2 * l) return 0.0;
    if (p.variant == "default") return 0.10;
    return 0.12;
  });
  EXPECT_EQ(v.at("fig8.mimetic_better"), Verdict::kNotReproduced);
}

// Fig. 8's smoke MQAR has 1 pair at T 8, 2 at 2L = 16: per-query chance 0.5 there. Cells where both
// inits sit at chance are not informative; mimetic clearly above in half of the rest is partly.
TEST(FigureClaimsTest, Fig8MimeticBetterCountsNoCellAtChance) {
  auto pattern = [](double mqar_default, double mqar_mimetic, double copy_mimetic) {
    return [=](const GridPoint& p, int len) {
      const auto [task, l] = TaskAndLength(AxisOf(p, "task"));
      if (len != 2 * l) return 0.0;
      if (task == "mqar") return p.variant == "mimetic" ? mqar_mimetic : mqar_default;
      return p.variant == "mimetic" ? copy_mimetic : 0.0;
    };
  };
  // MQAR at chance for both (0.50 vs 0.52): only the 8 copy cells count, mimetic clearly above in all.
  EXPECT_EQ(Verdicts("fig8", pattern(0.50, 0.52, 0.8)).at("fig8.mimetic_better"), Verdict::kReproduced);
  // MQAR clearly above chance and mimetic clearly above there; copy at 0 for both: 8 of 8 informative.
  EXPECT_EQ(Verdicts("fig8", pattern(0.6, 0.9, 0.0)).at("fig8.mimetic_better"), Verdict::kReproduced);
  // MQAR informative and equal, copy clearly better: clearly above in half the cells: partly.
  EXPECT_EQ(Verdicts("fig8", pattern(0.7, 0.7, 0.8)).at("fig8.mimetic_better"), Verdict::kPartly);
  // Everything at chance: nothing informative (before: the MQAR cells counted at 0.5 > 0.05).
  EXPECT_EQ(Verdicts("fig8", pattern(0.5, 0.5, 0.0)).at("fig8.mimetic_better"), Verdict::kNotTested);
}

// The case: Mamba 1 at chance on MQAR (0.52 vs 0.51 per query where chance is 0.5) decided
// "MQAR prefers deeper networks" against the paper; now it is left out and Mamba 2 (0.6 -> 0.9) decides.
TEST(FigureClaimsTest, Fig8MqarDeeperLeavesOutAnArchitectureAtChance) {
  auto pattern = [](double m1_shallow, double m1_deep, double m2_shallow, double m2_deep) {
    return [=](const GridPoint& p, int len) {
      const auto [task, l] = TaskAndLength(AxisOf(p, "task"));
      if (len != 2 * l || task != "mqar" || p.variant != "mimetic") return 0.0;
      const bool deep = AxisOf(p, "depth") == "2";
      if (AxisOf(p, "arch") == "mamba1") return deep ? m1_deep : m1_shallow;
      return deep ? m2_deep : m2_shallow;
    };
  };
  EXPECT_EQ(Verdicts("fig8", pattern(0.52, 0.51, 0.6, 0.9)).at("fig8.mqar_deeper"), Verdict::kReproduced);
  EXPECT_EQ(Verdicts("fig8", pattern(0.52, 0.51, 0.6, 0.64)).at("fig8.mqar_deeper"), Verdict::kPartly);
  EXPECT_EQ(Verdicts("fig8", pattern(0.52, 0.51, 0.9, 0.6)).at("fig8.mqar_deeper"), Verdict::kNotReproduced);
  EXPECT_EQ(Verdicts("fig8", pattern(0.52, 0.51, 0.5, 0.53)).at("fig8.mqar_deeper"), Verdict::kNotTested);
}

// Fig. 9 on the cpu grid: copy and MQAR at L = 8, 16, 32, 64 (eval 8 ... 128). `acc(variant, task, L)`
// gives the accuracy at L (exact for copy, per query for MQAR; the synthetic result sets both alike).
std::map<std::string, Verdict> Fig9(
    const std::function<double(const std::string&, const std::string&, int)>& acc) {
  return Verdicts(
      "fig9",
      [&](const GridPoint& p, int len) {
        const auto [task, l] = TaskAndLength(AxisOf(p, "task"));
        return len == l ? acc(p.variant, task, l) : 0.0;
      },
      nullptr, "cpu");
}

// The default fits L = 8 only; mimetic up to 32: the 0.9 crossings (interpolated on log L) are about 8.6
// and 34, more than 2x apart, on both tasks.
TEST(FigureClaimsTest, Fig9MimeticFittingTwiceTheLengthReproduces) {
  const auto v = Fig9([](const std::string& variant, const std::string&, int l) {
    return l <= (variant == "mimetic" ? 32 : 8) ? 1.0 : 0.0;
  });
  EXPECT_EQ(v.at("fig9.copy_fits_longer"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig9.mqar_fits_longer"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig9.generalises_better"), Verdict::kNotTested);  // 0 at every 2L on both tasks
  // Both fit every length of the grid: the grid does not reach the default's limit.
  const auto all = Fig9([](const std::string&, const std::string&, int) { return 1.0; });
  EXPECT_EQ(all.at("fig9.copy_fits_longer"), Verdict::kNotTested);
  // Nothing fits any length (before: "not reproduced").
  const auto none = Fig9([](const std::string&, const std::string&, int) { return 0.0; });
  EXPECT_EQ(none.at("fig9.copy_fits_longer"), Verdict::kNotTested);
  EXPECT_EQ(none.at("fig9.mqar_fits_longer"), Verdict::kNotTested);
}

// Grid-point artifacts: on copy the default is at 0.89 at 16 and mimetic at 0.91 (both 0 at 32), so the
// last grid point >= 0.9 was 8 vs 16 ("2x": reproduced before); the crossings are about 15 and 16, made
// of a difference of 0.02 that is no finding: not reproduced (partly before the noise test).
// On MQAR the default holds 0.9 to 16 but breaks down (0.5) only at about 45, and mimetic fits all of
// 8..64 (>= 64): 64 is not 2x 45, partly (before: 64 >= 2 x 16, reproduced).
TEST(FigureClaimsTest, Fig9ReadsCrossingsNotGridPoints) {
  const auto v = Fig9([](const std::string& variant, const std::string& task, int l) {
    if (task == "copy") {
      if (l == 8) return 1.0;
      return l == 16 ? (variant == "mimetic" ? 0.91 : 0.89) : 0.0;
    }
    if (variant == "mimetic") return 1.0;
    return std::map<int, double>{{8, 0.95}, {16, 0.92}, {32, 0.7}, {64, 0.3}}.at(l);
  });
  EXPECT_EQ(v.at("fig9.copy_fits_longer"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig9.mqar_fits_longer"), Verdict::kPartly);
  // The default fits longer than mimetic: not reproduced.
  const auto worse = Fig9([](const std::string& variant, const std::string&, int l) {
    return l <= (variant == "mimetic" ? 8 : 32) ? 1.0 : 0.0;
  });
  EXPECT_EQ(worse.at("fig9.copy_fits_longer"), Verdict::kNotReproduced);
}

// Fig. 9's generalisation: the default above mimetic at 2L on copy fails; MQAR, 0 for both, is left out.
TEST(FigureClaimsTest, Fig9GeneralisesBetterReadsOnlyTasksSomeInitGeneralisesOn) {
  auto at2l = [](double mimetic, double standard) {
    return [=](const GridPoint& p, int len) {
      const std::string task = AxisOf(p, "task");
      if (task.rfind("copy", 0) != 0 || len != 2 * std::stoi(task.substr(4))) return 0.0;
      return p.variant == "mimetic" ? mimetic : standard;
    };
  };
  EXPECT_EQ(Verdicts("fig9", at2l(0.3, 0.5)).at("fig9.generalises_better"), Verdict::kNotReproduced);
  EXPECT_EQ(Verdicts("fig9", at2l(0.6, 0.3)).at("fig9.generalises_better"), Verdict::kReproduced);
}

// On the cpu grid (3 seeds), copy at 2L: the default at 0.1; mimetic 0.25 above it on average but
// 0.0, 0.3, 0.75 by seed (SE 0.22). The mean over training lengths clears the default by more than 0.05
// ("reproduced" before), the per-seed gain not beyond its t interval: not reproduced. The same gain in
// every seed is.
TEST(FigureClaimsTest, Fig9GeneralisesBetterNeedsTwoStandardErrorsOverSeeds) {
  auto judge = [](const std::vector<double>& mimetic_by_seed) {
    return Verdicts(
        "fig9",
        [&](const GridPoint& p, int len) {
          const auto [task, l] = TaskAndLength(AxisOf(p, "task"));
          if (task != "copy" || len != 2 * l) return 0.0;
          return p.variant == "mimetic" ? mimetic_by_seed.at(p.seed - 1) : 0.1;
        },
        nullptr, "cpu");
  };
  EXPECT_EQ(judge({0.0, 0.3, 0.75}).at("fig9.generalises_better"), Verdict::kNotReproduced);
  EXPECT_EQ(judge({0.35, 0.35, 0.35}).at("fig9.generalises_better"), Verdict::kReproduced);
}

// Fig. 5 on the cpu grid (head dims 8, 32, 1024; eval L, 2L, 4L). The paper's pattern, its opposite,
// and nothing learned: zeros compare with nothing (and "every variant is close at L" is vacuous then).
TEST(FigureClaimsTest, Fig5ClaimsOnTheirPatternTheOppositeAndZeros) {
  const std::vector<int> lens = EvalLengths("fig5", "cpu");
  auto pattern = [&](std::map<std::string, std::vector<double>> by_variant) {
    return [=](const GridPoint& p, int len) {
      const std::vector<double>& v = by_variant.at(p.variant);
      for (size_t i = 0; i < lens.size(); ++i) {
        if (lens[i] == len) return v[i];
      }
      return 0.0;
    };
  };
  const auto paper = Verdicts("fig5",
                              pattern({{"linear_attention_8", {1, 0.1, 0}},
                                       {"linear_attention_32", {1, 0.6, 0}},
                                       {"linear_attention_1024", {1, 0.65, 0}},
                                       {"mimetic_N32", {1, 0.8, 0.4}},
                                       {"mimetic_N64", {1, 0.8, 0.8}}}),
                              nullptr, "cpu");
  for (const char* id :
       {"fig5.fit_small", "fig5.la32_close", "fig5.la8_under", "fig5.la_big_barely", "fig5.n64_better"}) {
    EXPECT_EQ(paper.at(id), Verdict::kReproduced) << id;
  }
  const auto opposite = Verdicts("fig5",
                                 pattern({{"linear_attention_8", {0.2, 0.7, 0}},
                                          {"linear_attention_32", {1, 0.6, 0}},
                                          {"linear_attention_1024", {1, 0.9, 0}},
                                          {"mimetic_N32", {1, 0.3, 0.4}},
                                          {"mimetic_N64", {1, 0.8, 0.1}}}),
                                 nullptr, "cpu");
  for (const char* id :
       {"fig5.fit_small", "fig5.la32_close", "fig5.la8_under", "fig5.la_big_barely", "fig5.n64_better"}) {
    EXPECT_EQ(opposite.at(id), Verdict::kNotReproduced) << id;
  }
  // Before: 0 vs 0 was "not reproduced" and fit_small passed (every variant equally at 0).
  const auto zeros = Verdicts(
      "fig5", [](const GridPoint&, int) { return 0.0; }, nullptr, "cpu");
  for (const char* id :
       {"fig5.fit_small", "fig5.la32_close", "fig5.la8_under", "fig5.la_big_barely", "fig5.n64_better"}) {
    EXPECT_EQ(zeros.at(id), Verdict::kNotTested) << id;
  }
}

// Fig. 4's smoke grid (stack copy, MQAR, sort at L 8, eval 8, 16). Nothing learned: the stack-copy
// comparisons are not tested (before: "not reproduced").
TEST(FigureClaimsTest, Fig4StackCopyClaimsAreNotTestedWhenNothingFits) {
  const auto v = Verdicts("fig4", [](const GridPoint&, int) { return 0.0; });
  EXPECT_EQ(v.at("fig4.stack_baseline_no_2x"), Verdict::kNotTested);  // the default does not fit L
  EXPECT_EQ(v.at("fig4.stack_mimetic_generalises"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig4.stack_mimetic_faster"), Verdict::kNotTested);  // neither reaches 0.9
  // The default fits L and not 2L where mimetic copies 2L (`mimetic_2l`): reproduced (0 at 2L) or partly
  // (0.3); fits both: not reproduced; not 2L where mimetic does not either: a failure both share, not
  // tested (reproduced before the guard).
  auto fits = [](double at2l, double mimetic_2l = 0.0) {
    return [=](const GridPoint& p, int len) {
      if (p.variant == "mimetic_layer4") return len == 8 ? 1.0 : mimetic_2l;
      if (p.variant != "default") return 0.0;
      return len == 8 ? 1.0 : at2l;
    };
  };
  EXPECT_EQ(Verdicts("fig4", fits(0.0, 0.9)).at("fig4.stack_baseline_no_2x"), Verdict::kReproduced);
  EXPECT_EQ(Verdicts("fig4", fits(0.3, 0.9)).at("fig4.stack_baseline_no_2x"), Verdict::kPartly);
  EXPECT_EQ(Verdicts("fig4", fits(0.0)).at("fig4.stack_baseline_no_2x"), Verdict::kNotTested);
  EXPECT_EQ(Verdicts("fig4", fits(1.0)).at("fig4.stack_baseline_no_2x"), Verdict::kNotReproduced);
  EXPECT_EQ(Verdicts("fig4", fits(1.0)).at("fig4.stack_mimetic_generalises"), Verdict::kNotReproduced);
}

// Fig. 4's sorting claim is read at 2x only. Mimetic above attention at L but below at 2x was
// "reproduced" before (either length counted); now not reproduced.
TEST(FigureClaimsTest, Fig4SortBeatsAttentionIsReadAtTwiceTheLength) {
  auto sort = [](double mimetic_2l) {
    return [=](const GridPoint& p, int len) {
      if (AxisOf(p, "task") != "sort") return 0.0;
      if (p.variant == "mimetic_layer4") return len == 8 ? 1.0 : mimetic_2l;
      return len == 8 ? 0.5 : 0.6;
    };
  };
  EXPECT_EQ(Verdicts("fig4", sort(0.2)).at("fig4.sort_beats_attention"), Verdict::kNotReproduced);
  EXPECT_EQ(Verdicts("fig4", sort(0.9)).at("fig4.sort_beats_attention"), Verdict::kReproduced);
  EXPECT_EQ(Verdicts("fig4", [](const GridPoint&, int) { return 0.0; }).at("fig4.sort_beats_attention"),
            Verdict::kNotTested);
}

// Eight layers' maps of a copy example (string of 4 pasted from token 5): `sharp` maps look back at the
// source token at every paste position (look-behind score 1), the others at the current token (score 0).
FinalMaps SyntheticMaps(bool sharp) {
  const int64_t length = 4, paste = 5, t = paste + length + 2;
  models::LayerMap m;
  m.length = t;
  m.map.assign(t * t, 0.0);
  m.mask.assign(t * t, 1.0);
  for (int64_t p = 0; p < t; ++p)
    m.map[p * t + (sharp && p >= paste && p < paste + length ? p - length : p)] = 1;
  FinalMaps f;
  f.maps.assign(8, m);
  f.paste_start = paste;
  f.length = length;
  return f;
}

// The map claims read every seed with maps (mean ± SE), not the first one; no maps: not tested.
TEST(FigureClaimsTest, MapClaimsReadEverySeed) {
  auto judged = [](const std::string& figure, const std::function<bool(const RunResult&)>& sharp) {
    // Fig. 5's smoke grid has no head dim above 32: its cpu grid.
    FigureRun run = SyntheticRun(
        figure, [](const GridPoint&, int) { return 0.5; }, nullptr, figure == "fig5" ? "cpu" : "smoke");
    run.maps = [=](const RunResult& r) -> absl::StatusOr<FinalMaps> { return SyntheticMaps(sharp(r)); };
    return JudgeClaims(&run, figure);
  };
  // Fig. 2: seeds 1 and 2 sharp, seed 3 not: mean 0.67, partly (the first seed alone said reproduced).
  EXPECT_EQ(judged("fig2", [](const RunResult& r) { return r.point.seed != 3; }).at("fig2.sharp").verdict,
            Verdict::kPartly);
  EXPECT_EQ(judged("fig2", [](const RunResult&) { return true; }).at("fig2.sharp").verdict,
            Verdict::kReproduced);
  // Fig. 1 and Fig. 5: mimetic sharp in every seed, the other not: reproduced; the reverse: not.
  auto mimetic = [](const RunResult& r) { return r.point.variant.rfind("mimetic", 0) == 0; };
  auto other = [&](const RunResult& r) { return !mimetic(r); };
  EXPECT_EQ(judged("fig1", mimetic).at("fig1.maps").verdict, Verdict::kReproduced);
  EXPECT_EQ(judged("fig1", other).at("fig1.maps").verdict, Verdict::kNotReproduced);
  EXPECT_EQ(judged("fig5", mimetic).at("fig5.sharper").verdict, Verdict::kReproduced);
  EXPECT_EQ(judged("fig5", other).at("fig5.sharper").verdict, Verdict::kNotReproduced);
  // Fig. 5 with a Mamba that copies nothing at L: its map is noise, so not tested however sharp.
  FigureRun plateau = SyntheticRun(
      "fig5", [](const GridPoint& p, int) { return p.variant.rfind("mimetic", 0) == 0 ? 0.0 : 0.9; }, nullptr,
      "cpu");
  plateau.maps = [=](const RunResult& r) -> absl::StatusOr<FinalMaps> { return SyntheticMaps(mimetic(r)); };
  EXPECT_EQ(JudgeClaims(&plateau, "fig5").at("fig5.sharper").verdict, Verdict::kNotTested);
  // Fig. 4: mimetic's layer-4 map equals the attention layer's in every seed, the default's does not.
  EXPECT_EQ(judged("fig4", [](const RunResult& r) { return r.point.variant != "default"; })
                .at("fig4.maps_resemble")
                .verdict,
            Verdict::kReproduced);
  // Fig. 4 where the mimetic model copies nothing at L: its layer 4 still carries the attention-like
  // init, so the same maps say nothing of what it learned: not tested.
  FigureRun unfit =
      SyntheticRun("fig4", [](const GridPoint& p, int) { return p.variant == "mimetic_layer4" ? 0.0 : 0.9; });
  unfit.maps = [](const RunResult& r) -> absl::StatusOr<FinalMaps> {
    return SyntheticMaps(r.point.variant != "default");
  };
  EXPECT_EQ(JudgeClaims(&unfit, "fig4").at("fig4.maps_resemble").verdict, Verdict::kNotTested);
  // No seed has maps (no checkpoints): not tested.
  FigureRun none = SyntheticRun("fig2", [](const GridPoint&, int) { return 0.5; });
  none.maps = [](const RunResult&) -> absl::StatusOr<FinalMaps> {
    return absl::NotFoundError("no checkpoint");
  };
  EXPECT_EQ(JudgeClaims(&none, "fig2").at("fig2.sharp").verdict, Verdict::kNotTested);
}

// Fig. 1's smoke model, a Mamba 2 of width 16 and state 8: its key dimension 8 has room for the training
// length 6, not for 2L = 12. Both variants share the model, so one line.
TEST(FigureClaimsTest, RoomLinesNameTheKeyDimensionAgainstEachLength) {
  FigureRun run = SyntheticRun("fig1", [](const GridPoint&, int) { return 0.5; });
  run.summary.aggregate = AggregateRuns(run.experiment, run.summary.runs);
  const std::vector<std::string> room = RoomLines(run);
  ASSERT_EQ(room.size(), 1u);
  EXPECT_THAT(room[0],
              ::testing::HasSubstr("default: Mamba 2 key min(N 8, D 16) = 8 vs lengths 6, 12 (no room)"));
  EXPECT_THAT(room[0], ::testing::HasSubstr("; training row "));
  EXPECT_THAT(room[0], ::testing::HasSubstr(" tokens, longest eval example 27 tokens"));
}

TEST(FigureClaimsTest, AVerdictReadWhereTheKeyDimensionIsAtMostTheLengthSaysSo) {
  // Fig. 1's smoke model: key dimension min(N 8, D 16) = 8; lengths 6 (room) and 12 (no room).
  FigureRun run = SyntheticRun("fig1", [](const GridPoint&, int) { return 0.5; });
  const std::map<std::string, Claim> claims = JudgeClaims(&run, "fig1");
  ASSERT_TRUE(claims.count("fig1.mimetic_2x"));
  EXPECT_THAT(
      claims.at("fig1.mimetic_2x").measured,
      ::testing::HasSubstr("[no room: every model's key dimension (at most 8) is <= the length read, 12]"));
  // A claim with no length reading (the attention maps) gets nothing.
  ASSERT_TRUE(claims.count("fig1.maps"));
  EXPECT_THAT(claims.at("fig1.maps").measured, ::testing::Not(::testing::HasSubstr("no room")));
  // The same model read only at 6 has room.
  Claim at6{"x.at6", "", "m", Verdict::kReproduced, "exact@6 >= 0.5"};
  std::vector<Claim> one = {at6};
  MarkNoRoom(run, &one);
  EXPECT_EQ(one[0].measured, "m");
}

// Fig. 2's hybrid copies with its softmax-attention layer, so its Mamba layers' key dimension does not
// limit it: only the plain Mamba 2 model lacks room at 2L = 12.
TEST(FigureClaimsTest, AModelWithSoftmaxAttentionHasRoom) {
  FigureRun run = SyntheticRun("fig2", [](const GridPoint&, int) { return 0.5; });
  run.summary.aggregate = AggregateRuns(run.experiment, run.summary.runs);
  const std::vector<std::string> room = RoomLines(run);
  ASSERT_EQ(room.size(), 2u);
  EXPECT_THAT(room[0], ::testing::HasSubstr(
                           "hybrid: Mamba 2 key min(N 8, D 16) = 8, and softmax attention (no key limit);"));
  EXPECT_THAT(room[1], ::testing::HasSubstr("vs lengths 6, 12 (no room)"));
  std::vector<Claim> at12 = {Claim{"x.at12", "", "m", Verdict::kReproduced, "hybrid exact@12 >= 0.95"}};
  MarkNoRoom(run, &at12);
  EXPECT_EQ(at12[0].measured, "m [no room for some models: key dimension 8 <= the length read, 12]");
  // Without the plain model, every model has room.
  std::vector<RunResult>& runs = run.summary.runs;
  runs.erase(std::remove_if(runs.begin(), runs.end(),
                            [](const RunResult& r) { return r.point.variant != "hybrid"; }),
             runs.end());
  run.summary.aggregate = AggregateRuns(run.experiment, run.summary.runs);
  at12[0].measured = "m";
  MarkNoRoom(run, &at12);
  EXPECT_EQ(at12[0].measured, "m");
}

// MQAR recalls pairs, not tokens: Fig. 4's smoke MQAR (T 8, 2 pairs) read at 16 asks the key dimension 8
// for 4 pairs (room), read at 64 for 16 (no room).
TEST(FigureClaimsTest, MqarIsShortOfRoomByItsPairs) {
  FigureRun run = SyntheticRun("fig4", [](const GridPoint&, int) { return 0.5; });
  std::vector<RunResult>& runs = run.summary.runs;
  runs.erase(std::remove_if(runs.begin(), runs.end(),
                            [](const RunResult& r) {
                              return AxisOf(r.point, "task") != "mqar" ||
                                     r.point.variant == "attention_layer4";
                            }),
             runs.end());
  run.summary.aggregate = AggregateRuns(run.experiment, run.summary.runs);
  std::vector<Claim> c = {Claim{"x.at16", "", "m", Verdict::kReproduced, "per-query@16 >= 0.9"},
                          Claim{"x.at64", "", "m", Verdict::kReproduced, "per-query@64 >= 0.9"}};
  MarkNoRoom(run, &c);
  EXPECT_EQ(c[0].measured, "m");
  EXPECT_EQ(c[1].measured,
            "m [no room: every model's key dimension (at most 8) is <= the 16 pairs read at 64]");
}

// The scaling target's smoke grid: widths 16, 32 (N 8, key 8 and 8), L 3 and 4, read at L and 2L.
// `fits`: every run's exact@L; mimetic_2x / default_2x: exact@2L at width 32 (0 at width 16).
std::map<std::string, Claim> Scaling(double fits, double mimetic_2x, double default_2x) {
  FigureRun run = SyntheticRun("scaling", [&](const GridPoint& p, int len) {
    const int L = AxisOf(p, "length") == "copy3" ? 3 : 4;
    if (len <= L) return fits;
    if (len != 2 * L || AxisOf(p, "width") != "32") return 0.0;
    return p.variant == "mimetic" ? mimetic_2x : default_2x;
  });
  return JudgeClaims(&run, "scaling");
}

TEST(FigureClaimsTest, ScalingNamesTheSmallestSizeWhereMimeticCopiesTwiceTheLength) {
  std::map<std::string, Claim> c = Scaling(1.0, 0.8, 0.0);
  EXPECT_EQ(c.at("scaling.mimetic_2x").verdict, Verdict::kReproduced);
  EXPECT_THAT(c.at("scaling.mimetic_2x").measured, ::testing::HasSubstr("L 4: smallest width 32, N 8"));
  EXPECT_EQ(c.at("scaling.default_never_2x").verdict, Verdict::kReproduced);
  EXPECT_EQ(c.at("scaling.mimetic_2x").kind, ClaimKind::kOtherTarget);
  // The default copying 2L too: its claim fails; mimetic below 0.5 but above the floor: partly.
  c = Scaling(1.0, 0.2, 0.7);
  EXPECT_EQ(c.at("scaling.mimetic_2x").verdict, Verdict::kPartly);
  EXPECT_THAT(c.at("scaling.mimetic_2x").measured, ::testing::HasSubstr("none reaches 0.5; best width 32"));
  EXPECT_EQ(c.at("scaling.default_never_2x").verdict, Verdict::kNotReproduced);
  // Nothing fits L: neither claim is tested.
  c = Scaling(0.3, 0.8, 0.8);
  EXPECT_EQ(c.at("scaling.mimetic_2x").verdict, Verdict::kNotTested);
  EXPECT_EQ(c.at("scaling.default_never_2x").verdict, Verdict::kNotTested);
}

// The scaling target's cpu grid (seeds 1, 2, 3 here): exact@2L at one size is a lottery between seeds, so
// a size counts only when its mean clears the level and its t interval. Every run fits L; mimetic copies
// 2L only at width 128, N 128, 2 layers, L 20, where seed 1 gives `seed1` and seeds 2 and 3 `seed2`.
std::map<std::string, Claim> ScalingSeeds(double seed1, double seed2) {
  FigureRun run = SyntheticRun(
      "scaling",
      [&](const GridPoint& p, int len) {
        const bool l20 = AxisOf(p, "length") == "copy20";
        if (len <= (l20 ? 20 : 12)) return 1.0;
        if (p.variant != "mimetic" || !l20 || len != 40 || AxisOf(p, "size") != "w128n128d2") return 0.0;
        return p.seed == 1 ? seed1 : seed2;
      },
      nullptr, "cpu");
  return JudgeClaims(&run, "scaling");
}

TEST(FigureClaimsTest, ScalingCountsASizeOnlyWhenItsSeedsAgree) {
  std::map<std::string, Claim> c = ScalingSeeds(0.7, 0.6);
  EXPECT_EQ(c.at("scaling.mimetic_2x").verdict, Verdict::kReproduced);
  EXPECT_THAT(c.at("scaling.mimetic_2x").measured,
              ::testing::HasSubstr("L 20: smallest width 128, N 128, 2 layers (key 128)"));
  // Seed 1 at 0.9, seeds 2 and 3 at 0: mean 0.30 ± 0.30, below 0.5 and within its t interval of 0, so not
  // even partly.
  c = ScalingSeeds(0.9, 0.0);
  EXPECT_EQ(c.at("scaling.mimetic_2x").verdict, Verdict::kNotReproduced);
  EXPECT_THAT(c.at("scaling.mimetic_2x").measured,
              ::testing::HasSubstr("L 20: none reaches 0.5; best width 128, N 128, 2 layers"));
  // Both seeds small but above the floor: partly. No model of either init copies 2L, so the default's
  // failure there is one both share: not tested (reproduced before the guard).
  c = ScalingSeeds(0.12, 0.08);
  EXPECT_EQ(c.at("scaling.mimetic_2x").verdict, Verdict::kPartly);
  EXPECT_EQ(c.at("scaling.default_never_2x").verdict, Verdict::kNotTested);
}

// The γ figure's smoke grid: γ = 0.3 and 1.0. The composite solution appears only at γ = 1.
TEST(FigureClaimsTest, GammaClaimsOnTheirPattern) {
  const auto v = Verdicts("gamma", [](const GridPoint& p, int) {
    return p.variant == "gamma" && AxisOf(p, "gamma") == "1.0" ? 0.8 : 0.0;
  });
  EXPECT_EQ(v.at("gamma.large_gamma_composite"), Verdict::kReproduced);
  EXPECT_EQ(v.at("gamma.small_gamma_neither"), Verdict::kPartly);  // the symmetric side is not measured
  const auto none = Verdicts("gamma", [](const GridPoint&, int) { return 0.0; });
  EXPECT_EQ(none.at("gamma.large_gamma_composite"), Verdict::kNotReproduced);
  EXPECT_EQ(none.at("gamma.small_gamma_neither"), Verdict::kNotTested);
}

// Fig. 7's smoke grid has N = 2, 4, 32 and lengths 4, 8, 12, 16. The default fits the training length
// only at N = 32 and nothing longer; mimetic copies log2(N) of the lengths: AUC 0.25 at N = 2 equals
// the default's at N = 32 = 16 x 2, and the copied length grows by 4 per doubling of N.
TEST(FigureClaimsTest, Fig7ClaimsHoldWhenMimeticUsesTheStateSixteenTimesBetter) {
  const auto v = Verdicts("fig7", [](const GridPoint& p, int len) {
    const int n = std::stoi(AxisOf(p, "N"));
    if (p.variant == "default") return n >= 32 && len == 4 ? 1.0 : 0.0;
    return len / 4 <= std::log2(n) ? 1.0 : 0.0;
  });
  EXPECT_EQ(v.at("fig7.default_needs_large_n"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig7.mimetic_16x"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig7.log_linear"), Verdict::kReproduced);
}

// The default learns nothing at any N (so its AUC at 16 N is 0) while mimetic copies: before, mimetic
// "matched" the default at 16 N; a default that does not fit L is no reference, so not tested.
TEST(FigureClaimsTest, Fig7Mimetic16xIsNotTestedWhenNoDefaultAt16NFitsL) {
  const auto v = Verdicts("fig7", [](const GridPoint& p, int len) {
    return p.variant == "mimetic" && len / 4 <= std::log2(std::stoi(AxisOf(p, "N"))) ? 1.0 : 0.0;
  });
  EXPECT_EQ(v.at("fig7.mimetic_16x"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig7.default_needs_large_n"), Verdict::kNotTested);  // the default fits L at no N
}

// One seed of the default fits L at a middle N, none at the largest (the cpu run: N 128 0.29 +- 0.29,
// N 256 0.00): the largest N alone said "not reproduced" on a lucky seed; no N fits L on average, so
// where the default starts to copy is beyond the grid. When a middle N fits in every seed, partly.
TEST(FigureClaimsTest, Fig7DefaultNeedsLargeNReadsTheBestStateSizeNotOneLuckySeed) {
  const auto lucky = Verdicts("fig7", [](const GridPoint& p, int len) {
    return p.variant == "default" && AxisOf(p, "N") == "4" && p.seed == 1 && len == 4 ? 0.9 : 0.0;
  });
  EXPECT_EQ(lucky.at("fig7.default_needs_large_n"), Verdict::kNotTested);
  const auto middle = Verdicts("fig7", [](const GridPoint& p, int len) {
    return p.variant == "default" && AxisOf(p, "N") == "4" && len == 4 ? 0.8 : 0.0;
  });
  EXPECT_EQ(middle.at("fig7.default_needs_large_n"), Verdict::kPartly);
}

TEST(FigureClaimsTest, Fig7ClaimsFailWhenBothInitsAreTheSame) {
  const auto v = Verdicts("fig7", [](const GridPoint& p, int len) {
    const int n = std::stoi(AxisOf(p, "N"));
    return len <= 4 * std::log2(n) ? 1.0 : 0.0;  // both grow with N, identically
  });
  EXPECT_EQ(v.at("fig7.default_needs_large_n"), Verdict::kNotReproduced);  // fits at every N
  EXPECT_EQ(v.at("fig7.mimetic_16x"), Verdict::kNotReproduced);            // not above default at N
  EXPECT_EQ(v.at("fig7.log_linear"), Verdict::kNotReproduced);             // default grows as fast
}

// Issue 47, rule 5 (in part): claims.md says what each compared model was trained as.
TEST(FigureClaimsTest, VariantSetupLinesSayWhatWasTrained) {
  FigureRun run = SyntheticRun("fig1", [](const GridPoint&, int) { return 0.5; });
  run.summary.aggregate = AggregateRuns(run.experiment, run.summary.runs);
  EXPECT_THAT(VariantSetupLines(run),
              ::testing::ElementsAre("default, mimetic: Mamba 2 (N 8, head dim 8) x 4, width 16; lr 0.002 "
                                     "linear (warmup 2), 6 steps, batch 4; copy V 8, strings 2..6, rows 33 "
                                     "tokens; seeds 1, 2, 3"));
  models::ModelSpec spec;
  for (int i = 0; i < 3; ++i) spec.add_layers()->mutable_mamba2()->set_d_state(32);
  spec.add_layers()->mutable_attention();
  spec.add_layers()->mutable_mamba2()->set_d_state(32);
  EXPECT_EQ(LayersText(spec),
            "Mamba 2 (N 32, head dim 64) x 3 + attention (1 head) + Mamba 2 (N 32, head dim 64)");
}

// Issue 47, rule 4 (in part): a teacher that started from mimetic init makes every claim that compares
// with mimetic init circular, fixed in each figure's code: the transfer's "mimetic gets close" too (only
// Figs. 10 and 11 were marked before), whatever the outcome.
TEST(FigureClaimsTest, ATeacherFromMimeticInitMakesEveryMimeticComparisonCircular) {
  FigureRun run = SyntheticRun("transfer", [](const GridPoint&, int) { return 1.0; });
  EXPECT_EQ(JudgeClaims(&run, "transfer").at("transfer.mimetic_close").verdict, Verdict::kReproduced);
  run.teacher.from_mimetic_init = true;
  const auto c = JudgeClaims(&run, "transfer");
  EXPECT_EQ(c.at("transfer.mimetic_close").verdict, Verdict::kNotTested);
  EXPECT_THAT(c.at("transfer.mimetic_close").measured, ::testing::HasSubstr("[circular"));
  EXPECT_NE(c.at("transfer.fits_better").verdict, Verdict::kNotTested);  // compares with the default
}

// Issue 47, rule 2: a failure both variants share is no evidence. Fig. 1's smoke grid reads 6 and 12.
// `d` and `m` give the default's and mimetic's exact accuracy at (L, 2L).
TEST(FigureClaimsTest, Fig1DefaultPlateausNeedsMimeticToSucceedWhereTheDefaultFails) {
  auto judge = [](double d1, double d2, double m1, double m2) {
    return Verdicts("fig1",
                    [=](const GridPoint& p, int len) {
                      const bool mimetic = p.variant == "mimetic";
                      return len == 6 ? (mimetic ? m1 : d1) : (mimetic ? m2 : d2);
                    })
        .at("fig1.default_plateaus");
  };
  EXPECT_EQ(judge(0.0, 0.0, 1.0, 0.0), Verdict::kReproduced);     // plateaus where mimetic fits
  EXPECT_EQ(judge(1.0, 0.0, 1.0, 0.8), Verdict::kPartly);         // fails 2L where mimetic copies it
  EXPECT_EQ(judge(1.0, 1.0, 1.0, 1.0), Verdict::kNotReproduced);  // the default copies 2L
  // The kept cpu result's shape: the default fits L and fails 2L, but mimetic fails 2L too (0.003 vs
  // 0.116): partly before, now not tested. Both stuck at L: not tested either.
  EXPECT_EQ(judge(0.6, 0.003, 1.0, 0.116), Verdict::kNotTested);
  EXPECT_EQ(judge(0.0, 0.0, 0.1, 0.0), Verdict::kNotTested);
}

// Issue 47, rule 3: a partly needs the noise test too. At Fig. 6's largest V, mimetic at 2L against a
// default at 0, pooled over the smoke grid's two L (6 runs): seeds 0, 0, 0.384 at each (0.128 ± 0.081,
// the kept result's mean; it was 0.128 ± 0.066 over 3 seeds there) was partly on its mean; inside
// t_{0.975, 5} SE = 0.208 it is not reproduced. 0.15 in every seed: partly; 0.3: reproduced.
TEST(FigureClaimsTest, Fig6MimeticPreventsPartlyNeedsItsInterval) {
  auto judge = [](const std::function<double(uint64_t)>& mimetic_hi) {
    return Verdicts("fig6",
                    [=](const GridPoint& p, int len) {
                      if (len <= 4) return 1.0;
                      if (AxisOf(p, "arch") != "mamba2" || p.variant != "mimetic") return 0.0;
                      return AxisOf(p, "V") == "16" ? mimetic_hi(p.seed) : 0.5;
                    })
        .at("fig6.m2_mimetic_prevents");
  };
  EXPECT_EQ(judge([](uint64_t s) { return s == 3 ? 0.384 : 0.0; }), Verdict::kNotReproduced);
  EXPECT_EQ(judge([](uint64_t) { return 0.15; }), Verdict::kPartly);
  EXPECT_EQ(judge([](uint64_t) { return 0.3; }), Verdict::kReproduced);
}

// Issue 47, rule 2: a growth claim against a reference that learned nothing. Mimetic's copied length
// grows with N while the default fits L at no N: the kept cpu result was "reproduced" so; not tested.
TEST(FigureClaimsTest, Fig7LogLinearIsNotTestedAgainstADefaultThatFitsNothing) {
  const auto v = Verdicts("fig7", [](const GridPoint& p, int len) {
    if (p.variant == "default") return 0.0;
    return len / 4 <= std::log2(std::stoi(AxisOf(p, "N"))) ? 1.0 : 0.0;
  });
  EXPECT_EQ(v.at("fig7.log_linear"), Verdict::kNotTested);
  // Slopes that differ by seed: mimetic's per-seed slopes inside the noise of the default's: at most
  // not reproduced, whatever the means.
  const auto noisy = Verdicts("fig7", [](const GridPoint& p, int len) {
    const int n = std::stoi(AxisOf(p, "N"));
    if (p.variant == "default") return len == 4 ? 1.0 : 0.0;
    // Seed 1 copies everything at N 32 only; seeds 2 and 3 copy nothing beyond L.
    return len == 4 || (p.seed == 1 && n == 32) ? 1.0 : 0.0;
  });
  EXPECT_EQ(noisy.at("fig7.log_linear"), Verdict::kNotReproduced);
}

// Issue 47, rule 1: chance is a level. Fig. 9's cpu MQAR has 2 pairs at L 16 and 4 at 32, so per-query
// chance is 0.5 and 0.25 there. Both inits at chance beyond L 8, mimetic 0.06 above it at 16: read on
// raw accuracy mimetic "breaks down later" (about 18 vs 16: partly); rescaled from chance neither
// reaches halfway: not tested.
TEST(FigureClaimsTest, Fig9MqarCrossingsAreReadAboveChance) {
  const auto v = Fig9([](const std::string& variant, const std::string& task, int l) {
    if (task == "copy") return 0.0;
    if (l == 8) return 1.0;
    if (l == 16) return variant == "mimetic" ? 0.56 : 0.5;
    return 0.25;
  });
  EXPECT_EQ(v.at("fig9.mqar_fits_longer"), Verdict::kNotTested);
}

}  // namespace
}  // namespace mimetic::experiments

namespace mimetic::experiments {
namespace {

// exact(point, length, step): each run's exact accuracy at an evaluated step (100 ... 800) and, at step
// 800, its final one, for the claims that read the curves (when a variant first reaches a level).
using CurveFn = std::function<double(const GridPoint&, int, int64_t)>;

std::map<std::string, Verdict> CurveVerdicts(const std::string& figure, const CurveFn& exact) {
  FigureRun run;
  run.preset = "smoke";
  run.experiment = LoadPreset(Root(), figure, "smoke", {}).value();
  run.summary.runs.clear();
  const std::vector<GridPoint> grid = ExpandGrid(run.experiment).value();
  for (const GridPoint& p : grid) {
    RunResult r;
    r.point = p;
    r.finished = true;
    for (int64_t step = 100; step <= 800; step += 100) {
      EvalPoint* e = r.result.add_curve();
      e->set_step(step);
      for (int len : run.experiment.eval().lengths()) {
        LengthAccuracy* a = e->add_accuracy();
        a->set_length(len);
        a->set_exact(exact(p, len, step));
        if (step == 800) *r.result.add_final() = *a;
      }
    }
    run.summary.runs.push_back(r);
  }
  return Judge(&run, figure);
}

// The transfer's smoke preset evaluates at 4 and 8. The pattern the transfer paper predicts: the
// transferred Mamba fits L by step 200, the default only by step 600 (and less), mimetic near the transfer.
TEST(FigureClaimsTest, TransferClaimsHoldWhenTheTransferFitsFirstAndMimeticFollows) {
  const auto v = CurveVerdicts("transfer", [](const GridPoint& p, int len, int64_t step) {
    const double at2l = len == 8 ? 0.5 : 1.0;
    if (p.variant == "transfer") return step >= 200 ? 0.95 * at2l : 0.1;
    if (p.variant == "mimetic") return step >= 300 ? 0.9 * at2l : 0.1;
    return step >= 600 ? 0.55 * at2l : 0.0;
  });
  EXPECT_EQ(v.at("transfer.fits_faster"), Verdict::kReproduced);
  EXPECT_EQ(v.at("transfer.fits_better"), Verdict::kReproduced);
  EXPECT_EQ(v.at("transfer.mimetic_close"), Verdict::kReproduced);
}

// The opposite: the transfer starts no better than the default, and mimetic ends far below it.
TEST(FigureClaimsTest, TransferClaimsFailWhenTheTransferIsNoBetterThanTheDefault) {
  const auto v = CurveVerdicts("transfer", [](const GridPoint& p, int len, int64_t step) {
    if (p.variant == "mimetic") return 0.1;
    return step >= 300 ? (len == 4 ? 0.8 : 0.3) : 0.0;  // transfer and default alike
  });
  EXPECT_EQ(v.at("transfer.fits_faster"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("transfer.fits_better"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("transfer.mimetic_close"), Verdict::kNotReproduced);
  // A transfer that fits nothing leaves nothing for mimetic to get close to.
  const auto none = CurveVerdicts("transfer", [](const GridPoint&, int, int64_t) { return 0.0; });
  EXPECT_EQ(none.at("transfer.mimetic_close"), Verdict::kNotTested);
  // The cpu run: transfer 0.03 vs default 0.01 at L, 0 at 2L said "partly" on one string more.
  const auto crumbs = CurveVerdicts("transfer", [](const GridPoint& p, int len, int64_t) {
    return len == 4 ? (p.variant == "transfer" ? 0.03 : 0.01) : 0.0;
  });
  EXPECT_EQ(crumbs.at("transfer.fits_better"), Verdict::kNotTested);
}

}  // namespace
}  // namespace mimetic::experiments

namespace mimetic::experiments {
namespace {

// Fig. 10's smoke grid: tasks copy4 and mqar8 (eval 4, 8, 16). The paper's pattern: the fine-tuned model
// generalises to 2L on both tasks and mimetic from scratch is close at L.
TEST(FigureClaimsTest, Fig10ClaimsHoldWhenMimeticMatchesTheFineTunedModel) {
  const auto v = Verdicts("fig10", [](const GridPoint& p, int len) {
    const bool copy = AxisOf(p, "task") == "copy4";
    const int L = copy ? 4 : 8;
    if (len == L) return p.variant == "pretrained" ? 0.95 : 0.9;
    return len == 2 * L ? (p.variant == "pretrained" ? 0.7 : 0.4) : 0.0;
  });
  EXPECT_EQ(v.at("fig10.pretrained_generalises"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig10.mimetic_close"), Verdict::kReproduced);
}

TEST(FigureClaimsTest, Fig10ClaimsFailWhenMimeticLagsAndNothingGeneralises) {
  const auto v = Verdicts("fig10", [](const GridPoint& p, int len) {
    const int L = AxisOf(p, "task") == "copy4" ? 4 : 8;
    return len == L && p.variant == "pretrained" ? 0.9 : 0.1;
  });
  EXPECT_EQ(v.at("fig10.pretrained_generalises"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig10.mimetic_close"), Verdict::kNotReproduced);
  // A fine-tuned model that fits neither task leaves nothing to compare with.
  const auto none = Verdicts("fig10", [](const GridPoint&, int) { return 0.0; });
  EXPECT_EQ(none.at("fig10.mimetic_close"), Verdict::kNotTested);
}

// The fine-tuned model fits copy only, and mimetic matches it there (MQAR, 0 for both, says nothing).
// Before, the unfitted task's 0-vs-0 gap counted as "close" on both tasks and mimetic failing on copy
// still passed partly; now only the fitted task is read.
TEST(FigureClaimsTest, Fig10MimeticCloseReadsOnlyTasksTheFineTunedModelFits) {
  auto on_copy = [](double mimetic) {
    return [=](const GridPoint& p, int len) {
      if (AxisOf(p, "task") != "copy4" || len != 4) return 0.0;
      return p.variant == "pretrained" ? 0.95 : mimetic;
    };
  };
  EXPECT_EQ(Verdicts("fig10", on_copy(0.9)).at("fig10.mimetic_close"), Verdict::kReproduced);
  EXPECT_EQ(Verdicts("fig10", on_copy(0.2)).at("fig10.mimetic_close"), Verdict::kNotReproduced);
}

// Fig. 11's smoke grid: teacher layers 0, 1, 2 (eval 4, 8). One layer stands out above the default.
TEST(FigureClaimsTest, Fig11ClaimsHoldWhenOneTeacherLayerStandsOut) {
  const auto v = Verdicts("fig11", [](const GridPoint& p, int len) {
    if (len != 4) return 0.0;
    if (p.variant != "transplant") return 0.1;
    return AxisOf(p, "layer") == "1" ? 0.8 : 0.15;
  });
  EXPECT_EQ(v.at("fig11.some_layers_help"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig11.localized"), Verdict::kReproduced);
  // The teacher's structure needs its file, which synthetic results do not have.
  EXPECT_EQ(v.at("fig11.good_layers_look_mimetic"), Verdict::kNotTested);
  EXPECT_EQ(v.count("fig11.layer31"), 0u);  // a 3-layer teacher has no layer 31
}

// With a stand-in teacher the run trained itself from mimetic init (the cpu presets), every Fig. 10 and
// Fig. 11 claim is a stand-in, and "mimetic is close to the pretrained model" / "good layers look mimetic"
// are circular: not tested, saying so.
TEST(FigureClaimsTest, Figs10And11WithAMimeticStandInTeacherAreStandInsAndNotCircular) {
  FigureRun fig10 = SyntheticRun("fig10", [](const GridPoint& p, int len) {
    const int L = AxisOf(p, "task") == "copy4" ? 4 : 8;
    return len == L ? 0.95 : 0.0;
  });
  fig10.teacher.run = RunResult{};
  fig10.teacher.from_mimetic_init = true;
  for (const auto& [id, c] : JudgeClaims(&fig10, "fig10")) EXPECT_EQ(c.kind, ClaimKind::kStandIn) << id;
  const Claim close = JudgeClaims(&fig10, "fig10").at("fig10.mimetic_close");
  EXPECT_EQ(close.verdict, Verdict::kNotTested);  // mimetic matches the teacher: reproduced otherwise
  EXPECT_THAT(close.measured,
              ::testing::HasSubstr("circular: the stand-in teacher starts from mimetic init"));

  FigureRun fig11 = SyntheticRun("fig11", [](const GridPoint& p, int len) {
    return len == 4 && p.variant == "transplant" && AxisOf(p, "layer") == "1" ? 0.8 : 0.1;
  });
  fig11.teacher.run = RunResult{};
  fig11.teacher.from_mimetic_init = true;
  const auto c11 = JudgeClaims(&fig11, "fig11");
  for (const auto& [id, c] : c11) EXPECT_EQ(c.kind, ClaimKind::kStandIn) << id;
  EXPECT_THAT(c11.at("fig11.good_layers_look_mimetic").measured, ::testing::HasSubstr("circular"));
  // Without a stand-in teacher (a published checkpoint) they are the paper's.
  fig10.teacher = PreparedTeacher{};
  EXPECT_EQ(JudgeClaims(&fig10, "fig10").at("fig10.mimetic_close").kind, ClaimKind::kPaper);
  EXPECT_EQ(JudgeClaims(&fig10, "fig10").at("fig10.mimetic_close").verdict, Verdict::kReproduced);
}

// A stand-in teacher left on the copy plateau (the cpu preset's teacher cut to 2400 steps: per-token@16
// 0.08) has nothing to pass on: students from its layers are default-like, which read as "some layers
// do not help" without the guard. Every claim is then not tested, saying why; a teacher that learned
// leaves the verdicts alone.
TEST(FigureClaimsTest, ClaimsRestingOnAStandInTeacherThatLearnedNothingAreNotTested) {
  FigureRun run = SyntheticRun("fig11", [](const GridPoint& p, int len) {
    if (len != 4) return 0.0;
    return p.variant == "transplant" && AxisOf(p, "layer") == "1" ? 0.8 : 0.1;
  });
  RunResult teacher;
  LengthAccuracy* a = teacher.result.add_final();
  a->set_length(16);
  a->set_exact(0.0);
  a->set_token(0.08);
  run.teacher.run = teacher;
  for (const auto& [id, c] : JudgeClaims(&run, "fig11")) {
    EXPECT_EQ(c.verdict, Verdict::kNotTested) << id;
    EXPECT_THAT(c.measured, ::testing::HasSubstr("did not learn its task: per-token@16 0.08 < 0.50")) << id;
    EXPECT_THAT(c.how, ::testing::HasSubstr("not tested when the stand-in teacher did not learn its task"));
  }
  a->set_token(0.96);
  run.teacher.run = teacher;
  const auto learned = JudgeClaims(&run, "fig11");
  EXPECT_EQ(learned.at("fig11.some_layers_help").verdict, Verdict::kReproduced);
  EXPECT_THAT(learned.at("fig11.some_layers_help").measured,
              ::testing::Not(::testing::HasSubstr("did not learn")));
}

// Claims of targets that are not the paper's figures are counted as "other target".
TEST(FigureClaimsTest, GammaAndTransferClaimsAreOtherTargets) {
  FigureRun gamma = SyntheticRun("gamma", [](const GridPoint&, int) { return 0.5; });
  for (const auto& [id, c] : JudgeClaims(&gamma, "gamma")) EXPECT_EQ(c.kind, ClaimKind::kOtherTarget) << id;
  FigureRun fig1 = SyntheticRun("fig1", [](const GridPoint&, int) { return 0.5; });
  for (const auto& [id, c] : JudgeClaims(&fig1, "fig1")) EXPECT_EQ(c.kind, ClaimKind::kPaper) << id;
}

// Per-token readings of Fig. 11 are stand-ins.
TEST(FigureClaimsTest, Fig11PerTokenReadingsAreStandIns) {
  FigureRun run = SyntheticRun(
      "fig11", [](const GridPoint&, int) { return 0.0; },
      [](const GridPoint& p, int len) {
        return len == 4 && p.variant == "transplant" && AxisOf(p, "layer") == "1" ? 0.6 : 0.05;
      });
  const auto c = JudgeClaims(&run, "fig11");
  EXPECT_EQ(c.at("fig11.token.some_layers_help").kind, ClaimKind::kStandIn);
  EXPECT_EQ(c.at("fig11.some_layers_help").kind, ClaimKind::kPaper);
}

TEST(FigureClaimsTest, Fig11ClaimsFailWhenEveryLayerIsLikeTheDefault) {
  const auto v = Verdicts("fig11", [](const GridPoint&, int len) { return len == 4 ? 0.2 : 0.0; });
  EXPECT_EQ(v.at("fig11.some_layers_help"), Verdict::kNotReproduced);
  EXPECT_EQ(v.at("fig11.localized"), Verdict::kNotReproduced);
}

// No student copies a whole string (exact 0, or 0.02 for one layer: a lucky example in a seed), but one
// teacher layer's students get most tokens right: the per-token stand-in claims say so under their own
// ids; the exact ones compare noise with noise and are not tested.
TEST(FigureClaimsTest, Fig11ReadsPerTokenAccuracyWhenNoStudentCopiesWholeStrings) {
  const auto v = Verdicts(
      "fig11",
      [](const GridPoint& p, int len) {
        return len == 4 && p.variant == "transplant" && AxisOf(p, "layer") == "1" ? 0.02 : 0.0;
      },
      [](const GridPoint& p, int len) {
        if (len != 4) return 0.0;
        if (p.variant != "transplant") return 0.05;
        return AxisOf(p, "layer") == "1" ? 0.6 : 0.05;
      });
  EXPECT_EQ(v.at("fig11.some_layers_help"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig11.localized"), Verdict::kNotTested);
  EXPECT_EQ(v.at("fig11.token.some_layers_help"), Verdict::kReproduced);
  EXPECT_EQ(v.at("fig11.token.localized"), Verdict::kReproduced);
  // With whole strings copied somewhere, no stand-in.
  const auto exact = Verdicts("fig11", [](const GridPoint&, int len) { return len == 4 ? 0.2 : 0.0; });
  EXPECT_EQ(exact.count("fig11.token.some_layers_help"), 0u);
}

}  // namespace
}  // namespace mimetic::experiments
