#include "mimetic/data/copy_task.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"

namespace mimetic::data {
namespace {

enum class Answer { kForward, kReverse, kSorted };

constexpr int64_t kMaxVocab = int64_t{1} << 30;
constexpr int64_t kMaxEvalLength = int64_t{1} << 24;  // Keeps eval rows (2 l + 3 ids) allocatable.

Answer AnswerOf(CopyOrder order) {
  return order == CopyOrder::kForward ? Answer::kForward : Answer::kReverse;
}

// Completes an example whose string s already sits in ids[1, 1 + len): writes `$`, `|`, the answer
// and `.`, and the Jelassi mask (0 on the first len + 2 tokens, 1 on the remaining len + 1).
// Returns the example's size, 2 len + 3.
int64_t FinishExample(const TokenLayout& layout, Answer answer, int64_t len, int32_t* ids, float* mask) {
  ids[0] = layout.bos();
  ids[len + 1] = layout.sep();
  int32_t* const pasted = ids + len + 2;
  std::copy(ids + 1, ids + 1 + len, pasted);
  if (answer == Answer::kReverse) std::reverse(pasted, pasted + len);
  if (answer == Answer::kSorted) std::sort(pasted, pasted + len);
  ids[2 * len + 2] = layout.eos();
  std::fill(mask, mask + len + 2, 0.0f);
  std::fill(mask + len + 2, mask + 2 * len + 3, 1.0f);
  return 2 * len + 3;
}

Example BuildExample(const TokenLayout& layout, absl::Span<const int32_t> s, Answer answer) {
  const int64_t len = static_cast<int64_t>(s.size());
  for (int32_t c : s) {
    MIMETIC_CHECK(0 <= c && c < layout.vocab)
        << "content token " << c << " outside [0, " << layout.vocab << ")";
  }
  Example example;
  example.ids.resize(2 * len + 3);
  example.mask.resize(2 * len + 3);
  std::copy(s.begin(), s.end(), example.ids.begin() + 1);
  FinishExample(layout, answer, len, example.ids.data(), example.mask.data());
  return example;
}

// Checks shared by the copy-like configs; `config` names the struct in messages.
absl::Status ValidateCopyLike(const char* config, int64_t vocab, int64_t min_len, int64_t max_len,
                              int64_t context_len, int64_t eval_context_len) {
  if (vocab < 1 || vocab > kMaxVocab) {
    return absl::InvalidArgumentError(
        absl::StrCat(config, ".vocab = ", vocab, "; expected 1 <= vocab <= ", kMaxVocab));
  }
  if (min_len < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(config, ".min_len = ", min_len, "; expected min_len >= 1"));
  }
  if (max_len < min_len) {
    return absl::InvalidArgumentError(
        absl::StrCat(config, ".max_len = ", max_len, "; expected max_len >= min_len = ", min_len));
  }
  if (context_len < 2 * max_len + 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(config, ".context_len = ", context_len, "; expected context_len >= 2 * max_len + 3 = ",
                     2 * max_len + 3, " (one whole example of max_len per row)"));
  }
  if (eval_context_len < 0) {
    return absl::InvalidArgumentError(absl::StrCat(config, ".eval_context_len = ", eval_context_len,
                                                   "; expected >= 0 (0: size eval rows automatically)"));
  }
  return absl::OkStatus();
}

absl::Status CheckEvalLength(const char* where, int64_t length, int64_t max_allowed) {
  if (length < 1 || length > max_allowed) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": length = ", length, "; expected 1 <= length <= ", max_allowed));
  }
  return absl::OkStatus();
}

}  // namespace

Example BuildCopyExample(const TokenLayout& layout, absl::Span<const int32_t> s, CopyOrder order) {
  return BuildExample(layout, s, AnswerOf(order));
}

Example BuildSortExample(const TokenLayout& layout, absl::Span<const int32_t> s) {
  return BuildExample(layout, s, Answer::kSorted);
}

// ---- CopyTask ------------------------------------------------------------------------------------

absl::Status CopyTask::Validate() const {
  return ValidateCopyLike("CopyTaskConfig", config_.vocab, config_.min_len, config_.max_len,
                          config_.context_len, config_.eval_context_len);
}

