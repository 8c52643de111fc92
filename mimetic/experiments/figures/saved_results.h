// A figure's results kept in the repository, figures/<id>/results/<preset>/: what a run of the figure
// produced that is small and enough to draw and judge it again without training: sweep.textproto (the
// experiment as run), each point's result.textproto and final_maps.pb (and provenance.textproto for a
// point the campaign trained on a GPU, campaign/merge.h), the run's claims.md, claims.json, summary.csv and
// figure.png, and run.md (command, date, machine, times); for a figure that trains a stand-in teacher
// first (Figs. 10, 11), the teacher's sweep.textproto, result and final weights (teacher.safetensors) in
// teacher/ too. Checkpoints, logs and TensorBoard files stay in the run directory.
//
//   figure --figure=fig1 --jobs=2 --save_results        (after the run: SaveResults into the checkout)
//   figure --figure=all --from_results                  (RestoreResults into runs/, then --aggregate)
#ifndef MIMETIC_EXPERIMENTS_FIGURES_SAVED_RESULTS_H_
#define MIMETIC_EXPERIMENTS_FIGURES_SAVED_RESULTS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace mimetic::experiments {

// <root>/mimetic/experiments/figures/<figure>/results/<preset>, root a checkout.
std::string ResultsPath(const std::string& root, const std::string& figure, const std::string& preset);

// How a figure's results were made, for run.md.
struct RunRecord {
  std::string figure, preset;
  std::string command;  // as a user types it, e.g. "tools/bazel run //mimetic/experiments:fig1 -- --jobs=2"
  std::string machine;  // MachineLine()
  absl::Time finished;
  bool aggregate_only = false;       // drawn and judged from points trained earlier
  int points = 0, trained_here = 0;  // grid points; those this command trained
  double wall_seconds = 0;           // this command's wall clock
  double training_seconds = 0;       // summed over points, each by its own clock (every process)
  std::string note;                  // --results_note, e.g. that the machine was not idle
};
std::string RunMarkdown(const RunRecord& r);

// Finished grid points (result.textproto files) under run_dir/points.
int CountFinishedPoints(const std::string& run_dir);

// Replaces `dest` with the kept files of `run_dir` and `run_md` as run.md; `dest` changes only when every
// file was copied (a staging folder beside it is renamed into place). FailedPrecondition when run_dir
// has no sweep.textproto or claims.md (the figure has not been drawn and judged there). The copy is
// core/untrusted_tree.h's: a link, FIFO or device where a kept file or folder is refuses the save, naming
// it, and nothing is written outside `dest` (a caller writing into a checkout checks `dest` itself with
// core::CheckNoLinksBelow).
absl::Status SaveResults(const std::string& run_dir, const std::string& dest, const std::string& run_md);

// Makes `run_dir` a run directory holding the saved results (no checkpoints), which `--aggregate` then
// draws and judges. A run_dir that exists is replaced only when an earlier RestoreResults made it (its
// marker file is there); anything else there is refused, so a real run is never overwritten. Saved results
// come from anyone's clone: they are copied as SaveResults copies (nothing followed, nothing written outside
// run_dir), into a folder beside run_dir that replaces it only when complete.
absl::Status RestoreResults(const std::string& results, const std::string& run_dir);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FIGURES_SAVED_RESULTS_H_
