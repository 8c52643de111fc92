#include "mimetic/experiments/figures/preset_rules.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/room.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

// The violations of one resolved grid point; `where` names it.
std::vector<std::string> PointViolations(const Experiment& e, const PresetRules& rules, bool compared,
                                         const std::string& where) {
  std::vector<std::string> out;
  const int train_len = TrainLength(e.task());
  const bool copy_like = ExampleTokens(e.task(), 1).has_value();
  for (const Variant& v : e.variants()) {
    const models::ModelSpec& spec = VariantModel(e, v);
    const std::optional<int> key = MinKeyDimension(spec);
    for (int len : e.eval().lengths()) {
      if (rules.key_per_length <= 0 || !key || train_len <= 0 || len > 2 * train_len) continue;
      if (*key < rules.key_per_length * len) {
        out.push_back(absl::StrFormat("%s %s: key dimension %d (%s) < %g x %d", where, v.name(), *key,
                                      KeyDimensionText(spec), rules.key_per_length, len));
      }
    }
    for (const models::LayerSpec& l : spec.layers()) {
      if (l.has_mamba1() && rules.mamba1_state > 0 && l.mamba1().d_state() != rules.mamba1_state) {
        out.push_back(absl::StrCat(where, " ", v.name(), ": Mamba 1 state ", l.mamba1().d_state(),
                                   " (the paper's is ", rules.mamba1_state, ")"));
        break;
      }
    }
    if (compared && spec.d_model() < rules.min_width) {
      out.push_back(absl::StrCat(where, " ", v.name(), ": width ", spec.d_model(), " < ", rules.min_width,
                                 " where variants are compared"));
    }
  }
  if (copy_like && rules.min_train_length > 0 && train_len < rules.min_train_length) {
    out.push_back(absl::StrCat(where, ": training strings up to ", train_len, " < ", rules.min_train_length));
  }
  if (rules.rows_hold_examples && copy_like) {
    if (e.eval().allow_longer_than_training_rows()) {
      out.push_back(
          absl::StrCat(where, ": eval.allow_longer_than_training_rows (rows must hold every example)"));
    }
  }
  return out;
}

}  // namespace

PresetRules RulesFor(const std::string& figure) {
  PresetRules rules;
  if (figure == "fig7") rules.key_per_length = 0;  // the figure is about N: small N is the point
  if (figure == "scaling") {  // the grid measures where room starts: small keys and short L are the point
    rules.key_per_length = 0;
    rules.min_train_length = 0;
  }
  if (figure == "fig9") rules.min_train_length = 0;  // the figure sweeps the training length itself
  return rules;
}

absl::StatusOr<std::vector<std::string>> PresetViolations(const Experiment& preset,
                                                          const PresetRules& rules) {
  ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(preset));
  std::vector<std::string> out;
  std::set<std::string> seen;  // one line per distinct violation text (seeds repeat them)
  for (const GridPoint& p : grid) {
    if (p.seed != grid[0].seed) continue;  // seeds do not change sizes
    ASSIGN_OR_RETURN(Experiment point, PointExperiment(preset, p));
    const std::string where = p.dir.substr(0, p.dir.rfind('/'));
    for (std::string& v : PointViolations(point, rules, preset.variants_size() > 1, where)) {
      if (seen.insert(v).second) out.push_back(std::move(v));
    }
  }
  return out;
}

}  // namespace mimetic::experiments
