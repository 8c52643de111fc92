// The paper's claims about one figure, what this run measured for each, and a verdict computed by code
// from this run's metrics; rendered as the figure's claims.md, with the comparisons verdicts are decided
// by (on stats.h's mean and standard error over seeds).
//
//   Stat mimetic = MeanSe(exact_at_100_mimetic), standard = MeanSe(exact_at_100_default);
//   Claim c{"fig1.copy",
//           "Fig. 1: mimetic init lets Mamba copy strings of length 100, default init does not",
//           absl::StrCat("exact@100: mimetic ", FormatStat(mimetic), ", default ", FormatStat(standard)),
//           Graded(ClearlyGreater(mimetic, standard, 0.2) && mimetic.mean >= 0.5,
//                  ClearlyGreater(mimetic, standard, 0.05)),
//           "reproduced: mimetic exact@100 > default + 0.2 (and its t interval) and >= 0.5; partly: > "
//           "default + 0.05"};
//   RETURN_IF_ERROR(WriteTextFile("runs/fig1/claims.md",  // run_files.h
//                                 ClaimsMarkdown("Fig. 1", "cpu", "4-layer Mamba 2, width 64", {c})));
#ifndef MIMETIC_EXPERIMENTS_CLAIMS_H_
#define MIMETIC_EXPERIMENTS_CLAIMS_H_

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/results/stats.h"

