// The training step: masked cross-entropy of the model, its gradient, global-norm clipping and the
// AdamW update, captured once per batch shape with core::Jit and replayed every step after.
//
//   TrainStep step(spec, OptimizerConfig{});            // AdamW(0.9, 0.999, 1e-8), wd 0.1, clip 1.0
//   ASSIGN_OR_RETURN(TrainState state, InitTrainState(params));
//   ASSIGN_OR_RETURN(StepMetrics m, step(&state, batch, schedule.LearningRate(state.step)));
#ifndef MIMETIC_TRAIN_TRAIN_STEP_H_
#define MIMETIC_TRAIN_TRAIN_STEP_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/core/tree_jit.h"
#include "mimetic/data/batch.h"
#include "mimetic/models/model_spec.pb.h"
#include "mimetic/ops/adamw/adamw.h"

namespace mimetic::train {

using core::ParamTree;
using core::Tensor;

struct OptimizerConfig {
  ops::AdamWHyper adamw{0.9, 0.999, 1e-8, 0.1};
  double max_grad_norm = 1.0;  // <= 0 disables clipping
  // Leaves whose path matches any of these globs get no weight decay (mamba_ssm's _no_weight_decay
  // set is {"**/A_log", "**/D", "**/dt_bias", "**/norm*/**"}); empty = decay everything (Jelassi).
  std::vector<std::string> no_decay_globs;
};

// Parameters, AdamW moments (same structure) and the number of updates made.
struct TrainState {
  ParamTree params, m, v;
  int64_t step = 0;
};

absl::StatusOr<TrainState> InitTrainState(const ParamTree& params);

struct StepMetrics {
  double loss = 0;       // before the update
  double grad_norm = 0;  // before clipping
  double lr = 0;
};

// A step whose loss is not finite fails with a status that IsDivergence recognises (a typed payload,
// not its message text), so callers can record the divergence and go on (e.g. with other rates).
absl::Status DivergenceError(const std::string& message);
bool IsDivergence(const absl::Status& status);

// A DivergenceError naming the first parameter or optimizer moment that holds a NaN or an infinity
// (OK when every value is finite). The step's own check sees only the loss and gradient norm before
// the update; this sees the updated state, before it is saved or evaluated. Copies device leaves to
// the host.
absl::Status CheckFinite(const TrainState& state);

class TrainStep {
 public:
  TrainStep(models::ModelSpec spec, OptimizerConfig config);
  // Updates `state` in place (new tree values; the old ones are released). Fails without touching
  // `state` when the batch or the model is bad.
  absl::StatusOr<StepMetrics> operator()(TrainState* state, const data::Batch& batch, double lr);
  int num_traces() const { return jit_.jit().num_traces(); }
  const core::Jit& jit() const { return jit_.jit(); }
  core::Jit& mutable_jit() { return jit_.mutable_jit(); }

 private:
  absl::StatusOr<std::vector<ParamTree>> Traced(absl::Span<const ParamTree> inputs);

  models::ModelSpec spec_;
  OptimizerConfig config_;
  ParamTree structure_;  // the parameter paths and shapes the step was traced for
  core::TreeJit jit_;
};

// The loss the step minimises: MaskedCrossEntropy(Apply(params, spec, tokens), targets, mask).
Tensor LossOf(const ParamTree& params, const models::ModelSpec& spec, const data::Batch& batch);

}  // namespace mimetic::train

#endif  // MIMETIC_TRAIN_TRAIN_STEP_H_
