// Fig. 2 of the paper: an 8-layer Mamba whose layer 4 is single-head softmax attention learns to copy
// perfectly and generalises to 2x the training length; its attention layer looks sharply behind.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/experiments/figures/figure_common.h"

namespace mimetic::experiments {
namespace {

constexpr int kAttentionLayer = 3;  // layer 4, counting from 1

absl::StatusOr<FinalMaps> MapsOf(const FigureRun& run, const std::string& label) {
  ASSIGN_OR_RETURN(const Group* g, GetGroup(run, label));
  if (g->runs.empty()) return absl::NotFoundError(absl::StrCat(label, " has no finished run"));
  ASSIGN_OR_RETURN(FinalMaps m, ComputeFinalMaps(run, *g->runs[0]));
  if (static_cast<int>(m.maps.size()) <= kAttentionLayer) {
    return absl::FailedPreconditionError(
        absl::StrCat(label, " has ", m.maps.size(), " layers; Fig. 2 needs 8"));
  }
  return m;
}

absl::StatusOr<Figure> Draw(const FigureRun& run) {
  const auto& lengths = run.experiment.eval().lengths();
  const std::vector<int> lens(lengths.begin(), lengths.end());
  Figure fig;
  fig.title = "Fig. 2: 8-layer Mamba with attention as layer 4 (dotted: training length, solid: 2x)";
  fig.columns = 2;
  ASSIGN_OR_RETURN(CurvePanel exact,
                   AccuracyPanel(run, "exact-string accuracy", {"hybrid", "default"}, lens));
  ASSIGN_OR_RETURN(CurvePanel token,
                   AccuracyPanel(run, "per-token accuracy", {"hybrid", "default"}, lens, true));
  fig.panels = {exact, token};
  for (const std::string label : {"hybrid", "default"}) {
    ASSIGN_OR_RETURN(FinalMaps m, MapsOf(run, label));
    ASSIGN_OR_RETURN(
        HeatmapPanel p,
        AttentionMapPanel(absl::StrCat(label, ", layer 4 ", label == "hybrid" ? "(attention)" : "(Mamba)"),
                          m.maps[kAttentionLayer], false, static_cast<double>(m.paste_start)));
    fig.panels.push_back(p);
  }
  return fig;
}

absl::StatusOr<std::vector<Claim>> Claims(const FigureRun& run) {
  const int L = run.experiment.eval().lengths(0), L2 = run.experiment.eval().lengths(1);
  ASSIGN_OR_RETURN(const Group* hyb, GetGroup(run, "hybrid"));
  const Stat h1 = FinalStat(*hyb, L), h2 = FinalStat(*hyb, L2);
  std::vector<Claim> claims;
  claims.push_back(Claim{"fig2.fits", "Fig. 2: the hybrid copies perfectly at the training length",
                         Describe(absl::StrCat("hybrid exact@", L), h1),
                         Graded(h1.mean >= 0.95, h1.mean >= 0.5),
                         absl::StrFormat("reproduced: hybrid exact@%d >= 0.95; partly: >= 0.5", L)});
  claims.push_back(
      Claim{"fig2.generalises", "Fig. 2: the hybrid generalises perfectly to 2x the training length",
            Describe(absl::StrCat("hybrid exact@", L2), h2), Graded(h2.mean >= 0.95, h2.mean >= 0.5),
            absl::StrFormat("reproduced: hybrid exact@%d >= 0.95; partly: >= 0.5", L2)});
  std::string problem;
  std::vector<double> scores;
  for (const auto& [seed, m] : MapsBySeed(run, *hyb, &problem)) {
    if (static_cast<int>(m.maps.size()) <= kAttentionLayer) continue;
    scores.push_back(LookBehindScore(m.maps[kAttentionLayer], m.paste_start, m.length));
  }
  const Stat s = MeanSe(scores);
  if (s.n > 0) {
    claims.push_back(Claim{
        "fig2.sharp", "Fig. 2: the attention layer learns a sharp look-behind to the copied token",
        absl::StrCat("look-behind score of layer 4 over seeds: ", FormatStat(s, 2), " (n=", s.n, ")"),
        Graded(s.mean >= 0.8, s.mean >= 0.5),
        "score = fraction of paste positions whose largest attention weight is within 2 tokens of the source "
        "token, mean over the seeds with maps; reproduced: >= 0.8; partly: >= 0.5"});
  } else {
    claims.push_back(Claim{"fig2.sharp", "Fig. 2: sharp look-behind", problem, Verdict::kNotTested,
                           "maps need the final checkpoints; not tested when no seed has them"});
  }
  return claims;
}

}  // namespace

FigureDef MakeFig2() {
  return FigureDef{"fig2", "Fig. 2: a hybrid 8-layer Mamba with single-head attention as layer 4 on copy",
                   Draw, Claims};
}

}  // namespace mimetic::experiments
