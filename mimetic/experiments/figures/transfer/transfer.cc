// The attention-to-Mamba transfer (Wang et al. 2024, "The Mamba in the Llama", Fig. 1 and §2): a
// teacher with attention layers is trained on copy first (the preset's `teacher`: a hybrid, since
// mamba_ssm's attention has no positional encoding of its own), then a Mamba 2 student starts from it:
// each attention layer becomes a Mamba 2 layer with x <- V, B <- K, C <- Q, out <- O (new A, Δ, conv),
// the teacher's other layers are kept, and the student is trained on the same task. Compared with the
// same Mamba 2 from mamba_ssm's default init and from mimetic init (the mimetic paper's §6: mimetic
// init as a stand-in for what trained weights give). Variants: `transfer`, `default`, `mimetic`.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/experiments/figures/figure_common.h"

namespace mimetic::experiments {
namespace {

const std::vector<std::string> kVariants = {"transfer", "default", "mimetic"};

absl::StatusOr<Figure> Draw(const FigureRun& run) {
  const auto& lengths = run.experiment.eval().lengths();
  Figure fig;
  fig.title = "Attention-to-Mamba transfer on copy vs default vs mimetic init (dotted: L, solid: 2L)";
  fig.columns = 2;
  const std::vector<int> lens(lengths.begin(), lengths.end());
  ASSIGN_OR_RETURN(CurvePanel exact, AccuracyPanel(run, "exact-string accuracy", kVariants, lens));
  ASSIGN_OR_RETURN(CurvePanel token, AccuracyPanel(run, "per-token accuracy", kVariants, lens, true));
  fig.panels = {exact, token};
  return fig;
}

std::string StepText(const std::optional<int64_t>& s) { return s ? absl::StrCat("step ", *s) : "never"; }

absl::StatusOr<std::vector<Claim>> Claims(const FigureRun& run) {
  const auto& lengths = run.experiment.eval().lengths();
  if (lengths.size() < 2) return absl::FailedPreconditionError("transfer: needs eval lengths L and 2L");
  const int L = lengths[0], L2 = lengths[1];
  ASSIGN_OR_RETURN(const Group* tr, GetGroup(run, "transfer"));
  ASSIGN_OR_RETURN(const Group* def, GetGroup(run, "default"));
  ASSIGN_OR_RETURN(const Group* mim, GetGroup(run, "mimetic"));
  std::vector<Claim> claims;
  // Fitting speed: the first evaluated step where the mean exact accuracy at L reaches 0.5.
  const std::optional<int64_t> st = FirstStepReaching(*tr, L, 0.5), sd = FirstStepReaching(*def, L, 0.5);
  claims.push_back(Claim{
      "transfer.fits_faster",
      "Mamba in the Llama §2: initialising Mamba from attention weights (x <- V, B <- K, C <- Q) carries the "
      "teacher's solution over, so the student fits the task faster than from scratch",
      absl::StrCat("mean exact@", L, " first >= 0.5: transfer ", StepText(st), ", default ", StepText(sd),
                   ", mimetic ", StepText(FirstStepReaching(*mim, L, 0.5))),
      Graded(st.has_value() && (!sd.has_value() || 2 * *st <= *sd), st.has_value() && (!sd || *st < *sd)),
      absl::StrFormat("reproduced: transfer reaches mean exact@%d >= 0.5, at most half as many steps as the "
                      "default (or the default never does); partly: earlier than the default",
                      L)});
  const Stat t1 = FinalStat(*tr, L), d1 = FinalStat(*def, L), t2 = FinalStat(*tr, L2),
             d2 = FinalStat(*def, L2);
  claims.push_back(Claim{
      "transfer.fits_better",
      "Mamba in the Llama: the transferred Mamba ends better than one trained from scratch on the same task",
      absl::StrCat(Describe(absl::StrCat("transfer exact@", L), t1), " vs ", Describe("default", d1), "; ",
                   Describe(absl::StrCat("transfer exact@", L2), t2), " vs ", Describe("default", d2)),
      // A length where both copy nothing (< 0.05) compares one lucky string with none: it decides nothing.
      AllBelow({t1, d1, t2, d2})
          ? Verdict::kNotTested
          : Graded(ClearlyGreater(t1, d1, 0.1) || (t1.mean >= 0.9 && ClearlyGreater(t2, d2, 0.1)),
                   ClearlyGreater(t1, d1, PartlyMargin(0.1)) || ClearlyGreater(t2, d2, PartlyMargin(0.1))),
      absl::StrFormat(
          "reproduced: transfer's final exact@%d clearly above the default's (by > 0.1 and its t "
          "interval), or both fit %d (>= 0.9) and transfer is clearly above at %d; partly: clearly above "
          "by > 0.05 at either length; not tested when all four are below 0.05",
          L, L, L2)});
  const Stat m1 = FinalStat(*mim, L), m2 = FinalStat(*mim, L2);
  const double gap = std::max(t1.mean - m1.mean, t2.mean - m2.mean);
  claims.push_back(Claim{
      "transfer.mimetic_close",
      "Mimetic paper §6: mimetic init gets close to what trained weights give, without a teacher",
      absl::StrCat(Describe(absl::StrCat("mimetic exact@", L), m1), ", ", Describe(absl::StrCat("@", L2), m2),
                   " vs transfer ", absl::StrFormat("%.2f, %.2f", t1.mean, t2.mean),
                   absl::StrFormat("; largest shortfall %.2f", gap)),
      t1.mean < 0.5 ? Verdict::kNotTested : Graded(gap <= 0.1, gap <= 0.25),
      absl::StrFormat(
          "reproduced: mimetic's mean final exact accuracy at %d and %d is within 0.1 of the "
          "transfer's (or above it); partly: within 0.25; not tested: the transfer itself does not fit (mean "
          "exact@L < 0.5), so there is nothing to get close to",
          L, L2)});
  // The claims that compare with mimetic init, fixed here before any result: the teacher's Mamba layers
  // start from mimetic init at `cpu`, so a transfer from it carries mimetic init's structure and
  // "mimetic gets close to the transfer" compares mimetic with itself. The others compare with the default.
  MarkCircularTeacher(run, {".mimetic_close"}, &claims);
  return claims;
}

}  // namespace

FigureDef MakeTransferFigure() {
  return FigureDef{"transfer",
                   "Attention-to-Mamba transfer (Mamba in the Llama): Mamba 2 from an attention teacher vs "
                   "default vs mimetic init, on copy",
                   Draw, Claims, /*paper_figure=*/false};
}

}  // namespace mimetic::experiments
