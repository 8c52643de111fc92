// Fig. 9 of the paper: a 2-layer Mamba 2, training lengths swept upward on copy and MQAR, default vs
// mimetic init: how long a training length each init still fits, and how it generalises to 2x. One
// sweep axis `task` sets the whole task per point; its value names are "<task><L>" ("copy64",
// "mqar128"), L being the training length (copy: string length; MQAR: sequence length T). Every point
// is evaluated at the union of the L and 2L values; a group is read at its own L and 2L. Copy is read
// by exact-string accuracy, MQAR by per-query accuracy (as Zoology reports it).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/experiments/figures/figure_common.h"
#include "mimetic/experiments/results/length_curve.h"

namespace mimetic::experiments {
namespace {

constexpr double kFits = 0.9;  // "nearly perfectly fit": mean accuracy at the training length >= 0.9
const char* const kTasks[] = {"copy", "mqar"};
const char* const kVariants[] = {"default", "mimetic"};

// Accuracy at `multiple` x L per training length L, over seeds.
std::map<int, Stat> ByLength(const FigureRun& run, const std::string& task, const std::string& variant,
                             int multiple) {
  std::map<int, Stat> out;
  for (const Group& g : run.summary.aggregate.groups) {
    const auto [t, l] = TaskAndLength(g.Axis("task"));
    if (t != task || g.variant != variant) continue;
    out[l] = FinalStat(g, multiple * l, /*token=*/task == "mqar");
  }
  return out;
}

// Accuracy at 2L averaged over the training lengths, per seed (seeds missing a length are left out):
// seeds, not lengths, are the replicates, so the error bar of a contrast is taken over them.
std::map<uint64_t, double> OverLengthsBySeed(const FigureRun& run, const std::string& task,
                                             const std::string& variant) {
  std::map<uint64_t, std::vector<double>> by_seed;
  int lengths = 0;
  for (const Group& g : run.summary.aggregate.groups) {
    const auto [t, l] = TaskAndLength(g.Axis("task"));
    if (t != task || g.variant != variant) continue;
    ++lengths;
    for (const auto& [seed, v] : FinalBySeed(&g, 2 * l, /*token=*/task == "mqar")) by_seed[seed].push_back(v);
  }
  std::map<uint64_t, double> out;
  for (const auto& [seed, vs] : by_seed) {
    if (static_cast<int>(vs.size()) == lengths) out[seed] = MeanSe(vs).mean;
  }
  return out;
}

std::string PerLength(const std::map<int, Stat>& m) {
  std::string out;
  for (const auto& [l, s] : m) absl::StrAppend(&out, out.empty() ? "" : ", ", "L", l, " ", FormatStat(s));
  return out;
}

// The learned-nothing floor of `task` read at `multiple` x L, per training length L (chance.h on each
// group's own task: MQAR per query 1/pairs + 0.05, copy exact 0.05).
std::map<int, double> FloorByLength(const FigureRun& run, const std::string& task, int multiple) {
  std::map<int, double> out;
  for (const Group& g : run.summary.aggregate.groups) {
    const auto [t, l] = TaskAndLength(g.Axis("task"));
    if (t == task && g.variant == "mimetic") out[l] = GroupFloor(run, g, multiple * l, task == "mqar");
  }
  return out;
}

absl::StatusOr<Figure> Draw(const FigureRun& run) {
  Figure fig;
  fig.title = "Fig. 9: training length, 2-layer Mamba 2 (dotted: at the training length L, solid: at 2L)";
  fig.columns = 2;
  for (const char* task : kTasks) {
    CurvePanel p{
        absl::StrCat(task, task == std::string("mqar") ? ": per-query accuracy" : ": exact accuracy"),
        "training length L", "accuracy"};
    p.log_x = true;
    p.y_min = 0;
    p.y_max = 1;
    int color = 0;
    for (const char* variant : kVariants) {
      for (int multiple : {1, 2}) {
        const std::map<int, Stat> m = ByLength(run, task, variant, multiple);
        if (m.empty()) continue;
        p.bands.push_back(StatBand(absl::StrCat(variant, multiple == 1 ? " @L" : " @2L"), m, color,
                                   /*dotted=*/multiple == 1));
      }
      ++color;
    }
    // MQAR per query has a chance level, 1/pairs, that moves with L: drawn as grey lines at L and 2L.
    for (int multiple : {1, 2}) {
      std::map<int, Stat> chance;
      for (const auto& [l, floor] : FloorByLength(run, task, multiple)) {
        if (floor - kAboveChance >= 0.005) chance[l] = Stat{floor - kAboveChance, 0, 1};
      }
      if (!chance.empty()) {
        p.bands.push_back(StatBand(multiple == 1 ? "chance @L" : "chance @2L", chance, 7, multiple == 1));
      }
    }
    if (p.bands.empty()) return absl::FailedPreconditionError(absl::StrCat("Fig. 9: no runs of task ", task));
    fig.panels.push_back(std::move(p));
  }
  return fig;
}

// The curve a crossing is read on: accuracy rescaled from the task's chance level at each L to 1,
// (acc - chance) / (1 - chance), so that "falls through 0.5" means halfway from chance to perfect and
// not chance itself (Fig. 9's MQAR at L 16 has 2 pairs: 0.5 per query is chance there). A length where
// chance is 1 (MQAR with one pair) tests nothing and is left out. Copy's exact chance is 0: unchanged.
std::vector<LengthPoint> Curve(const std::map<int, Stat>& by_length, const std::map<int, double>& floors) {
  std::vector<LengthPoint> out;
  for (const auto& [l, s] : by_length) {
    const double chance = floors.count(l) ? floors.at(l) - kAboveChance : 0;
    if (chance >= 1 - 1e-9) continue;
    out.push_back(LengthPoint{l, (s.mean - chance) / (1 - chance)});
  }
  return out;
}

// Whether mimetic's accuracy at L is clearly above the default's at some training length (by > 0.05
// and the t interval over seeds): a later crossing made of differences inside the noise is no finding.
bool ClearlyAboveSomewhere(const std::map<int, Stat>& m, const std::map<int, Stat>& d) {
  for (const auto& [l, s] : m) {
    if (d.count(l) && ClearlyGreater(s, d.at(l), 0.05)) return true;
  }
  return false;
}

// Whether crossing a lies clearly beyond b, censoring considered (a censored-below crossing is beyond
// nothing; nothing is beyond a censored-above one).
bool Beyond(const Crossing& a, const Crossing& b, double factor = 1) {
  if (a.censored == Crossing::Censored::kBelow || b.censored == Crossing::Censored::kAbove) return false;
  if (factor == 1 && a.censored == Crossing::Censored::kAbove) return true;
  return a.length >= factor * b.length && a.length > b.length;
}

// "Fits" as the paper reads its plot: the training length where the mean accuracy at L falls through
// kFits (0.9), interpolated on log L; MQAR's default "breaks down" where it falls through 0.5.
Claim FitClaim(const FigureRun& run, const std::string& task, const std::string& paper) {
  const std::map<int, Stat> d = ByLength(run, task, "default", 1), m = ByLength(run, task, "mimetic", 1);
  const std::map<int, double> floors = FloorByLength(run, task, 1);
  const std::vector<LengthPoint> dc = Curve(d, floors), mc = Curve(m, floors);
  const Crossing d9 = CrossingLength(dc, kFits), m9 = CrossingLength(mc, kFits);
  const Crossing d5 = CrossingLength(dc, 0.5), m5 = CrossingLength(mc, 0.5);
  const bool clear = ClearlyAboveSomewhere(m, d);
  const bool mqar = task == "mqar";
  const Crossing& reference = mqar ? d5 : d9;
  Claim c{
      absl::StrCat("fig9.", task, "_fits_longer"), paper,
      absl::StrCat("training length where the mean accuracy at L", mqar ? " (rescaled from chance to 1)" : "",
                   " falls through ", kFits, " (interpolated on log L): default ", CrossingText(d9),
                   ", mimetic ", CrossingText(m9), "; through 0.5: default ", CrossingText(d5), ", mimetic ",
                   CrossingText(m5), "; default: ", PerLength(d), "; mimetic: ", PerLength(m),
                   clear ? "" : "; mimetic clearly above the default at no L"),
      Verdict::kNotReproduced,
      absl::StrCat("reproduced: mimetic's ", kFits, " crossing >= 2x the default's ",
                   mqar ? "0.5 crossing (where it breaks down)" : "0.9 crossing",
                   "; partly: mimetic crosses later at 0.9 or at 0.5; both need mimetic clearly above the "
                   "default at L at some training length (by > 0.05 and the t interval over seeds); "
                   "accuracy is rescaled from the task's chance level (MQAR per query: 1/pairs; a length "
                   "with one pair is left out) to 1 before crossings are read; not tested: both still at "
                   ">= 0.9 at the longest L (the grid does not reach the default's limit) or neither "
                   "reaches 0.5 at any L")};
  const bool both_above =
      d9.censored == Crossing::Censored::kAbove && m9.censored == Crossing::Censored::kAbove;
  const bool none_fits =
      d5.censored == Crossing::Censored::kBelow && m5.censored == Crossing::Censored::kBelow;
  if (both_above || none_fits || d.empty() || m.empty()) {
    c.verdict = Verdict::kNotTested;
  } else {
    c.verdict = Graded(clear && Beyond(m9, reference, 2), clear && (Beyond(m9, d9) || Beyond(m5, d5)));
  }
  return c;
}

absl::StatusOr<std::vector<Claim>> Claims(const FigureRun& run) {
  std::vector<Claim> claims;
  claims.push_back(
      FitClaim(run, "copy",
               "Fig. 9, copy: the default struggles already at 1000-long strings while mimetic init "
               "fits about 4000"));
  claims.push_back(FitClaim(run, "mqar",
                            "Fig. 9, MQAR: the default breaks down around length 900 while mimetic init fits "
                            "1800 or more"));
  // Generalisation at 2L, per task: each init's accuracy averaged over the training lengths, per seed.
  std::string measured;
  bool all_clear = true, any_clear = false;
  int judged = 0;
  for (const char* task : kTasks) {
    // Both inits at chance (below chance + 0.05) at every 2L: nothing to compare on this task.
    const std::map<int, double> floors = FloorByLength(run, task, 2);
    bool all_below = true;
    for (const char* variant : kVariants) {
      for (const auto& [l, s] : ByLength(run, task, variant, 2)) {
        all_below = all_below && AllBelow({s}, floors.count(l) ? floors.at(l) : kAboveChance);
      }
    }
    const std::map<uint64_t, double> m = OverLengthsBySeed(run, task, "mimetic"),
                                     d = OverLengthsBySeed(run, task, "default");
    std::vector<double> mv, dv, gain;
    for (const auto& [seed, v] : m) mv.push_back(v);
    for (const auto& [seed, v] : d) dv.push_back(v);
    for (const auto& [seed, v] : m) {
      if (d.count(seed)) gain.push_back(v - d.at(seed));
    }
    const Stat g = MeanSe(gain);
    absl::StrAppend(
        &measured, measured.empty() ? "" : "; ", task, " at 2L averaged over the training lengths: mimetic ",
        FormatStat(MeanSe(mv)), " vs default ", FormatStat(MeanSe(dv)),
        absl::StrFormat(", mimetic minus default per seed %+.3f ± %.3f (n=%d)", g.mean, g.se, g.n),
        all_below ? " (all at chance, below chance + 0.05: left out)" : "");
    if (all_below) continue;
    ++judged;
    const bool clear = ClearlyPositive(g, 0.05);
    all_clear = all_clear && clear;
    any_clear = any_clear || clear;
  }
  claims.push_back(Claim{
      "fig9.generalises_better",
      "Fig. 9: the benefit extends to generalisation (accuracy at 2L), though not strongly", measured,
      judged == 0 ? Verdict::kNotTested : Graded(all_clear, any_clear),
      "a task where both inits are below the floor (chance + 0.05; MQAR per query 1/pairs + 0.05) at "
      "every 2L is left out; per seed, each init's accuracy "
      "at 2L averaged over the training lengths, mimetic minus default, then mean ± SE over seeds; "
      "reproduced: on every task judged that gain is clearly positive (> 0.05 and its t interval); partly: "
      "on one; not tested: no task is judged"});
  return claims;
}

}  // namespace

FigureDef MakeFig9() {
  return FigureDef{"fig9",
                   "Fig. 9: training length on copy and MQAR, 2-layer Mamba 2, default vs mimetic init", Draw,
                   Claims};
}

}  // namespace mimetic::experiments
