// One grid point of an experiment, trained and evaluated in its own directory:
//
//   <point_dir>/config.textproto     the point's resolved experiment (one variant, one seed)
//   <point_dir>/metrics.jsonl, tb/   the metric log (JSON lines, TensorBoard)
//   <point_dir>/checkpoints/step_*.safetensors
//   <point_dir>/progress.textproto   the evaluation curve and training time up to the last checkpoint
//   <point_dir>/plots/*.png          attention maps and average masks of every layer at the end
//   <point_dir>/result.textproto     written last: its presence marks the point as finished
//   <point_dir>/.lock                the pid of the process writing it (core/dir_lock.h)
//
// One process at a time writes a point directory (a second is refused, naming the first's pid). A
// stop signal (stop_signal.h) checkpoints the current step and returns a StoppedError. A point that
// is run again resumes from its newest checkpoint (bit-identical losses), or, when
// result.textproto exists, is not run at all. A directory holding a different experiment (any field
// that changes the trained state) is refused; evaluation and logging fields may change on a rerun.
//
//   ASSIGN_OR_RETURN(RunResult r, RunPoint(point_experiment, point, run_dir / point.dir, options));
#ifndef MIMETIC_EXPERIMENTS_POINT_RUN_H_
#define MIMETIC_EXPERIMENTS_POINT_RUN_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/config/sweep.h"

namespace mimetic::experiments {

struct PointOptions {
  std::ostream* progress = nullptr;  // progress lines (stderr when null)
  bool plots = true;                 // attention-map PNGs at the end
  // Stop after this many steps in this process, checkpointing first, as a job killed by a scheduler
  // would (0 = no limit). Running again resumes from that checkpoint.
  int64_t step_budget = 0;
};

// A grid point's outcome. `result` is complete only when `finished`.
struct RunResult {
  GridPoint point;
  PointResult result;
  bool finished = false;
  std::vector<double> losses;  // training loss of every step this process ran
};

// Trains and evaluates `experiment` (a point experiment: one variant, one seed; see sweep.h).
absl::StatusOr<RunResult> RunPoint(const Experiment& experiment, const GridPoint& point,
                                   const std::string& point_dir, const PointOptions& options);

// `experiment` without the fields a rerun into the same directory may change: where outputs go, whether it
// resumes, how often it logs, evaluates or checkpoints, when it stops early and how it is evaluated. A point
// directory (and a run directory, runner.h) holds one experiment: refused when this differs.
Experiment TrainedState(Experiment experiment);

// OK when the experiment's device can be used (CUDA needs the backend linked in and a GPU).
absl::Status CheckDevice(const Experiment& experiment);

// The finished result in `point_dir`, if any (NotFound when the point has not finished), checked against
// the point experiment that should have made it (point_result_check.h): DataLoss naming the file, field,
// value and expected range when it could not have been written by a run of that point.
absl::StatusOr<PointResult> ReadPointResult(const std::string& point_dir, const Experiment& point_experiment);
// The same for grid point `point` of the sweep `experiment` in `run_dir`; the point experiment is
// resolved only when a result exists (resolving every point of a large sweep is slow). A point directory
// or result.textproto below run_dir that is a symbolic link is refused (DataLoss), not read through.
absl::StatusOr<PointResult> ReadGridPointResult(const std::string& run_dir, const Experiment& experiment,
                                                const GridPoint& point);

// Final exact / token accuracy at `length` (NaN when absent).
double FinalExact(const PointResult& r, int length);
double FinalToken(const PointResult& r, int length);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_POINT_RUN_H_
