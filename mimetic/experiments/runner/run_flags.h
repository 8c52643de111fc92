// The command-line flags shared by the runner (run_main.cc) and the figure targets (figure_main.cc),
// and what they do: how many jobs, threads, whether to only aggregate, the launcher (local, or Slurm
// with its --slurm_* options; slurm_launcher.h), and the internal point mode
// in which a child process (or a cluster job) runs one grid point of a saved sweep.
#ifndef MIMETIC_EXPERIMENTS_RUN_FLAGS_H_
#define MIMETIC_EXPERIMENTS_RUN_FLAGS_H_

#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/runner/runner.h"

ABSL_DECLARE_FLAG(int, jobs);
ABSL_DECLARE_FLAG(int, threads);
ABSL_DECLARE_FLAG(bool, aggregate);
ABSL_DECLARE_FLAG(bool, plots);
ABSL_DECLARE_FLAG(int64_t, step_budget);
ABSL_DECLARE_FLAG(std::string, points);
ABSL_DECLARE_FLAG(std::string, point_of);
ABSL_DECLARE_FLAG(int, point);

namespace mimetic::experiments {

// Removes every "--set X" / "--set=X" from argv (updating argc) and returns the X's in order.
std::vector<std::string> ExtractSetFlags(int* argc, char** argv);

// The RunOptions the flags ask for (checked: --jobs >= 1, --threads >= 0, a known --launcher and valid
// --slurm_* values), with `threads` applied to this process (SetThreadCount) when given.
absl::StatusOr<RunOptions> OptionsFromFlags();

// Whether --point_of was given (then RunPointMode is the whole job of the process).
bool IsPointMode();
// Runs grid point --point of the sweep saved at --point_of; returns the process exit code (128 + n
// after stop signal n, which checkpoints first: stop_signal.h). Stops the same way when the parent
// process dies.
int RunPointMode();

// Resolves a relative output_dir against BUILD_WORKING_DIRECTORY (set by `bazel run`).
void ResolveOutputDir(Experiment* experiment);

// Runs the experiment with the flags' options, prints the summary table and where the run directory
// is; returns the process exit code (errors are printed, with a note that finished work is kept;
// 128 + n after stop signal n).
int RunAndReport(Experiment experiment);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUN_FLAGS_H_
