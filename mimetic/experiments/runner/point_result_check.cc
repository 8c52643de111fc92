#include "mimetic/experiments/runner/point_result_check.h"

#include <cmath>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/status.h"

namespace mimetic::experiments {
namespace {

// "'<file>': <field> is <value>; expected <what>".
absl::Status Bad(const std::string& file, const std::string& field, const std::string& value,
                 const std::string& expected) {
  return absl::DataLossError(absl::StrCat("'", file, "': ", field, " is ", value, "; expected ", expected,
                                          " (refused: no run of this point could have written it)"));
}

std::string Num(double v) { return absl::StrFormat("%.17g", v); }

// An accuracy: finite, in [0, 1], and 0 when the point diverged (point_run.cc records 0).
absl::Status CheckAccuracy(double v, const std::string& field, bool diverged, const std::string& file) {
  if (!std::isfinite(v) || v < 0 || v > 1) return Bad(file, field, Num(v), "a finite accuracy in [0, 1]");
  if (diverged && v != 0) return Bad(file, field, Num(v), "0 (the point diverged: diverged: true)");
  return absl::OkStatus();
}

// The accuracies of one evaluation (`where`: "final" or "curve[3]"): lengths >= 1 and each listed once.
template <typename Accuracies>
absl::Status CheckEvaluation(const Accuracies& accuracies, const std::string& where, bool diverged,
                             const std::string& file) {
  std::set<int> seen;
  for (int i = 0; i < accuracies.size(); ++i) {
    const LengthAccuracy& a = accuracies.Get(i);
    const std::string at = absl::StrCat(where, "[", i, "]");
    if (a.length() < 1) return Bad(file, at + ".length", absl::StrCat(a.length()), "a length >= 1");
    if (!seen.insert(a.length()).second) {
      return Bad(file, at + ".length", absl::StrCat(a.length()), "each length once per evaluation");
    }
    RETURN_IF_ERROR(CheckAccuracy(a.exact(), at + ".exact", diverged, file));
    RETURN_IF_ERROR(CheckAccuracy(a.token(), at + ".token", diverged, file));
  }
  return absl::OkStatus();
}

absl::Status CheckIdentity(const PointResult& r, const Experiment& point, const std::string& file) {
  const std::string& variant = point.variants(0).name();
  if (r.variant() != variant) {
    return Bad(file, "variant", absl::StrCat("\"", r.variant(), "\""),
               absl::StrCat("\"", variant, "\" (the point's variant)"));
  }
  if (r.seed() != point.seeds(0)) {
    return Bad(file, "seed", absl::StrCat(r.seed()), absl::StrCat(point.seeds(0), " (the point's seed)"));
  }
  return absl::OkStatus();
}

absl::Status CheckCounts(const PointResult& r, const Experiment& point, const std::string& file) {
  const int64_t steps = point.train().steps();
  if (r.steps() < 0 || r.steps() > steps) {
    return Bad(file, "steps", absl::StrCat(r.steps()), absl::StrCat("0..", steps, " (train.steps)"));
  }
  if (r.steps() != steps && !r.early_stopped() && !r.diverged()) {
    return Bad(file, "steps", absl::StrCat(r.steps()),
               absl::StrCat(steps, " (train.steps), as the point neither stopped early nor diverged"));
  }
  if (!std::isfinite(r.seconds()) || r.seconds() < 0) {
    return Bad(file, "seconds", Num(r.seconds()), "a finite time >= 0");
  }
  if (r.threads() < 0 || r.threads() > 65536) {
    return Bad(file, "threads", absl::StrCat(r.threads()), "0..65536");
  }
  if (!r.diverged() && (!std::isfinite(r.final_loss()) || r.final_loss() < 0)) {
    return Bad(file, "final_loss", Num(r.final_loss()),
               "a finite cross-entropy >= 0 (only a diverged point records none)");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckPointResult(const PointResult& r, const Experiment& point, const std::string& file) {
  if (point.variants_size() != 1 || point.seeds_size() != 1) {
    return absl::InvalidArgumentError(
        "CheckPointResult: expected a point experiment (one variant, one seed)");
  }
  RETURN_IF_ERROR(CheckIdentity(r, point, file));
  RETURN_IF_ERROR(CheckCounts(r, point, file));
  if (r.final_size() == 0) {
    return Bad(file, "final", "empty", "the final evaluation at one or more lengths");
  }
  RETURN_IF_ERROR(CheckEvaluation(r.final(), "final", r.diverged(), file));
  int64_t previous = -1;
  for (int i = 0; i < r.curve_size(); ++i) {
    const EvalPoint& p = r.curve(i);
    const std::string at = absl::StrCat("curve[", i, "]");
    if (p.step() < 0 || p.step() > r.steps() || p.step() <= previous) {
      return Bad(file, at + ".step", absl::StrCat(p.step()),
                 absl::StrCat(previous + 1, "..", r.steps(), " (increasing, at most steps)"));
    }
    previous = p.step();
    // A curve entry is from before any divergence: its accuracies are real ones, not the recorded 0.
    RETURN_IF_ERROR(CheckEvaluation(p.accuracy(), at, /*diverged=*/false, file));
  }
  return absl::OkStatus();
}

}  // namespace mimetic::experiments
