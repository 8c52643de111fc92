// Fig. 7 of the paper: Mamba 2 with state sizes N from small to large, default vs mimetic init, on
// copy. (a) generalisation as the area under the accuracy-vs-length curve (length_curve.h: the mean
// exact accuracy over the eval lengths L, 2L, 3L, 4L) against N; (b) the longest length copied with
// exact accuracy >= 0.5 against log2 N. The paper: mimetic N=32 ≈ default N=512, and the copied length
// grows about linearly in log N with mimetic init and hardly at all with the default.
#include <cmath>
#include <map>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/experiments/figures/figure_common.h"
#include "mimetic/experiments/results/length_curve.h"

namespace mimetic::experiments {
namespace {

constexpr char kAxis[] = "N";
constexpr double kCopied = 0.5;  // "copies strings of this length": exact accuracy >= 0.5
const char* const kVariants[] = {"default", "mimetic"};

// One variant's statistics per state size, over seeds.
struct ByN {
  std::map<int, Stat> auc, longest, fit;                      // N -> AUC, longest copied length, exact@L
  std::map<uint64_t, std::map<int, double>> longest_by_seed;  // seed -> N -> longest copied length
};

ByN Collect(const FigureRun& run, const std::string& variant) {
  std::vector<int> lengths(run.experiment.eval().lengths().begin(), run.experiment.eval().lengths().end());
  ByN out;
  for (const Group& g : run.summary.aggregate.groups) {
    int n = 0;
    if (g.variant != variant || !absl::SimpleAtoi(g.Axis(kAxis), &n)) continue;
    std::vector<double> auc, longest;
    for (const RunResult* r : g.runs) {
      const std::vector<LengthPoint> c = FinalExactCurve(r->result, lengths);
      auc.push_back(LengthAuc(c));
      longest.push_back(LongestLengthAtLeast(c, kCopied));
      out.longest_by_seed[r->point.seed][n] = longest.back();
    }
    out.auc[n] = MeanSe(auc);
    out.longest[n] = MeanSe(longest);
    out.fit[n] = FinalStat(g, lengths[0]);
  }
  return out;
}

absl::StatusOr<Figure> Draw(const FigureRun& run) {
  const auto& lengths = run.experiment.eval().lengths();
  if (lengths.size() < 2) return absl::FailedPreconditionError("Fig. 7 needs eval lengths L, 2L, ...");
  Figure fig;
  fig.title = "Fig. 7: state size N, Mamba 2, default vs mimetic (mean ± SE over seeds)";
  fig.columns = 3;
  CurvePanel auc{absl::StrCat("(a) AUC: mean exact accuracy over lengths ", lengths[0], "..",
                              lengths[lengths.size() - 1]),
                 "state size N", "area under the accuracy-vs-length curve"};
  CurvePanel longest{absl::StrCat("(b) longest length with exact accuracy >= ", kCopied),
                     "state size N (log2)", "length"};
  CurvePanel fit{absl::StrCat("exact accuracy at the training length ", lengths[0]), "state size N",
                 "exact accuracy"};
  auc.log_x = longest.log_x = fit.log_x = true;
  auc.y_min = fit.y_min = longest.y_min = 0;
  auc.y_max = fit.y_max = 1;
  int color = 0;
  for (const char* v : kVariants) {
    const ByN s = Collect(run, v);
    if (s.auc.empty()) return absl::FailedPreconditionError(absl::StrCat("Fig. 7: no runs of variant ", v));
    auc.bands.push_back(StatBand(v, s.auc, color));
    longest.bands.push_back(StatBand(v, s.longest, color));
    fit.bands.push_back(StatBand(v, s.fit, color));
    ++color;
  }
  fig.panels = {auc, longest, fit};
  return fig;
}

std::string PerN(const std::map<int, Stat>& by_n, int digits = 3) {
  std::string out;
  for (const auto& [n, s] : by_n)
    absl::StrAppend(&out, out.empty() ? "" : ", ", "N", n, " ", FormatStat(s, digits));
  return out;
}

// Slope of the mean longest copied length against log2 N.
double LogSlope(const std::map<int, Stat>& longest) {
  std::vector<double> xs, ys;
  for (const auto& [n, s] : longest) {
    if (!std::isfinite(s.mean)) continue;
    xs.push_back(std::log2(static_cast<double>(n)));
    ys.push_back(s.mean);
  }
  return LeastSquaresSlope(xs, ys);
}

// The claim is about where the default starts to fit L. When it fits L at no N of the grid (every mean
// below 0.5) that place lies beyond the grid, so the run cannot say whether it needs a large N; reading
// the largest N alone made one lucky seed (0.29 +- 0.29 at N 128, nothing at N 256) a "not reproduced".
Claim DefaultNeedsLargeN(const std::map<int, Stat>& fit, int L) {
  const Stat small = fit.begin()->second, large = fit.rbegin()->second;
  const Stat best = std::max_element(fit.begin(), fit.end(), [](const auto& a, const auto& b) {
                      return a.second.mean < b.second.mean;
                    })->second;
  return Claim{
      "fig7.default_needs_large_n",
      "Fig. 7a: with the default init, perfect copying at the training length needs a large state size",
      absl::StrCat("default exact@", L, ": ", PerN(fit)),
      !(best.mean >= 0.5) ? Verdict::kNotTested
                          : Graded(large.mean >= 0.9 && small.mean < 0.5, ClearlyGreater(best, small, 0.2)),
      absl::StrCat(
          "reproduced: default exact@", L,
          " >= 0.9 at the largest N and < 0.5 at the smallest; partly: the best N fits L (>= 0.5) "
          "and is above the smallest N by > 0.2 (and its t interval); not tested when the default fits L "
          "(>= 0.5) at no N of the grid")};
}

// The slope of the longest copied length against log2 N per seed (seeds missing an N left out), mean ±
// SE over seeds: seeds are the replicates a slope's noise is measured over.
Stat SlopeOverSeeds(const ByN& by) {
  std::vector<double> slopes;
  for (const auto& [seed, by_n] : by.longest_by_seed) {
    if (by_n.size() != by.longest.size()) continue;
    std::map<int, Stat> one;
    for (const auto& [n, v] : by_n) one[n] = Stat{v, 0, 1};
    slopes.push_back(LogSlope(one));
  }
  return MeanSe(slopes);
}

// "Grows linearly in log N with mimetic init, hardly at all with the default": a growth claim against a
// default that fits L at no N compares with a reference that learned nothing (its flat line says
// nothing about N), so it is not tested; otherwise the per-seed slopes carry the noise test.
Claim LogLinear(const ByN& m, const ByN& d, int L) {
  const double sm = LogSlope(m.longest), sd = LogSlope(d.longest);
  const Stat seeds_m = SlopeOverSeeds(m), seeds_d = SlopeOverSeeds(d);
  bool default_fits = false;
  for (const auto& [n, s] : d.fit) default_fits = default_fits || s.mean >= 0.5;
  const bool clear = ClearlyGreater(seeds_m, seeds_d, 0);
  return Claim{
      "fig7.log_linear",
      "Fig. 7b: the longest copied length grows about linearly in log N with mimetic init, hardly at all "
      "with the default",
      absl::StrFormat("slope of the longest length with exact >= %.1f per doubling of N: mimetic %+.2f, "
                      "default %+.2f (training length %d); per seed: mimetic %s, default %s; mimetic: %s; "
                      "default: %s%s",
                      kCopied, sm, sd, L, FormatStat(seeds_m, 2), FormatStat(seeds_d, 2), PerN(m.longest, 1),
                      PerN(d.longest, 1), default_fits ? "" : " (the default fits L at no N)"),
      !default_fits ? Verdict::kNotTested : Graded(sm >= 0.25 * L && sd < 0.5 * sm && clear, sm > 0 && clear),
      "slopes per seed, mean ± SE over seeds; reproduced: the mimetic slope >= L/4 per doubling, the "
      "default's below half of it, and mimetic's per-seed slopes clearly above the default's (its t "
      "interval); partly: clearly above; not tested when the default fits L (exact@L >= 0.5) at no N: a "
      "growth claim against a reference that learned nothing"};
}

absl::StatusOr<std::vector<Claim>> Claims(const FigureRun& run) {
  const auto& lengths = run.experiment.eval().lengths();
  if (lengths.size() < 2) return absl::FailedPreconditionError("Fig. 7 needs eval lengths L, 2L, ...");
  const int L = lengths[0];
  const ByN d = Collect(run, "default"), m = Collect(run, "mimetic");
  if (d.auc.size() < 2 || m.auc.size() < 2) {
    return absl::FailedPreconditionError("Fig. 7 needs both variants at two or more state sizes");
  }
  std::vector<Claim> claims;
  claims.push_back(DefaultNeedsLargeN(d.fit, L));
  {
    // The paper's pair is N=32 vs 512: mimetic at N against default at 16 N. Every such pair of the
    // grid is reported; the verdict is on the pair with the largest N (the paper's when present) among
    // those whose default at 16 N fits the training length: the paper's default at 512 copies L, and
    // matching a default that learned nothing would pass vacuously.
    std::string pairs;
    int verdict_n = 0, any_pair = 0;
    for (const auto& [n, s] : m.auc) {
      if (d.auc.count(16 * n) == 0) continue;
      const bool fits = d.fit.count(16 * n) && d.fit.at(16 * n).mean >= 0.5;
      absl::StrAppend(&pairs, pairs.empty() ? "" : "; ", "mimetic N", n, " ", FormatStat(s), " vs default N",
                      16 * n, " ", FormatStat(d.auc.at(16 * n)), fits ? "" : " (default does not fit L)");
      any_pair = n;
      if (fits) verdict_n = n;
    }
    Claim c{
        "fig7.mimetic_16x",
        "Fig. 7a: mimetic N=32 is comparable to default N=512 (16x better use of the state)", "",
        Verdict::kNotTested,
        "AUC = mean exact accuracy over the eval lengths; reproduced: mimetic AUC at N >= default AUC at "
        "16 N (or not clearly different) and clearly above default at N; partly: mimetic AUC at N clearly "
        "above default at N; read on the largest pair whose default at 16 N fits L (exact@L >= 0.5); not "
        "tested when both AUCs are < 0.05, no 16x pair is in the grid or no default at 16 N fits L"};
    if (any_pair == 0) {
      c.measured =
          absl::StrCat("no N with 16 N in the grid (mimetic: ", PerN(m.auc), "; default: ", PerN(d.auc), ")");
    } else if (verdict_n == 0) {
      c.measured = absl::StrCat(pairs, "; no default at 16N fits L");
    } else {
      const Stat mn = m.auc.at(verdict_n), d16 = d.auc.at(16 * verdict_n), dn = d.auc.at(verdict_n);
      c.measured = absl::StrCat(pairs, "; default at N", verdict_n, " ", FormatStat(dn));
      if (mn.mean < 0.05 && d16.mean < 0.05) {
        c.verdict = Verdict::kNotTested;
      } else {
        const bool above_own = ClearlyGreater(mn, dn, 0.05);
        c.verdict =
            Graded(above_own && (mn.mean >= d16.mean || NotClearlyDifferent(mn, d16, 0.05)), above_own);
      }
    }
    claims.push_back(c);
  }
  claims.push_back(LogLinear(m, d, L));
  return claims;
}

}  // namespace

FigureDef MakeFig7() {
  return FigureDef{"fig7", "Fig. 7: state size, Mamba 2, default vs mimetic init on copy", Draw, Claims};
}

}  // namespace mimetic::experiments
