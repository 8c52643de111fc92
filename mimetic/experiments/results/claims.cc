#include "mimetic/experiments/results/claims.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "nlohmann/json.hpp"

namespace mimetic::experiments {

std::string VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kReproduced:
      return "reproduced";
    case Verdict::kPartly:
      return "partly";
    case Verdict::kNotReproduced:
      return "not reproduced";
    case Verdict::kNotTested:
      return "not tested";
  }
  return "not tested";
}

namespace {
// The 95% interval of a - b: Student's t at Welch's df times the standard error of the difference.
double DiffHalfWidth(const Stat& a, const Stat& b) {
  return StudentT975(WelchDf(a, b)) * std::sqrt(a.se * a.se + b.se * b.se);
}
}  // namespace

bool ClearlyGreater(const Stat& a, const Stat& b, double margin) {
  if (a.n < 2 || b.n < 2) return false;
  const double diff = a.mean - b.mean;
  return diff > margin && diff > DiffHalfWidth(a, b);
}

bool ClearlyPositive(const Stat& contrast, double margin) {
  return contrast.n >= 2 && contrast.mean > margin && contrast.mean > HalfWidth95(contrast);
}

bool NotClearlyDifferent(const Stat& a, const Stat& b, double tolerance) {
  if (a.n == 0 || b.n == 0) return false;
  const double diff = std::fabs(a.mean - b.mean);
  // One value of either: no interval to tell them apart with (DiffHalfWidth is infinite).
  return diff <= tolerance || !(diff > DiffHalfWidth(a, b));
}

double PartlyMargin(double reproduced_margin) { return std::max(kMinEffect, reproduced_margin / 2); }

bool AllBelow(std::initializer_list<Stat> stats, double floor) {
  for (const Stat& s : stats) {
    if (s.n > 0 && !(s.mean < floor)) return false;
  }
  return true;
}

bool FailureIsEvidence(const Stat& failing, const Stat& other, double success, double margin) {
  return other.mean >= success && ClearlyGreater(other, failing, margin);
}

Verdict Graded(bool reproduced, bool partly) {
  if (reproduced) return Verdict::kReproduced;
  return partly ? Verdict::kPartly : Verdict::kNotReproduced;
}

std::string ClaimKindName(ClaimKind kind) {
  switch (kind) {
    case ClaimKind::kPaper:
      return "paper";
    case ClaimKind::kStandIn:
      return "stand-in";
    case ClaimKind::kOtherTarget:
      return "other target";
  }
  return "paper";
}

absl::StatusOr<ClaimKind> ParseClaimKind(const std::string& name) {
  for (ClaimKind k : kAllClaimKinds) {
    if (ClaimKindName(k) == name) return k;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("claim kind \"", name, "\" is not one of \"paper\", \"stand-in\", \"other target\""));
}

std::string KindLabel(ClaimKind kind) {
  return kind == ClaimKind::kPaper ? "" : absl::StrCat(" (", ClaimKindName(kind), ")");
}

std::array<int, 4> CountVerdicts(const std::vector<Claim>& claims, std::optional<ClaimKind> kind) {
  std::array<int, 4> counts{};
  for (const Claim& claim : claims) {
    if (!kind.has_value() || claim.kind == *kind) ++counts[static_cast<size_t>(claim.verdict)];
  }
  return counts;
}

namespace {

// "2 reproduced, 1 partly" (verdicts with 0 left out).
std::string VerdictParts(const std::array<int, 4>& counts) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < kAllVerdicts.size(); ++i) {
    if (counts[i] > 0) parts.push_back(absl::StrCat(counts[i], " ", VerdictName(kAllVerdicts[i])));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace

std::string VerdictCountsLine(const std::vector<Claim>& claims) {
  const std::string parts = VerdictParts(CountVerdicts(claims));
  return absl::StrCat(claims.size(), claims.size() == 1 ? " claim" : " claims",
                      parts.empty() ? std::string() : absl::StrCat(": ", parts));
}

std::string TalliesLine(const std::vector<Claim>& claims) {
  std::vector<std::string> tallies;
  for (ClaimKind kind : kAllClaimKinds) {
    const std::array<int, 4> counts = CountVerdicts(claims, kind);
    int n = 0;
    for (int c : counts) n += c;
    // The paper's tally is always shown (0 says no claim of the paper was judged); the others only when
    // they have claims.
    if (n == 0 && kind != ClaimKind::kPaper) continue;
    const std::string name = kind == ClaimKind::kPaper     ? "paper's claims"
                             : kind == ClaimKind::kStandIn ? "stand-ins"
                                                           : "other targets";
    tallies.push_back(
        absl::StrCat(name, ": ", n, n == 0 ? std::string() : absl::StrCat(" (", VerdictParts(counts), ")")));
  }
  return absl::StrJoin(tallies, "; ");
}

std::string MarkdownCell(const std::string& text) {
  // '<' would open an HTML tag in a markdown renderer ("<strings>" vanishes); "\<" shows it.
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"<", "\\<"}, {"\r\n", " "}, {"\n", " "}, {"\r", " "}});
}

