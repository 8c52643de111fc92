// Fig. 9 of the paper: a 2-layer Mamba 2, training lengths swept upward on copy and MQAR, default vs
// mimetic init: how long a training length each init still fits, and how it generalises to 2x. One
// sweep axis `task` sets the whole task per point; its value names are "<task><L>" ("copy64",
// "mqar128"), L being the training length (copy: string length; MQAR: sequence length T). Every point
// is evaluated at the union of the L and 2L values; a group is read at its own L and 2L. Copy is read
// by exact-string accuracy, MQAR by per-query accuracy (as Zoology reports it).
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/experiments/figures/figure_common.h"

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

// The longest training length whose mean accuracy reaches kFits (0 when none does).
int LongestFit(const std::map<int, Stat>& fit) {
  int longest = 0;
  for (const auto& [l, s] : fit) {
    if (s.mean >= kFits) longest = std::max(longest, l);
  }
  return longest;
}

std::string PerLength(const std::map<int, Stat>& m) {
  std::string out;
  for (const auto& [l, s] : m) absl::StrAppend(&out, out.empty() ? "" : ", ", "L", l, " ", FormatStat(s));
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
    if (p.bands.empty()) return absl::FailedPreconditionError(absl::StrCat("Fig. 9: no runs of task ", task));
    fig.panels.push_back(std::move(p));
  }
  return fig;
}

Claim FitClaim(const FigureRun& run, const std::string& task, const std::string& paper) {
  const std::map<int, Stat> d = ByLength(run, task, "default", 1), m = ByLength(run, task, "mimetic", 1);
  const int ld = LongestFit(d), lm = LongestFit(m);
  const int largest = d.empty() ? 0 : d.rbegin()->first;
  Claim c{absl::StrCat("fig9.", task, "_fits_longer"), paper,
          absl::StrCat("longest L fitted (mean accuracy at L >= ", kFits, "): default ", ld, ", mimetic ", lm,
                       "; default: ", PerLength(d), "; mimetic: ", PerLength(m)),
          Verdict::kNotReproduced,
          "reproduced: mimetic fits a training length at least 2x the longest the default fits; partly: a "
          "longer one; not tested: both fit the longest length of the grid (it does not reach the default's "
          "limit)"};
  if (ld == largest && lm == largest && largest > 0) {
    c.verdict = Verdict::kNotTested;
  } else {
    c.verdict = Graded(lm > 0 && lm >= 2 * ld, lm > ld);
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
  // Generalisation: mean accuracy at 2L over every training length, per task.
  std::string measured;
  bool all_clear = true, any_above = false;
  int judged = 0;
  for (const char* task : kTasks) {
    std::vector<double> d, m;
    bool all_below = true;  // both inits below the floor at every 2L: nothing to compare on this task
    for (const auto& [l, s] : ByLength(run, task, "default", 2)) {
      d.push_back(s.mean);
      all_below = all_below && AllBelow({s});
    }
    for (const auto& [l, s] : ByLength(run, task, "mimetic", 2)) {
      m.push_back(s.mean);
      all_below = all_below && AllBelow({s});
    }
    const Stat sd = MeanSe(d), sm = MeanSe(m);
    absl::StrAppend(&measured, measured.empty() ? "" : "; ", task,
                    " at 2L, mean (± SE) over the training lengths: mimetic ", FormatStat(sm), " vs default ",
                    FormatStat(sd), all_below ? " (all below 0.05, left out)" : "");
    if (all_below) continue;
    ++judged;
    all_clear = all_clear && sm.mean > sd.mean + 0.05;
    any_above = any_above || sm.mean > sd.mean;
  }
  claims.push_back(
      Claim{"fig9.generalises_better",
            "Fig. 9: the benefit extends to generalisation (accuracy at 2L), though not strongly", measured,
            judged == 0 ? Verdict::kNotTested : Graded(all_clear, any_above),
            "a task where both inits are below 0.05 at every 2L is left out; reproduced: on every task "
            "judged mimetic's mean accuracy at 2L over the training lengths exceeds the default's by > "
            "0.05; partly: above on one; not tested: no task is judged"});
  return claims;
}

}  // namespace

FigureDef MakeFig9() {
  return FigureDef{"fig9",
                   "Fig. 9: training length on copy and MQAR, 2-layer Mamba 2, default vs mimetic init", Draw,
                   Claims};
}

}  // namespace mimetic::experiments
