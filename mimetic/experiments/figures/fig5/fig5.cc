// Fig. 5 of the paper: layer 4 replaced by simple causal linear attention of several head dimensions
// against mimetic Mamba with state 32 and 64, at 2x and 4x the training length.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/experiments/figures/figure_common.h"

namespace mimetic::experiments {
namespace {

constexpr int kLayer = 3;  // layer 4, counting from 1
constexpr char kLinear[] = "linear_attention_";

// Head dimension -> group of the linear-attention variants present.
std::map<int, const Group*> LinearGroups(const FigureRun& run) {
  std::map<int, const Group*> out;
  for (const Group& g : run.summary.aggregate.groups) {
    int dim = 0;
    if (absl::StartsWith(g.variant, kLinear) &&
        absl::SimpleAtoi(g.variant.substr(sizeof(kLinear) - 1), &dim)) {
      out[dim] = &g;
    }
  }
  return out;
}

absl::StatusOr<Figure> Draw(const FigureRun& run) {
  const auto& lengths = run.experiment.eval().lengths();
  if (lengths.size() < 3) return absl::FailedPreconditionError("Fig. 5 needs eval lengths L, 2L, 4L");
  Figure fig;
  fig.title =
      "Fig. 5: linear attention vs mimetic Mamba as layer 4 (right: dotted 2x, solid 4x the training length)";
  fig.columns = 2;
  fig.panel_height = 520;
  std::vector<std::string> labels;
  for (const auto& [dim, g] : LinearGroups(run)) labels.push_back(g->Label());
  labels.push_back("mimetic_N32");
  labels.push_back("mimetic_N64");
  // The paper plots only 2x and 4x ("the difference for fitting the training length is small"); at
  // CPU size the training length is where the variants differ, so it gets its own panel, and the
  // longer lengths are shown per token as well.
  ASSIGN_OR_RETURN(
      CurvePanel fit,
      AccuracyPanel(run, absl::StrCat("exact-string accuracy at the training length ", lengths[0]), labels,
                    {lengths[0]}));
  for (Band& b : fit.bands) b.dotted = false;
  ASSIGN_OR_RETURN(CurvePanel longer, AccuracyPanel(run, "exact-string accuracy at 2x and 4x", labels,
                                                    {lengths[1], lengths[2]}));
  ASSIGN_OR_RETURN(CurvePanel token, AccuracyPanel(run, "per-token accuracy at 2x and 4x", labels,
                                                   {lengths[1], lengths[2]}, true));
  fig.panels = {fit, token, longer};
  for (const std::string label : {"mimetic_N32", "linear_attention_32"}) {
    ASSIGN_OR_RETURN(const Group* g, GetGroup(run, label));
    if (g->runs.empty()) continue;
    ASSIGN_OR_RETURN(FinalMaps m, ComputeFinalMaps(run, *g->runs[0]));
    ASSIGN_OR_RETURN(HeatmapPanel h, AttentionMapPanel(absl::StrCat(label, ", layer 4"), m.maps[kLayer],
                                                       false, static_cast<double>(m.paste_start)));
    fig.panels.push_back(std::move(h));
  }
  if (fig.panels.size() % 2 == 1) fig.columns = 3;
  return fig;
}

// The fit at L: every variant's exact accuracy close to the others', read only where some variant fits.
Claim FitSmallClaim(const FigureRun& run, int L) {
  double lo = 1, hi = 0;
  std::string fits;
  for (const Group& g : run.summary.aggregate.groups) {
    const Stat s = FinalStat(g, L);
    lo = std::min(lo, s.mean);
    hi = std::max(hi, s.mean);
    absl::StrAppend(&fits, fits.empty() ? "" : "; ", g.Label(), " ", FormatStat(s));
  }
  return Claim{"fig5.fit_small", "Fig. 5 (text): the difference for fitting the training length is small",
               absl::StrCat("exact@", L, ": ", fits),
               hi < 0.5 ? Verdict::kNotTested : Graded(hi - lo < 0.1, hi - lo < 0.3),
               "reproduced: every variant's mean exact accuracy at the training length within 0.1 of "
               "the others; partly: within 0.3; not tested: no variant fits L (best < 0.5), where "
               "variants that all fail are trivially close"};
}

// Layer 4's look-behind over every seed with maps: Mamba N32 against linear attention 32. Read only
// where both copy strings of the training length: the map of a model still on the copy plateau is noise
// (seeds 1-3 and 4-6 of the cpu preset gave opposite orders for a Mamba that copied nothing).
Claim SharperClaim(const FigureRun& run, const Group& m32, const Group& la32, int L) {
  std::string problem;
  auto scores = [&](const Group& g) {
    std::vector<double> out;
    for (const auto& [seed, m] : MapsBySeed(run, g, &problem)) {
      if (static_cast<int>(m.maps.size()) > kLayer)
        out.push_back(LookBehindScore(m.maps[kLayer], m.paste_start, m.length));
    }
    return MeanSe(out);
  };
  const Stat sm = scores(m32), sl = scores(la32);
  const Stat fm = FinalStat(m32, L), fl = FinalStat(la32, L);
  const bool both_copy = fm.mean >= 0.5 && fl.mean >= 0.5;
  if (sm.n > 0 && sl.n > 0) {
    return Claim{
        "fig5.sharper", "Fig. 5: Mamba's map is sharper / more consistent than linear attention's",
        absl::StrCat("look-behind score of layer 4 over seeds: mimetic N32 ", FormatStat(sm, 2),
                     ", linear attention 32 ", FormatStat(sl, 2), "; exact@", L, ": mimetic N32 ",
                     FormatStat(fm), ", linear attention 32 ", FormatStat(fl)),
        both_copy ? Graded(ClearlyGreater(sm, sl, 0.1), ClearlyGreater(sm, sl, PartlyMargin(0.1)))
                  : Verdict::kNotTested,
        "mean ± SE over the seeds with maps; reproduced: Mamba's score clearly above linear attention's (by "
        "> 0.1 and its t interval); partly: by > 0.05; not tested when either model does not copy strings of "
        "the "
        "training length (mean exact accuracy < 0.5), whose maps say nothing of how it copies"};
  } else {
    return Claim{"fig5.sharper", "Fig. 5: Mamba's map is sharper than linear attention's", problem,
                 Verdict::kNotTested, "maps need the final checkpoints; not tested when no seed has them"};
  }
}

absl::StatusOr<std::vector<Claim>> Claims(const FigureRun& run) {
  const auto& lens = run.experiment.eval().lengths();
  if (lens.size() < 3) return absl::FailedPreconditionError("Fig. 5 needs eval lengths L, 2L, 4L");
  const int L2 = lens[1], L4 = lens[2];
  std::map<int, const Group*> la = LinearGroups(run);
  ASSIGN_OR_RETURN(const Group* m32, GetGroup(run, "mimetic_N32"));
  ASSIGN_OR_RETURN(const Group* m64, GetGroup(run, "mimetic_N64"));
  if (la.count(8) == 0 || la.count(32) == 0 || la.rbegin()->first <= 32) {
    return absl::FailedPreconditionError("Fig. 5 needs linear attention of head dims 8, 32 and one above 32");
  }
  const int big = la.rbegin()->first;
  const Stat s32 = FinalStat(*m32, L2), l32 = FinalStat(*la[32], L2), l8 = FinalStat(*la[8], L2),
             lbig = FinalStat(*la[big], L2);
  std::vector<Claim> claims;
  claims.push_back(FitSmallClaim(run, lens[0]));
  claims.push_back(Claim{
      "fig5.la32_close",
      "Fig. 5: linear attention with head dim 32 comes relatively close to "
      "Mamba with state 32, but Mamba is better",
      absl::StrCat(Describe(absl::StrCat("mimetic N32 exact@", L2), s32), " vs ",
                   Describe("linear attention 32", l32)),
      AllBelow({s32, l32}) ? Verdict::kNotTested
                           : Graded(ClearlyGreater(s32, l32, kMinEffect) && l32.mean >= 0.5 * s32.mean,
                                    ClearlyGreater(s32, l32, kMinEffect)),
      "reproduced: Mamba clearly above (by > 0.025 and its t interval) and linear attention within half "
      "of it; partly: Mamba clearly above; not tested: both below 0.05"});
  claims.push_back(Claim{
      "fig5.la8_under", "Fig. 5: head dimension 8 severely underperforms",
      absl::StrCat(Describe(absl::StrCat("linear attention 8 exact@", L2), l8), " vs ",
                   Describe("mimetic N32", s32)),
      AllBelow({s32, l8}) ? Verdict::kNotTested
                          : Graded(ClearlyGreater(s32, l8, 0.2), ClearlyGreater(s32, l8, PartlyMargin(0.2))),
      "reproduced: below Mamba N32 by > 0.2 (and its t interval); partly: by > 0.1; not tested: "
      "both below 0.05"});
  const double diff = lbig.mean - l32.mean;
  claims.push_back(Claim{
      "fig5.la_big_barely", absl::StrCat("Fig. 5: head dimension 1024 barely exceeds 32"),
      absl::StrFormat("linear attention %d minus 32 at %d: %+.3f (%s vs %s)", big, L2, diff, FormatStat(lbig),
                      FormatStat(l32)),
      AllBelow({lbig, l32}) ? Verdict::kNotTested : Graded(diff >= 0 && diff < 0.1, std::abs(diff) < 0.1),
      "reproduced: 0 <= difference < 0.1; partly: |difference| < 0.1; not tested: both below 0.05 "
      "(all at 0 says nothing)"});
  const Stat a32 = FinalStat(*m32, L4), a64 = FinalStat(*m64, L4);
  claims.push_back(
      Claim{"fig5.n64_better", "Fig. 5: doubling Mamba's state to 64 substantially improves generalisation",
            absl::StrCat(Describe(absl::StrCat("N64 exact@", L4), a64), " vs ", Describe("N32", a32)),
            AllBelow({a32, a64})
                ? Verdict::kNotTested
                : Graded(ClearlyGreater(a64, a32, 0.05), ClearlyGreater(a64, a32, PartlyMargin(0.05))),
            "reproduced: N64 clearly above N32 at 4x (by > 0.05 and its t interval); partly: by > 0.025; "
            "not tested: both below 0.05"});
  claims.push_back(SharperClaim(run, *m32, *la[32], lens[0]));
  return claims;
}

}  // namespace

FigureDef MakeFig5() {
  return FigureDef{"fig5", "Fig. 5: causal linear attention of several head dims vs mimetic Mamba as layer 4",
                   Draw, Claims};
}

}  // namespace mimetic::experiments
