// Fig. 8 of the paper: Mamba 1 and Mamba 2 over a grid of widths and depths, copy and MQAR, default vs
// mimetic init, accuracy at 2x the training length. Axes: `arch` (the default layer), `task` (value
// names "<task><L>", figure_common.h TaskAndLength), `width` (model.d_model), `depth` (model.n_layer).
// Copy is read by exact-string accuracy, MQAR by per-query accuracy.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/experiments/figures/figure_common.h"

namespace mimetic::experiments {
namespace {

const char* const kArchs[] = {"mamba1", "mamba2"};
const char* const kTasks[] = {"copy", "mqar"};
const char* const kVariants[] = {"default", "mimetic"};

int AxisInt(const Group& g, const std::string& axis) {
  int v = 0;
  return absl::SimpleAtoi(g.Axis(axis), &v) ? v : 0;
}

struct Cell {
  std::string arch, task;
  int width = 0, depth = 0;
  bool operator<(const Cell& o) const {
    return std::tie(arch, task, width, depth) < std::tie(o.arch, o.task, o.width, o.depth);
  }
};

// Final accuracy at `multiple` x L of every (cell, variant) present; `floors` (when given) gets each
// cell's learned-nothing floor at that reading (chance.h: MQAR per query 1/pairs + 0.05, copy 0.05).
std::map<Cell, std::map<std::string, Stat>> Cells(const FigureRun& run, int multiple,
                                                  std::map<Cell, double>* floors = nullptr) {
  std::map<Cell, std::map<std::string, Stat>> out;
  for (const Group& g : run.summary.aggregate.groups) {
    const auto [task, l] = TaskAndLength(g.Axis("task"));
    if (task.empty()) continue;
    const Cell c{g.Axis("arch"), task, AxisInt(g, "width"), AxisInt(g, "depth")};
    out[c][g.variant] = FinalStat(g, multiple * l, /*token=*/task == "mqar");
    if (floors != nullptr) (*floors)[c] = GroupFloor(run, g, multiple * l, /*token=*/task == "mqar");
  }
  return out;
}

std::vector<int> Values(const FigureRun& run, const std::string& axis) {
  std::set<int> s;
  for (const Group& g : run.summary.aggregate.groups) s.insert(AxisInt(g, axis));
  return {s.begin(), s.end()};
}

absl::StatusOr<Figure> Draw(const FigureRun& run) {
  const std::vector<int> widths = Values(run, "width"), depths = Values(run, "depth");
  const auto cells = Cells(run, 2);
  if (cells.empty()) return absl::FailedPreconditionError("Fig. 8 has no finished cells");
  Figure fig;
  fig.title = "Fig. 8: width x depth, accuracy at 2x the training length (rows: depth, columns: width)";
  fig.columns = 4;
  for (const char* arch : kArchs) {
    for (const char* task : kTasks) {
      for (const char* variant : kVariants) {
        HeatmapPanel p;
        p.title = absl::StrCat(arch, ", ", task, ", ", variant);
        p.xlabel = "width";
        p.ylabel = "depth";
        p.cb_label = std::string(task) == "mqar" ? "per-query accuracy at 2L" : "exact accuracy at 2L";
        p.rows = depths.size();
        p.cols = widths.size();
        p.lo = 0;
        p.hi = 1;
        p.annotate = true;
        for (int d : depths) p.row_labels.push_back(absl::StrCat(d));
        for (int w : widths) p.col_labels.push_back(absl::StrCat(w));
        for (int d : depths) {
          for (int w : widths) {
            auto it = cells.find(Cell{arch, task, w, d});
            const bool has = it != cells.end() && it->second.count(variant) > 0;
            p.values.push_back(has ? it->second.at(variant).mean : NAN);
          }
        }
        fig.panels.push_back(std::move(p));
      }
    }
  }
  return fig;
}

// The mimetic accuracy of one arch and task per depth, pooled over widths (each cell's mean counts once).
std::map<int, Stat> MimeticByDepth(const std::map<Cell, std::map<std::string, Stat>>& cells,
                                   const std::string& arch, const std::string& task, double* floor = nullptr,
                                   const std::map<Cell, double>* floors = nullptr) {
  std::map<int, std::vector<double>> by;
  for (const auto& [c, v] : cells) {
    if (c.arch != arch || c.task != task || !v.count("mimetic")) continue;
    by[c.depth].push_back(v.at("mimetic").mean);
    // The highest floor of the cells pooled: a pooled mean below it is at chance somewhere.
    if (floor != nullptr && floors != nullptr && floors->count(c)) *floor = std::max(*floor, floors->at(c));
  }
  std::map<int, Stat> out;
  for (const auto& [d, xs] : by) out[d] = MeanSe(xs);
  return out;
}

std::string PerDepth(const std::map<int, Stat>& m) {
  std::string out;
  for (const auto& [d, s] : m) absl::StrAppend(&out, out.empty() ? "" : ", ", d, " layers ", FormatStat(s));
  return out;
}

using CellMap = std::map<Cell, std::map<std::string, Stat>>;

// "A mere two layers seems to be sufficient": the best mimetic copy cell at the shallowest depth of the
// grid (2 in the paper), at 2L as the paper draws it, or (`proxy`, a stand-in) at the training length.
Claim TwoLayersClaim(const CellMap& cells, int d0, bool proxy) {
  double best = 0;
  for (const auto& [c, v] : cells) {
    if (c.depth == d0 && c.task == "copy" && v.count("mimetic")) best = std::max(best, v.at("mimetic").mean);
  }
  const std::string at = proxy ? "the training length" : "2L";
  Claim claim{proxy ? "fig8.train_len.two_layers_suffice" : "fig8.two_layers_suffice",
              absl::StrCat("Fig. 8: a mere two layers suffice (with mimetic init)",
                           proxy ? " [read at the training length, a stand-in: the paper reads 2L]" : ""),
              absl::StrFormat("best mimetic exact accuracy on copy at %s with %d layers: %.3f", at, d0, best),
              Graded(best >= 0.9, best >= 0.5),
              absl::StrCat("reproduced: some width at the shallowest depth copies at ", at,
                           " (exact >= 0.9); partly: >= 0.5")};
  if (proxy) claim.kind = ClaimKind::kStandIn;
  return claim;
}

// "The widest Mamba 2 copies very well at every depth", read like TwoLayersClaim.
Claim WideClaim(const CellMap& cells, int w, bool proxy) {
  double worst = 1;
  std::string measured;
  for (const auto& [c, v] : cells) {
    if (c.arch != "mamba2" || c.task != "copy" || c.width != w || !v.count("mimetic")) continue;
    worst = std::min(worst, v.at("mimetic").mean);
    absl::StrAppend(&measured, measured.empty() ? "" : ", ", c.depth, " layers ",
                    FormatStat(v.at("mimetic")));
  }
  const std::string at = proxy ? "L" : "2L";
  Claim claim{proxy ? "fig8.train_len.wide_mamba2_copies" : "fig8.wide_mamba2_copies",
              absl::StrCat("Fig. 8: the widest Mamba 2 (1024 in the paper) copies very well at every depth",
                           proxy ? " [read at the training length, a stand-in: the paper reads 2L]" : ""),
              absl::StrCat("mamba2 mimetic exact at ", at, ", width ", w, ": ", measured),
              Graded(!measured.empty() && worst >= 0.9, !measured.empty() && worst >= 0.5),
              absl::StrCat("reproduced: exact at ", at,
                           " >= 0.9 at every depth of the widest Mamba 2; partly: "
                           ">= 0.5")};
  if (proxy) claim.kind = ClaimKind::kStandIn;
  return claim;
}

absl::StatusOr<std::vector<Claim>> Claims(const FigureRun& run) {
  std::map<Cell, double> floors;
  const auto fit = Cells(run, 1), gen = Cells(run, 2, &floors);
  const std::vector<int> widths = Values(run, "width"), depths = Values(run, "depth");
  if (gen.empty() || depths.size() < 2) {
    return absl::FailedPreconditionError("Fig. 8 needs finished cells at two or more depths");
  }
  std::vector<Claim> claims;
  const int d0 = depths.front(), w = widths.back();
  claims.push_back(TwoLayersClaim(gen, d0, /*proxy=*/false));
  for (const char* task : kTasks) {
    std::string measured;
    bool clear = true, above = true;
    int judged = 0;
    for (const char* arch : kArchs) {
      double floor = kAboveChance;
      const std::map<int, Stat> m = MimeticByDepth(gen, arch, task, &floor, &floors);
      if (m.size() < 2) continue;
      // An architecture at chance at every depth compares nothing with nothing: shown, not judged.
      const Stat lo = m.begin()->second, hi = m.rbegin()->second;
      bool at_chance = true;
      for (const auto& [depth, s] : m) at_chance = at_chance && AllBelow({s}, floor);
      absl::StrAppend(
          &measured, measured.empty() ? "" : "; ", arch, " mimetic at 2L: ", PerDepth(m),
          at_chance ? absl::StrFormat(" (all below the floor %.3f, chance + 0.05: left out)", floor) : "");
      if (at_chance) continue;
      ++judged;
      clear = clear && ClearlyGreater(hi, lo, 0.05);
      above = above && ClearlyGreater(hi, lo, PartlyMargin(0.05));
    }
    const bool copy = std::string(task) == "copy";
    claims.push_back(Claim{copy ? "fig8.deeper_generalises" : "fig8.mqar_deeper",
                           copy ? "Fig. 8: deeper networks generalise beyond 2x better"
                                : "Fig. 8: MQAR prefers slightly deeper networks",
                           measured.empty() ? "no mimetic cells at two depths" : measured,
                           judged == 0 ? Verdict::kNotTested : Graded(clear, above),
                           "mimetic accuracy at 2L pooled over widths (mean ± SE over widths); an "
                           "architecture below the floor at every depth (chance + 0.05: copy 0.05, MQAR per "
                           "query 1/pairs + 0.05) is left out; reproduced: the deepest "
                           "above the shallowest by > 0.05 (and its t interval) for every architecture "
                           "judged; partly: by > 0.025 for every one; not tested: none is judged"});
  }
  {
    // Cells where both inits are at chance (below chance + 0.05) say nothing and are left out. A margin
    // inside the seeds' noise is not "better": every verdict needs clear margins (> 0.05 and the t
    // interval).
    int informative = 0, above = 0, clearly = 0, clearly_worse = 0;
    for (const auto& [c, v] : gen) {
      if (!v.count("default") || !v.count("mimetic")) continue;
      const Stat& d = v.at("default");
      const Stat& m = v.at("mimetic");
      if (AllBelow({d, m}, floors.count(c) ? floors.at(c) : kAboveChance)) continue;
      ++informative;
      above += m.mean > d.mean ? 1 : 0;
      clearly += ClearlyGreater(m, d, 0.05) ? 1 : 0;
      clearly_worse += ClearlyGreater(d, m, 0.05) ? 1 : 0;
    }
    claims.push_back(Claim{
        "fig8.mimetic_better", "Fig. 8: in almost all cases mimetic init generalises better",
        absl::StrFormat("of %d cells where either init is above chance + 0.05 at 2L (%zu cells in all): "
                        "mimetic above "
                        "default in %d, clearly above in %d, clearly below in %d",
                        informative, gen.size(), above, clearly, clearly_worse),
        informative == 0 ? Verdict::kNotTested
                         : Graded(clearly >= 0.8 * informative && clearly_worse == 0,
                                  2 * clearly >= informative && clearly_worse == 0),
        "clearly = by > 0.05 and the 95% t interval over seeds; informative: either init above the cell's "
        "floor, chance + 0.05 (copy 0.05; MQAR per query 1/pairs + 0.05); reproduced: mimetic clearly above "
        "default in >= 80% of the informative cells and clearly below in none; partly: clearly above in >= "
        "50% and clearly below in none; not tested: no informative cell"});
  }
  claims.push_back(WideClaim(gen, w, /*proxy=*/false));
  // Nothing copies 2L at all: the same two readings at the training length, as stand-ins, still say
  // whether the shallow and the wide models fit copy.
  bool any_copy_2l = false;
  for (const auto& [c, v] : gen) {
    if (c.task == "copy" && v.count("mimetic") && !AllBelow({v.at("mimetic")})) any_copy_2l = true;
  }
  if (!any_copy_2l) {
    claims.push_back(TwoLayersClaim(fit, d0, /*proxy=*/true));
    claims.push_back(WideClaim(fit, w, /*proxy=*/true));
  }
  return claims;
}

}  // namespace

FigureDef MakeFig8() {
  return FigureDef{"fig8",
                   "Fig. 8: width x depth, Mamba 1 and Mamba 2, copy and MQAR, default vs mimetic init", Draw,
                   Claims};
}

}  // namespace mimetic::experiments
