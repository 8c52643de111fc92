// What each compared model was trained as, one line per distinct setup of a figure run's groups, for
// claims.md under the tallies: a verdict is about these models at these settings, so a reader sees them
// beside it (architecture and sizes, optimiser and schedule, steps and batch, task and rows, seeds).
//
//   for (const std::string& line : VariantSetupLines(run)) std::cout << line << "\n";
//   // "default, mimetic: Mamba 2 (N 128, head dim 32) x 2, width 128; lr 0.002 linear (warmup 50),
//   //  900 steps, batch 16; copy V 26, strings 5..16, rows 69 tokens; seeds 1, 2, 3"
#ifndef MIMETIC_EXPERIMENTS_FIGURES_VARIANT_SETUP_H_
#define MIMETIC_EXPERIMENTS_FIGURES_VARIANT_SETUP_H_

#include <string>
#include <vector>

#include "mimetic/experiments/figures/figure.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::experiments {

// The layers of a resolved model: runs of equal layers as "Mamba 2 (N 128, head dim 32) x 7", joined by
// " + " ("Mamba 2 (N 128, head dim 32) x 3 + attention (1 head) + Mamba 2 (N 128, head dim 32) x 4").
std::string LayersText(const models::ModelSpec& resolved);

// One line per distinct setup among the run's groups, headed by the labels of every group that has it
// (groups differing only in what the line does not show, such as the init, share one): "<label>: <layers>,
// width D; lr <lr> <schedule> (warmup W), S steps, batch B; <task>, rows R tokens; seeds ...". Groups that
// cannot be resolved are left out.
std::vector<std::string> VariantSetupLines(const FigureRun& run);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FIGURES_VARIANT_SETUP_H_