std::string RoomMarkdown(const std::vector<std::string>& room) {
  if (room.empty()) return "";
  std::string md = "- Room (key dimension vs each eval length; training row vs the longest eval example):\n";
  for (const std::string& line : room) absl::StrAppend(&md, "  - ", MarkdownCell(line), "\n");
  return md;
}

std::string CoverageMarkdown(const Coverage& c) {
  if (c.total <= 0) return "";
  if (!c.Partial()) return absl::StrCat("- Points judged: all ", c.total, " grid points\n");
  std::string md = absl::StrCat("- Points judged: ", c.judged, " of ", c.total,
                                " grid points: the verdicts are **provisional** (the other points may change "
                                "them)\n");
  if (!c.missing.empty()) {
    absl::StrAppend(&md, "  - not finished (", c.missing.size(), "): ",
                    MarkdownCell(absl::StrJoin(c.missing, ", ")), "\n");
  }
  for (const std::string& why : c.refused) absl::StrAppend(&md, "  - refused: ", MarkdownCell(why), "\n");
  return md;
}

std::string ClaimsMarkdown(const std::string& figure_title, const std::string& preset,
                           const std::string& setup, const std::vector<Claim>& claims,
                           const std::vector<std::string>& room, const std::vector<std::string>& models,
                           const Coverage& coverage) {
  std::string model_md;
  if (!models.empty()) {
    model_md =
        "- Models compared (layers, width; learning rate, schedule, steps, batch; task, rows; seeds):\n";
    for (const std::string& line : models) absl::StrAppend(&model_md, "  - ", MarkdownCell(line), "\n");
  }
  std::string md = absl::StrCat(
      "# Claims: ", MarkdownCell(figure_title), "\n\n", "- Preset: `", preset, "`\n",
      "- Setup: ", MarkdownCell(setup), "\n", model_md, RoomMarkdown(room), CoverageMarkdown(coverage), "- ",
      TalliesLine(claims), "\n\n",
      "Each verdict is computed by code from this run's metrics with the rule "
      "listed below the table; \"not reproduced\" means not at this run's size.\n\n");
  if (claims.empty()) {
    md += "No claims were evaluated for this figure.\n";
    return md;
  }
  md += "| claim | paper | measured | verdict |\n|---|---|---|---|\n";
  for (const Claim& c : claims) {
    absl::StrAppend(&md, "| ", MarkdownCell(c.id + KindLabel(c.kind)), " | ", MarkdownCell(c.paper), " | ",
                    MarkdownCell(c.measured), " | **", VerdictName(c.verdict), "**",
                    coverage.Partial() ? " (provisional)" : "", " |\n");
  }
  md += "\n## Rules\n\n";
  for (const Claim& c : claims) {
    absl::StrAppend(&md, "- `", MarkdownCell(c.id),
                    "`: ", MarkdownCell(c.how.empty() ? "(no rule given)" : c.how), "\n");
  }
  return md;
}

absl::StatusOr<Verdict> ParseVerdict(const std::string& name) {
  for (Verdict v : kAllVerdicts) {
    if (VerdictName(v) == name) return v;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "verdict \"", name, "\" is not one of \"reproduced\", \"partly\", \"not reproduced\", \"not tested\""));
}

std::string ClaimsJson(const std::vector<Claim>& claims) {
  nlohmann::ordered_json array = nlohmann::ordered_json::array();
  for (const Claim& c : claims) {
    array.push_back({{"id", c.id},
                     {"paper", c.paper},
                     {"measured", c.measured},
                     {"verdict", VerdictName(c.verdict)},
                     {"how", c.how},
                     {"kind", ClaimKindName(c.kind)}});
  }
  // Invalid UTF-8 in a string becomes U+FFFD instead of throwing.
  return array.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

absl::StatusOr<std::vector<Claim>> ParseClaimsJson(const std::string& text) {
  const nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return absl::InvalidArgumentError("claims JSON: not valid JSON");
  if (!root.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("claims JSON: expected an array of claims, found JSON of type ", root.type_name()));
  }
  std::vector<Claim> claims;
  for (size_t i = 0; i < root.size(); ++i) {
    const nlohmann::json& item = root[i];
    std::array<std::string, 5> fields;
    constexpr std::array<const char*, 5> kNames = {"id", "paper", "measured", "verdict", "how"};
    for (size_t f = 0; f < kNames.size(); ++f) {
      if (!item.is_object() || !item.contains(kNames[f]) || !item[kNames[f]].is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat("claims JSON: claim ", i, " has no string field \"", kNames[f], "\""));
      }
      fields[f] = item[kNames[f]].get<std::string>();
    }
    absl::StatusOr<Verdict> verdict = ParseVerdict(fields[3]);
    if (!verdict.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("claims JSON: claim ", i, ": ", verdict.status().message()));
    }
    ClaimKind kind = ClaimKind::kPaper;
    if (item.contains("kind")) {
      absl::StatusOr<ClaimKind> parsed = item["kind"].is_string()
                                             ? ParseClaimKind(item["kind"].get<std::string>())
                                             : absl::InvalidArgumentError("\"kind\" is not a string");
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("claims JSON: claim ", i, ": ", parsed.status().message()));
      }
      kind = *parsed;
    }
    claims.push_back(Claim{fields[0], fields[1], fields[2], *verdict, fields[4], kind});
  }
  return claims;
}

}  // namespace mimetic::experiments