absl::StatusOr<Batch> CopyTask::SampleTrain(core::Key key, int64_t batch) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("CopyTask::SampleTrain", batch));
  const TokenLayout tokens = layout();
  const Answer answer = AnswerOf(config_.order);
  PackingSpec spec{config_.min_len, config_.max_len, config_.context_len, 2 * config_.max_len + 3};
  return SamplePackedBatch(key, batch, spec, [&](RandomStream& rng, int64_t len, int32_t* ids, float* mask) {
    for (int64_t i = 1; i <= len; ++i) ids[i] = static_cast<int32_t>(rng.UniformBelow(tokens.vocab));
    return FinishExample(tokens, answer, len, ids, mask);
  });
}

absl::StatusOr<EvalBatch> CopyTask::SampleEval(core::Key key, int64_t batch, int64_t length) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("CopyTask::SampleEval", batch));
  RETURN_IF_ERROR(CheckEvalLength("CopyTask::SampleEval", length, kMaxEvalLength));
  ASSIGN_OR_RETURN(const int64_t seq_len,
                   EvalSeqLen("CopyTaskConfig.eval_context_len", config_.eval_context_len,
                              config_.context_len, 2 * length + 3));
  const TokenLayout tokens = layout();
  const Answer answer = AnswerOf(config_.order);
  return SampleSingleExampleBatch(key, batch, length, 2 * length + 3, seq_len, tokens.pad(),
                                  [&](RandomStream& rng, int64_t len, int32_t* ids, float* mask) {
                                    for (int64_t i = 1; i <= len; ++i) {
                                      ids[i] = static_cast<int32_t>(rng.UniformBelow(tokens.vocab));
                                    }
                                    return FinishExample(tokens, answer, len, ids, mask);
                                  });
}

// ---- SortTask ------------------------------------------------------------------------------------

absl::Status SortTask::Validate() const {
  RETURN_IF_ERROR(ValidateCopyLike("SortTaskConfig", config_.vocab, config_.min_len, config_.max_len,
                                   config_.context_len, config_.eval_context_len));
  if (config_.vocab < config_.max_len) {
    return absl::InvalidArgumentError(absl::StrCat("SortTaskConfig.vocab = ", config_.vocab,
                                                   "; expected vocab >= max_len = ", config_.max_len,
                                                   " (strings are drawn without replacement)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Batch> SortTask::SampleTrain(core::Key key, int64_t batch) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("SortTask::SampleTrain", batch));
  const TokenLayout tokens = layout();
  DistinctSampler distinct;
  PackingSpec spec{config_.min_len, config_.max_len, config_.context_len, 2 * config_.max_len + 3};
  return SamplePackedBatch(key, batch, spec, [&](RandomStream& rng, int64_t len, int32_t* ids, float* mask) {
    distinct.Sample(rng, tokens.vocab, len, ids + 1);
    return FinishExample(tokens, Answer::kSorted, len, ids, mask);
  });
}

absl::StatusOr<EvalBatch> SortTask::SampleEval(core::Key key, int64_t batch, int64_t length) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("SortTask::SampleEval", batch));
  RETURN_IF_ERROR(CheckEvalLength("SortTask::SampleEval (distinct tokens: length <= vocab)", length,
                                  std::min<int64_t>(config_.vocab, kMaxEvalLength)));
  ASSIGN_OR_RETURN(const int64_t seq_len,
                   EvalSeqLen("SortTaskConfig.eval_context_len", config_.eval_context_len,
                              config_.context_len, 2 * length + 3));
  const TokenLayout tokens = layout();
  DistinctSampler distinct;
  return SampleSingleExampleBatch(key, batch, length, 2 * length + 3, seq_len, tokens.pad(),
                                  [&](RandomStream& rng, int64_t len, int32_t* ids, float* mask) {
                                    distinct.Sample(rng, tokens.vocab, len, ids + 1);
                                    return FinishExample(tokens, Answer::kSorted, len, ids, mask);
                                  });
}

absl::StatusOr<std::unique_ptr<Task>> MakeCopyTask(const CopyTaskConfig& config) {
  auto task = std::make_unique<CopyTask>(config);
  RETURN_IF_ERROR(task->Validate());
  return std::unique_ptr<Task>(std::move(task));
}

absl::StatusOr<std::unique_ptr<Task>> MakeSortTask(const SortTaskConfig& config) {
  auto task = std::make_unique<SortTask>(config);
  RETURN_IF_ERROR(task->Validate());
  return std::unique_ptr<Task>(std::move(task));
}

}  // namespace mimetic::data
