// The rules a `cpu` preset follows so that the paper's effect has room to show at CPU size
// (docs/reproducing.md, "Presets with room for the mechanism"): mimetic Mamba is linear attention whose
// key dimension is min(N, D) (config/room.h), and exact recall needs several times the string length.
// Each rule is checked on every grid point of a preset; a violation names the point and the numbers.
//
//   for (const std::string& v : PresetViolations(experiment, RulesFor("fig1"))) ...
#ifndef MIMETIC_EXPERIMENTS_FIGURES_PRESET_RULES_H_
#define MIMETIC_EXPERIMENTS_FIGURES_PRESET_RULES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"

namespace mimetic::experiments {

struct PresetRules {
  // Key dimension at least this multiple of the items recalled at each judged length (lengths up to 2x
  // the training length; a copy's tokens, MQAR's key-value pairs); Mamba 1 layers, whose state the paper
  // fixes, are not sized by it. 0 turns the rule off (a figure about that dimension, as Fig. 7 is about N).
  double key_per_length = 3;
  // Training rows hold the longest eval example (no eval.allow_longer_than_training_rows).
  bool rows_hold_examples = true;
  // When > 0, rows need only hold the examples up to this multiple of the training length (the lengths a
  // figure reads per group), and eval.allow_longer_than_training_rows may lengthen the others.
  int rows_hold_up_to_multiple = 0;
  // Width at least this where variants are compared (at width 32, N 64 has N 32's key rank).
  int min_width = 64;
  // Longest training string where 2x is read: shorter strings admit solutions that do not generalise.
  int min_train_length = 16;
  // Mamba 1 layers use the paper's state size.
  int mamba1_state = 32;
};

// The rules for a figure's cpu preset (Fig. 7 is about N; Fig. 9 about the training length).
PresetRules RulesFor(const std::string& figure);

// Every violation of `rules` over the grid points of `preset` (unresolved, as loaded), one line each:
// "points/mimetic/seed1: key dimension 32 (Mamba 2 key min(N 32, D 64) = 32) < 3 x 40".
absl::StatusOr<std::vector<std::string>> PresetViolations(const Experiment& preset, const PresetRules& rules);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FIGURES_PRESET_RULES_H_
