// The teacher stage of an experiment (experiment.proto's `teacher`): a model trained first, as an
// ordinary resumable run in <output_dir>/<name>/teacher, whose final weights are written as
// teacher.safetensors there in mamba_ssm names (init::WriteMambaCheckpoint, as the from_checkpoint
// example writes its teacher); every init entry with `teacher: true` is then rewritten to read that file.
// Under --aggregate (options.aggregate_only) nothing trains and weights written earlier are reused, so
// restored results (figure --from_results), which keep the weights but no checkpoints, are judged again.
// It stands in for a pretrained checkpoint these machines cannot download (paper §6, Figs. 10-11) and is
// the attention teacher of the transfer experiment.
//
//   ASSIGN_OR_RETURN(PreparedTeacher t, PrepareTeacher(experiment, options));
//   ASSIGN_OR_RETURN(ExperimentSummary s, RunExperiment(t.experiment, options));
//   // claims.md says how the teacher was made: t.description
#ifndef MIMETIC_EXPERIMENTS_TEACHER_H_
#define MIMETIC_EXPERIMENTS_TEACHER_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/runner/runner.h"

namespace mimetic::experiments {

// The teacher's final weights, in its run directory (<output_dir>/<name>/teacher/).
inline constexpr char kTeacherWeightsFile[] = "teacher.safetensors";

struct PreparedTeacher {
  // The experiment to run: without `teacher`, its teacher entries reading `file` with the teacher's model.
  Experiment experiment;
  std::string file;              // <run dir>/teacher/teacher.safetensors ("" without a teacher)
  std::string description;       // one sentence for claims.md: what the teacher is and how it was trained
  std::optional<RunResult> run;  // the teacher's finished point
  // The teacher's own init includes mimetic init: a claim that a model from mimetic init resembles
  // it (Figs. 10, 11) is then circular.
  bool from_mimetic_init = false;
};

// Trains the teacher (resuming; the local launcher whatever options.launcher is, since the sweep needs
// its file: with Slurm it trains on the submitting machine) and rewrites the experiment; an experiment
// without a teacher, or any under a Slurm dry run (which writes nothing), comes back as it is.
// FailedPrecondition when the teacher did not finish (options.step_budget, a stop), naming its directory.
absl::StatusOr<PreparedTeacher> PrepareTeacher(const Experiment& experiment, const RunOptions& options);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_TEACHER_H_
