// Summaries of a sweep: grid points grouped by variant and axis values, the learning rate chosen per
// group when the sweep has a learning-rate axis (as the paper did), and mean ± standard error over
// seeds of the final accuracies and loss.
//
//   Aggregate a = AggregateRuns(experiment, runs);
//   for (const Group& g : a.groups) std::cout << g.Label() << " " << FormatStat(g.exact.at(50)) << "\n";
//   RETURN_IF_ERROR(WriteSummaries(experiment, runs, a, run_dir));  // summary.md, summary.csv, runs.csv
#ifndef MIMETIC_EXPERIMENTS_AGGREGATE_H_
#define MIMETIC_EXPERIMENTS_AGGREGATE_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/results/stats.h"
#include "mimetic/experiments/runner/point_run.h"

namespace mimetic::experiments {

// One learning rate of a group, as the selection saw it.
struct LrCandidate {
  std::string lr;  // the axis's value name
  Stat exact;      // the selection metric (Group::select_metric) at the selection length, over seeds
  Stat loss;       // final training loss, over seeds
};

struct Group {
  std::string variant;
  std::vector<AxisValue> axes;  // the point's axis values without the learning-rate axis
  std::string lr;               // the chosen rate ("" when the sweep has no learning-rate axis)
  std::vector<LrCandidate> candidates;
  std::vector<const RunResult*> runs;  // finished runs of the chosen rate, one per seed
  std::map<int, Stat> exact, token;    // eval length -> final accuracy over seeds
  Stat loss;
  int diverged = 0;  // runs of the chosen rate that diverged
  // Where and how the rate was chosen (see SelectionOf): the length, and "exact" or "per-query".
  int select_length = 0;
  std::string select_metric = "exact";

  // "mimetic" or "mimetic a=true,bc=false".
  std::string Label() const;
  // The value of axis `name` ("" when the group has no such axis).
  std::string Axis(const std::string& name) const;
};

struct Aggregate {
  std::vector<Group> groups;            // in grid order
  std::vector<std::string> unfinished;  // point directories without a result
  int select_length = 0;                // the length every group's rate was selected on (0: they differ)
};

// The length and metric a point's learning rate is chosen on, where its figure reads it: the length is
// sweep.select_length when set, else the point's own training length (TrainLength of its task once its
// overrides are applied, e.g. L of "copy500") when that is one of eval.lengths, else eval.lengths(0); the
// metric is per-query (per-token) accuracy for mqar and mqar_copy, as the figures read MQAR, and exact
// accuracy for every other task. `token` is set true for per-query.
int SelectionOf(const Experiment& experiment, const GridPoint& point, bool* token);

// Groups `runs` (finished or not; unfinished ones are listed, not counted). The best rate of a group
// has the highest mean final selection metric at its selection length (SelectionOf its first run); ties
// go to the lower mean final training loss, then to the earlier value in the axis.
Aggregate AggregateRuns(const Experiment& experiment, const std::vector<RunResult>& runs);

// The group with this label (nullptr when absent).
const Group* FindGroup(const Aggregate& aggregate, const std::string& label);

// Markdown: one row per group, mean ± standard error over seeds at every eval length, the chosen rate,
// and (for learning-rate sweeps) each candidate's score.
std::string SummaryMarkdown(const Experiment& experiment, const Aggregate& aggregate);
// CSV, one row per group and eval length: variant, each axis, lr, length, seeds, exact_mean, exact_se,
// token_mean, token_se, loss_mean, loss_se. No two columns share a name: an axis named like a fixed column
// (e.g. "length") or like an earlier axis is headed "axis_<name>".
std::string SummaryCsv(const Experiment& experiment, const Aggregate& aggregate);
// CSV, one row per finished point and eval length (every seed and rate).
std::string RunsCsv(const Experiment& experiment, const std::vector<RunResult>& runs);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_AGGREGATE_H_