namespace mimetic::experiments {

enum class Verdict { kReproduced, kPartly, kNotReproduced, kNotTested };
inline constexpr std::array<Verdict, 4> kAllVerdicts = {Verdict::kReproduced, Verdict::kPartly,
                                                        Verdict::kNotReproduced, Verdict::kNotTested};

// "reproduced", "partly", "not reproduced", "not tested".
std::string VerdictName(Verdict verdict);

// What a claim's verdict says about the paper, so that the paper's claims are counted apart:
//   kPaper: the paper's claim read as the paper reads it (its lengths, its metric, its models);
//   kStandIn: a reading the paper did not make, standing in for one this run cannot make (at the
//     training length instead of 2x, per token instead of exact, with a teacher this run trained itself);
//   kOtherTarget: a claim of another paper or of a follow-up target (the γ and transfer figures).
enum class ClaimKind { kPaper, kStandIn, kOtherTarget };
inline constexpr std::array<ClaimKind, 3> kAllClaimKinds = {ClaimKind::kPaper, ClaimKind::kStandIn,
                                                            ClaimKind::kOtherTarget};
// "paper", "stand-in", "other target".
std::string ClaimKindName(ClaimKind kind);
// The inverse; InvalidArgument listing the three words otherwise.
absl::StatusOr<ClaimKind> ParseClaimKind(const std::string& name);

struct Claim {
  std::string id;        // short and stable, e.g. "fig1.copy"
  std::string paper;     // the paper's claim, quoted or paraphrased, with its figure
  std::string measured;  // the numbers this run measured for it
  Verdict verdict = Verdict::kNotTested;
  std::string how;  // the rule the code applied, e.g. "mimetic exact@100 >= default + 0.2 and >= 0.5"
  ClaimKind kind = ClaimKind::kPaper;
};

// Every comparison below is a 95% interval with Student's t (stats.h): with n seeds a mean's standard
// error is scaled by t_{0.975, n-1} (4.303 for 3 seeds), not by 2, which with 3 seeds is about an 82%
// interval. One seed has no spread to measure, so nothing is clear from it.

// a.mean exceeds b.mean by more than `margin` AND by more than the interval of the difference,
// t_{0.975, df} * sqrt(a.se^2 + b.se^2) with Welch's df (WelchDf). False when either has fewer than 2
// values.
bool ClearlyGreater(const Stat& a, const Stat& b, double margin = 0);

// A paired contrast (per-seed differences, mean ± SE over seeds) exceeds `margin` AND its interval,
// t_{0.975, n-1} * se. False when it has fewer than 2 values.
bool ClearlyPositive(const Stat& contrast, double margin = 0);

// |a.mean - b.mean| is within `tolerance` or within the interval of the difference (as ClearlyGreater):
// the run cannot tell a and b apart. False when either has no values.
bool NotClearlyDifferent(const Stat& a, const Stat& b, double tolerance = 0);

// The margin a "partly" asks for where "reproduced" asks for `reproduced_margin`: half of it, and at
// least kMinEffect. Every "partly" takes the same noise test as "reproduced" with this lower margin, so
// no verdict above "not reproduced" rests on raw means.
inline constexpr double kMinEffect = 0.025;  // about 3 strings in an eval of 128: below it, no finding
double PartlyMargin(double reproduced_margin);

// True when every stat's mean is below `floor` (a stat with no values, whose mean is NaN, counts as
// below): accuracies at the task's chance level compare nothing with nothing, so a rule reading them
// gives "not tested" rather than "not reproduced". The floor is the task's chance level plus a margin
// (chance.h LearnedFloor: 0.05 for exact copies, 1/pairs + 0.05 for MQAR per query).
bool AllBelow(std::initializer_list<Stat> stats, double floor = 0.05);

// The guard of every claim that one variant fails (plateaus, never copies 2L, does not generalise): the
// failure of `failing` at a reading is evidence only where the variant it is compared with, `other`,
// succeeds at the same reading: other.mean >= `success` and clearly above `failing` (ClearlyGreater by
// `margin`). A failure both share says the setting is too hard for either, not that one is worse; such
// a claim is "not tested", never "reproduced" or "partly".
bool FailureIsEvidence(const Stat& failing, const Stat& other, double success, double margin = 0.1);

// kReproduced when `reproduced`, else kPartly when `partly`, else kNotReproduced.
Verdict Graded(bool reproduced, bool partly);

// How many claims (of `kind` only, when given) have each verdict, in kAllVerdicts order.
std::array<int, 4> CountVerdicts(const std::vector<Claim>& claims, std::optional<ClaimKind> kind = {});
// "5 claims: 2 reproduced, 1 partly, 1 not reproduced, 1 not tested" (verdicts with 0 left out).
std::string VerdictCountsLine(const std::vector<Claim>& claims);
// The tallies a reader should see, the paper's claims apart from the rest: "paper's claims: 5 (2
// reproduced, 1 partly, 2 not tested); stand-ins: 3 (3 not reproduced)" (a kind other than the paper's
// with no claim is left out; verdicts with 0 too).
std::string TalliesLine(const std::vector<Claim>& claims);
// " (stand-in)" / " (other target)" / "" for the paper's own: the label a claim's id carries in tables.
std::string KindLabel(ClaimKind kind);

// Which grid points a figure's verdicts stand on. A figure judged on part of its grid (points not finished,
// e.g. a campaign slice, or refused on reading, runner/point_result_check.h) says so, and its verdicts are
// provisional: the missing points may change them.
struct Coverage {
  int judged = 0, total = 0;
  std::vector<std::string> missing;  // point directories without a result
  std::vector<std::string> refused;  // why each refused point was refused (file, field, value, range)
  bool Partial() const { return judged < total; }
};
// "- Points judged: all 12 grid points" or "- Points judged: 5 of 12 grid points: the verdicts are
// **provisional** ...", with the missing and refused points as sub-items.
std::string CoverageMarkdown(const Coverage& coverage);

// Markdown for claims.md: a header naming the figure, preset and setup; a table
// claim | paper | measured | verdict; then each claim's rule. '|' and '<' in a cell are escaped and
// newlines become spaces, so any text keeps the table intact and shows as written.
// `room` (figure_common.h RoomLines) is listed under the setup, one line per compared model, after
// `models` (variant_setup.h VariantSetupLines): what each compared model was trained as. With a coverage
// (total > 0) its line follows, and on a partial grid every verdict reads "(provisional)".
std::string ClaimsMarkdown(const std::string& figure_title, const std::string& preset,
                           const std::string& setup, const std::vector<Claim>& claims,
                           const std::vector<std::string>& room = {},
                           const std::vector<std::string>& models = {}, const Coverage& coverage = {});

// The room lines as a markdown list item with one sub-item each ("" when there are none).
std::string RoomMarkdown(const std::vector<std::string>& room);

// `text` made safe for one markdown table cell.
std::string MarkdownCell(const std::string& text);

// The claims as data (claims.json beside claims.md), so the report can gather every figure's verdicts
// without recomputing them: [{"id": ..., "paper": ..., "measured": ..., "verdict": "partly", "how": ...,
// "kind": "stand-in"}].
std::string ClaimsJson(const std::vector<Claim>& claims);
// The inverse of ClaimsJson. InvalidArgument naming the claim's index and field for malformed JSON, a
// missing or non-string field, a verdict that is not one of VerdictName's words, or a kind that is not
// one of ClaimKindName's ("kind" may be absent: claims written before it are the paper's).
absl::StatusOr<std::vector<Claim>> ParseClaimsJson(const std::string& text);
// "reproduced" -> kReproduced, ...; InvalidArgument listing the four words otherwise.
absl::StatusOr<Verdict> ParseVerdict(const std::string& name);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CLAIMS_H_
