// Runs an experiment: expands its sweep into grid points (variants x axes x seeds, sweep.h), runs
// every point that has not finished (in this process, or side by side in child processes with
// `jobs` > 1), then aggregates whatever has finished into summaries and plots.
//
//   ASSIGN_OR_RETURN(Experiment e, LoadExperiment(path, overrides));
//   ASSIGN_OR_RETURN(ExperimentSummary s, RunExperiment(e, RunOptions{}));
//   std::cout << s.table;
//
// Run directory <output_dir>/<name>/:
//   sweep.textproto          the experiment as given (unresolved; child processes and cluster jobs
//                            read their grid point from it). A run directory holds one experiment: a
//                            rerun or --aggregate whose experiment differs in what it trains (the
//                            point directories' notion, TrainedState in point_run.h), its variants or
//                            its sweep axes is refused, naming the first difference; seeds, evaluation
//                            and logging fields may change; resume: false starts the directory afresh.
//   points/<variant>[/<axis>=<value>,...]/seed<k>/   one directory per grid point (point_run.h)
//   summary.md, summary.csv  mean ± standard error over seeds per variant (and axis values), with the
//                            learning rate chosen per variant when the sweep has a train.lr axis
//   runs.csv                 every finished point's final numbers
//   plots/accuracy_len<L>.png  exact accuracy against step, one line per point
//   .lock                    the pid of the process running the sweep (one at a time; core/dir_lock.h)
//   slurm.sbatch, slurm/     with --launcher=slurm: the batch script and its logs (slurm_launcher.h)
#ifndef MIMETIC_EXPERIMENTS_RUNNER_H_
#define MIMETIC_EXPERIMENTS_RUNNER_H_

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/results/aggregate.h"
#include "mimetic/experiments/runner/point_run.h"
#include "mimetic/experiments/runner/slurm_launcher.h"

namespace mimetic::experiments {

struct RunOptions {
  std::ostream* progress = nullptr;  // progress lines (stderr when null)
  bool plots = true;                 // PNG curves and attention maps
  // Stop each point after this many steps in this process, checkpointing first, as a job killed by
  // a scheduler would (0 = no limit). Running again resumes from that checkpoint.
  int64_t step_budget = 0;
  // Grid points run side by side, each in a child process running `self` with --point; the cores
  // (`cores`, 0 = every core this process may use) are divided among them so none is oversubscribed.
  int jobs = 1;
  int cores = 0;
  std::string self;  // the runner binary (default /proc/self/exe)
  // Train only the grid points whose directory (points/<variant>/.../seed<k>) contains a match of this
  // regular expression (point_filter.h; empty: every point). The others are left as they are, finished or
  // not, here, in --jobs children and on Slurm; the summaries still cover every finished point.
  std::string points;
  // Run nothing: summarise the points that have finished and list the others.
  bool aggregate_only = false;
  // Refuse a sweep whose points need more memory than this (0: what the machine has available; see
  // memory_estimate.h), before anything runs.
  int64_t max_memory_bytes = 0;
  // Where the points run: here (in process, or in children with `jobs` > 1), or as a Slurm job array
  // (slurm_launcher.h; RunExperiment returns once it is submitted, and `aggregate_only` later collects).
  enum class Launcher { kLocal, kSlurm };
  Launcher launcher = Launcher::kLocal;
  SlurmOptions slurm;
};

struct ExperimentSummary {
  std::string run_dir;
  std::vector<GridPoint> grid;
  std::vector<RunResult> runs;  // one per grid point, in grid order (finished or not)
  Aggregate aggregate;
  std::string table;  // summary.md
  // Points whose result.textproto was refused (point_result_check.h), each as its error: counted as not
  // finished, and named wherever the sweep is summarised.
  struct Refused {
    std::string dir;  // the point's directory, relative to the run directory
    std::string why;  // the check's error
  };
  std::vector<Refused> refused;
  // Set when the points were handed to Slurm instead (or, for a dry run, would have been): then
  // nothing ran or was summarised here (`runs` are the grid's points, unread; `table` is empty).
  std::optional<SlurmSubmission> submitted;
};

absl::StatusOr<ExperimentSummary> RunExperiment(const Experiment& experiment, const RunOptions& options);

// Runs grid point `index` of the experiment saved in `sweep_config` (a run directory's
// sweep.textproto): what a child process (--jobs) or a cluster job does.
absl::StatusOr<RunResult> RunSavedPoint(const std::string& sweep_config, int index,
                                        const PointOptions& options);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUNNER_H_
