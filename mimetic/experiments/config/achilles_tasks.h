// The two tasks of the γ-init papers (composite function, inverse sequence) from their experiment
// config messages, so that `task { composite { split: "test" } }` or `eval { task { ... } }` reach
// mimetic/data's generators. config.cc MakeTask dispatches here.
//
//   ASSIGN_OR_RETURN(std::unique_ptr<data::Task> t, MakeCompositeTask(spec.composite()));
#ifndef MIMETIC_EXPERIMENTS_ACHILLES_TASKS_H_
#define MIMETIC_EXPERIMENTS_ACHILLES_TASKS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "mimetic/data/task.h"
#include "mimetic/experiments/config/experiment.pb.h"

namespace mimetic::experiments {

// InvalidArgument naming the field ("task.composite.split") for a word outside its list; the
// generators' own range errors (seq_len, key range) pass through.
absl::StatusOr<std::unique_ptr<data::Task>> MakeCompositeTask(const CompositeTask& spec);
absl::StatusOr<std::unique_ptr<data::Task>> MakeInverseSequenceTask(const InverseSequenceTask& spec);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_ACHILLES_TASKS_H_
