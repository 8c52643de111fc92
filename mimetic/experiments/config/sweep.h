// Sweeps: the grid of independent runs an experiment stands for. A grid point is one variant, one
// value of every sweep axis that applies to it, and one seed; it runs as a single-variant,
// single-seed experiment (its "point experiment") in its own directory, so any point can run, fail,
// resume or be re-run alone, in this process, in a child process (--jobs) or on a cluster.
//
//   ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(experiment));   // validates every point
//   for (const GridPoint& p : grid) {
//     ASSIGN_OR_RETURN(Experiment one, PointExperiment(experiment, p));
//     ... RunPoint(one, run_dir / p.dir, ...)
//   }
//
// Point directories: points/<variant>/seed<k> without axes, points/<variant>/<axis>=<value>,.../seed<k>
// with them (axis and value names are the axes' short names).
#ifndef MIMETIC_EXPERIMENTS_SWEEP_H_
#define MIMETIC_EXPERIMENTS_SWEEP_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"

namespace mimetic::experiments {

struct AxisValue {
  std::string axis;   // the axis's short name, e.g. "lr"
  std::string value;  // the value's short name, e.g. "1e-3"
  bool operator==(const AxisValue& o) const { return axis == o.axis && value == o.value; }
};

struct GridPoint {
  int index = 0;  // position in the grid: the same experiment always gives the same order
  std::string variant;
  uint64_t seed = 0;
  std::vector<AxisValue> axes;         // in the order of the sweep's axes that apply to the variant
  std::vector<std::string> overrides;  // "field=value" assignments this point applies
  std::string dir;                     // relative to the experiment's run directory
};

// The short name of an axis: its `name`, else the last component of its first field ("lr").
std::string AxisName(const SweepAxis& axis);
// Whether `axis` sets the learning rate (then the summary selects the best rate per variant).
bool IsLearningRateAxis(const SweepAxis& axis);

// The size of a grid, counted without expanding it: `configurations` per seed (the sum over variants of
// the product of their axes' value counts) and `points` = seeds x configurations, both saturating at
// INT64_MAX.
struct GridSize {
  int64_t configurations = 0;
  int64_t points = 0;
};
GridSize CountGrid(const Experiment& experiment);

// The most grid points one experiment may have. Each point is a training run with its own directory, and
// the runner lists and holds the grid a few times over (~0.9 KB a point in all): a 4,000,000-point sweep
// took 3.6 GB and 50 s of a Slurm dry run before it printed anything (issue 51). 1,000,000 is five times
// the largest sweep tested (200,000 seeds, slurm_launcher_test); its dry run took 0.9 GB and 9 s on a
// 2-core machine.
inline constexpr int64_t kMaxGridPoints = 1000000;
// Grids from this size on say what they are doing (ExpandGrid's `progress`).
inline constexpr int64_t kAnnouncedGridPoints = 100000;
// With more configurations than this to check, a line after each this many.
inline constexpr int64_t kConfigurationsPerProgressLine = 10000;

// Every point in a fixed order: seeds outermost, then variants, then axes (first axis outermost).
// Validates the sweep itself and every distinct point experiment before returning, so a bad field,
// an empty list or a value out of range fails before any run starts, naming the axis and value. A grid
// of more than kMaxGridPoints is InvalidArgument naming its size and the limit, before anything is built.
// `progress`, when given, hears about large grids: a line before the work (kAnnouncedGridPoints points or
// kConfigurationsPerProgressLine configurations) and one after each kConfigurationsPerProgressLine
// configurations checked.
absl::StatusOr<std::vector<GridPoint>> ExpandGrid(const Experiment& experiment,
                                                  std::ostream* progress = nullptr);

// The point's own experiment: the overrides applied, only its variant and seed kept, no sweep,
// validated. Its name and output_dir are the parent's.
absl::StatusOr<Experiment> PointExperiment(const Experiment& experiment, const GridPoint& point);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_SWEEP_H_
