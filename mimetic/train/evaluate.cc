#include "mimetic/train/evaluate.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/models/lm.h"

namespace mimetic::train {

absl::StatusOr<EvalResult> Score(const core::Tensor& logits, const data::EvalBatch& eb) {
  RETURN_IF_ERROR(logits.status());
  const core::Tensor& targets = eb.batch.targets;
  if (logits.rank() != 3 || logits.dim(0) != targets.dim(0) || logits.dim(1) != targets.dim(1)) {
    return absl::InvalidArgumentError(absl::StrCat("Score: logits ", logits.DebugString(), " do not fit targets ",
                                                   targets.DebugString()));
  }
  const int64_t B = logits.dim(0), T = logits.dim(1), V = logits.dim(2);
  ASSIGN_OR_RETURN(std::vector<float> lv, logits.ToVector<float>());
  ASSIGN_OR_RETURN(std::vector<int32_t> tv, targets.ToVector<int32_t>());
  EvalResult r;
  r.examples = B;
  for (int64_t b = 0; b < B; ++b) {
    const std::vector<int64_t>& pos = eb.answer_positions[b];
    int64_t right = 0;
    for (int64_t t : pos) {
      if (t < 0 || t >= T) return absl::InternalError(absl::StrCat("answer position ", t, " outside [0, ", T, ")"));
      const float* row = lv.data() + (b * T + t) * V;
      const int64_t arg = std::max_element(row, row + V) - row;
      right += arg == tv[b * T + t];
    }
    r.exact_accuracy += (right == static_cast<int64_t>(pos.size())) ? 1.0 : 0.0;
    r.token_accuracy += pos.empty() ? 1.0 : static_cast<double>(right) / pos.size();
  }
  r.exact_accuracy /= B;
  r.token_accuracy /= B;
  if (!eb.lengths.empty()) r.length = eb.lengths[0];
  return r;
}

Evaluator::Evaluator(models::ModelSpec spec, core::Device device)
    : spec_(std::move(spec)),
      device_(device),
      forward_(
          [this](absl::Span<const core::Tensor> in) {
            const size_t n = structure_.size();
            core::ParamTree p = structure_.WithLeaves(std::vector<core::Tensor>(in.begin(), in.begin() + n)).value();
            return std::vector<core::Tensor>{models::Apply(p, spec_, in[n])};
          },
          "eval_forward") {}

absl::StatusOr<EvalResult> Evaluator::AtLength(const core::ParamTree& params, const data::Task& task, core::Key key,
                                               int64_t length, int64_t batch, int64_t num_batches) {
  if (structure_.empty()) {
    structure_ = params;
  } else {
    RETURN_IF_ERROR(structure_.CheckSameStructure(params));
  }
  EvalResult total;
  total.length = length;
  std::vector<double> per_batch;
  for (int64_t i = 0; i < num_batches; ++i) {
    ASSIGN_OR_RETURN(data::EvalBatch eb, task.SampleEval(core::FoldIn(key, static_cast<uint32_t>(i)), batch, length));
    std::vector<core::Tensor> in(params.Leaves().begin(), params.Leaves().end());
    ASSIGN_OR_RETURN(core::Tensor tokens, eb.batch.tokens.ToDevice(device_));
    in.push_back(tokens);
    ASSIGN_OR_RETURN(std::vector<core::Tensor> out, forward_(in));
    ASSIGN_OR_RETURN(EvalResult r, Score(out[0], eb));
    per_batch.push_back(r.exact_accuracy);
    total.examples += r.examples;
    total.exact_accuracy += r.exact_accuracy * r.examples;
    total.token_accuracy += r.token_accuracy * r.examples;
  }
  if (total.examples > 0) {
    total.exact_accuracy /= total.examples;
    total.token_accuracy /= total.examples;
  }
  double mean = 0, var = 0;
  for (double a : per_batch) mean += a / per_batch.size();
  for (double a : per_batch) var += (a - mean) * (a - mean) / per_batch.size();
  total.exact_std = std::sqrt(var);
  return total;
}

}  // namespace mimetic::train
