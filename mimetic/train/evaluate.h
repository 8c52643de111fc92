// Teacher-forced evaluation (Jelassi et al. 2024, "Repeat After Me", test_utils.py `evaluation`): one forward
// pass per batch, argmax at the answer positions. Exact-string accuracy = fraction of examples whose every
// answer position is right (for copy: identical to greedy generation of the pasted string); per-token
// accuracy = mean over examples of the fraction of right positions (Jelassi's char_acc; for MQAR this is the
// per-query accuracy of Zoology, train.py).
//
//   Evaluator eval(spec);
//   ASSIGN_OR_RETURN(EvalResult r, eval.AtLength(params, task, key, /*length=*/100, /*batch=*/64,
//                                                /*num_batches=*/2));
#ifndef MIMETIC_TRAIN_EVALUATE_H_
#define MIMETIC_TRAIN_EVALUATE_H_

#include <map>

#include "absl/status/statusor.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/key.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/data/task.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::train {

struct EvalResult {
  int64_t length = 0;
  int64_t examples = 0;
  double exact_accuracy = 0;  // fraction of examples fully right
  double token_accuracy = 0;  // mean per-example fraction of right answer positions
  double exact_std = 0;       // std over batches of the per-batch exact accuracy (Jelassi reports it)
};

// Scores argmax predictions of `logits` (B, T, V) against an eval batch.
absl::StatusOr<EvalResult> Score(const core::Tensor& logits, const data::EvalBatch& batch);

class Evaluator {
 public:
  // Eval batches are moved to `device` (where the parameters live).
  explicit Evaluator(models::ModelSpec spec, core::Device device = core::Device::kCpu);
  absl::StatusOr<EvalResult> AtLength(const core::ParamTree& params, const data::Task& task, core::Key key,
                                      int64_t length, int64_t batch, int64_t num_batches);

 private:
  models::ModelSpec spec_;
  core::Device device_;
  core::ParamTree structure_;
  core::Jit forward_;
};

}  // namespace mimetic::train

#endif  // MIMETIC_TRAIN_EVALUATE_H_
