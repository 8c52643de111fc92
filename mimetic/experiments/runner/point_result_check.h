// The one check of a finished point's result.textproto read back from disk: whatever wrote it (this
// machine, a cluster job, a GPU machine whose points were merged, a clone's kept results, a hand edit),
// its values must be ones a run of that point could have made, or it is refused by name: file, field,
// value and the range expected. An accuracy of 7, a negative one, a NaN, an empty file (no variant, no
// final evaluation) or another point's result never reaches a summary or a verdict.
//
//   RETURN_IF_ERROR(CheckPointResult(result, point_experiment, path));
#ifndef MIMETIC_EXPERIMENTS_RUNNER_POINT_RESULT_CHECK_H_
#define MIMETIC_EXPERIMENTS_RUNNER_POINT_RESULT_CHECK_H_

#include <string>

#include "absl/status/status.h"
#include "mimetic/experiments/config/experiment.pb.h"

namespace mimetic::experiments {

// OK when `r` could have been written by training `point` (a point experiment: one variant, one seed):
//   - variant and seed are the point's;
//   - steps in [0, train.steps], and equal to train.steps unless early_stopped or diverged;
//   - seconds finite and >= 0; threads in [0, 65536];
//   - final_loss finite and >= 0 (a diverged point records NaN);
//   - a final evaluation at one or more lengths, each length >= 1 and listed once, exact and token
//     accuracies finite and in [0, 1] (0 for a diverged point);
//   - curve steps in [0, steps] and increasing, their accuracies as the final ones.
// DataLoss otherwise, naming `file`, the field, its value and what was expected.
absl::Status CheckPointResult(const PointResult& r, const Experiment& point, const std::string& file);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUNNER_POINT_RESULT_CHECK_H_
