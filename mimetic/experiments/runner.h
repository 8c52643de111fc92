// Runs an experiment: for every variant and seed, builds the model (default init + the variant's
// transforms), trains it with the jitted step, evaluates at the requested lengths, logs, checkpoints
// (and resumes), and finally writes the summary table, accuracy curves and attention maps.
//
//   ASSIGN_OR_RETURN(Experiment e, LoadExperiment(path, overrides));
//   ASSIGN_OR_RETURN(ExperimentSummary s, RunExperiment(e, RunOptions{}));
//   std::cout << s.table;
//
// Run directory <output_dir>/<name>/: config.textproto (resolved), metrics.jsonl, tb/ (TensorBoard),
// summary.csv, summary.md, checkpoints/<variant>/seed<k>/step_*.safetensors, plots/*.png.
#ifndef MIMETIC_EXPERIMENTS_RUNNER_H_
#define MIMETIC_EXPERIMENTS_RUNNER_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/experiment.pb.h"

namespace mimetic::experiments {

struct RunOptions {
  std::ostream* progress = nullptr;  // progress lines (stderr when null)
  bool plots = true;                 // PNG curves and attention maps
  // Stop each run after this many steps in this process, checkpointing first, as a job killed by
  // a scheduler would (0 = no limit). Running again resumes from that checkpoint.
  int64_t step_budget = 0;
};

// Final evaluation of one (variant, seed) run.
struct RunResult {
  std::string variant;
  uint64_t seed = 0;
  int64_t steps = 0;
  double seconds = 0;
  std::map<int64_t, double> exact;  // eval length -> exact-string accuracy
  std::map<int64_t, double> token;  // eval length -> per-token accuracy
  std::vector<double> losses;       // training loss per step (this process's steps)
};

struct ExperimentSummary {
  std::string run_dir;
  std::vector<RunResult> runs;
  std::string table;  // markdown: variant x length, mean ± std over seeds
};

absl::StatusOr<ExperimentSummary> RunExperiment(const Experiment& experiment, const RunOptions& options);

// Mean and sample std over seeds of each variant's final accuracy, as a markdown table.
std::string SummaryTable(const Experiment& e, const std::vector<RunResult>& runs);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUNNER_H_
