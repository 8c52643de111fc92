// Copying (Jelassi et al. 2024, "Repeat After Me"), stack-order copying and sorting (mimetic paper §2, §4;
// Fig. 4): one example is `$ s | answer .` with answer = s, reverse(s) or sort(s) (ascending ids).
// Copy letters are iid uniform over the V content tokens (with replacement); sorting draws s as
// l distinct tokens (without replacement, so l <= V; the paper uses V = 512). Token ids: tokens.h.
//
//   CopyTaskConfig config;                      // V 26, lengths [5, 50], T = 256
//   config.order = CopyOrder::kReverse;         // stack-order copy
//   ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeCopyTask(config));
//   ASSIGN_OR_RETURN(Batch batch, task->SampleTrain(key, 32));           // (32, 256), packed
//   ASSIGN_OR_RETURN(EvalBatch eval, task->SampleEval(key, 32, 100));    // (32, 256), padded
//
// Mask: 0 on `$ s |`, 1 on the answer and EOS (Jelassi et al.'s train_utils.py); training rows are packed and
// eval rows hold a single example padded with PAD (packing.h). Eval answer positions: the '|' and the first
// l-1 answer tokens (l predictions; EOS excluded).
//
// context_len is T, the number of model inputs per row (a row holds T+1 ids; Jelassi's rows hold
// context_len ids, so his 220 is our 219). Training requires T >= 2 max_len + 3, so that a row
// always starts with one whole example. Eval rows have T = eval_context_len when set (it must be
// >= 2 l + 2, room for the example up to its EOS target), else max(context_len, 2 l + 2).
#ifndef MIMETIC_DATA_COPY_TASK_H_
#define MIMETIC_DATA_COPY_TASK_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/data/packing.h"
#include "mimetic/data/task.h"
#include "mimetic/data/tokens.h"

namespace mimetic::data {

enum class CopyOrder {
  kForward,  // `$ s | s .`: copying.
  kReverse,  // `$ s | reverse(s) .`: stack-order copying.
};

struct CopyTaskConfig {
  int vocab = 26;       // V: content tokens 0 .. V-1, >= 1.
  int64_t min_len = 5;  // Training string lengths, uniform in [min_len, max_len].
  int64_t max_len = 50;
  int64_t context_len = 256;  // T of training rows, >= 2 max_len + 3.
  CopyOrder order = CopyOrder::kForward;
  int64_t eval_context_len = 0;  // T of eval rows; 0: max(context_len, 2 length + 2).
};

struct SortTaskConfig {
  int vocab = 512;  // V >= max_len (strings have distinct tokens).
  int64_t min_len = 5;
  int64_t max_len = 50;
  int64_t context_len = 256;     // >= 2 max_len + 3.
  int64_t eval_context_len = 0;  // As in CopyTaskConfig; eval lengths must also be <= V.
};

// The example `$ s | answer .` with answer = s (kForward) or reverse(s) (kReverse), and its mask.
// Every s[i] must lie in [0, V) (checked). For V = 26, s = {0, 1, 2}: ids
// [26, 0, 1, 2, 27, 0, 1, 2, 28], mask [0, 0, 0, 0, 0, 1, 1, 1, 1] (the loss mask of Jelassi et al.'s
// train_utils.py).
Example BuildCopyExample(const TokenLayout& layout, absl::Span<const int32_t> s, CopyOrder order);
// The example `$ s | sort(s) .` (ascending ids) and its mask.
Example BuildSortExample(const TokenLayout& layout, absl::Span<const int32_t> s);

class CopyTask : public Task {
 public:
  explicit CopyTask(const CopyTaskConfig& config) : config_(config) {}
  const CopyTaskConfig& config() const { return config_; }
  TokenLayout layout() const { return TokenLayout{config_.vocab}; }

  std::string name() const override { return config_.order == CopyOrder::kForward ? "copy" : "stack_copy"; }
  int model_vocab() const override { return layout().model_vocab(); }
  int64_t seq_len() const override { return config_.context_len; }
  absl::Status Validate() const override;
  absl::StatusOr<Batch> SampleTrain(core::Key key, int64_t batch) const override;
  absl::StatusOr<EvalBatch> SampleEval(core::Key key, int64_t batch, int64_t length) const override;

 private:
  CopyTaskConfig config_;
};

class SortTask : public Task {
 public:
  explicit SortTask(const SortTaskConfig& config) : config_(config) {}
  const SortTaskConfig& config() const { return config_; }
  TokenLayout layout() const { return TokenLayout{config_.vocab}; }

  std::string name() const override { return "sort"; }
  int model_vocab() const override { return layout().model_vocab(); }
  int64_t seq_len() const override { return config_.context_len; }
  absl::Status Validate() const override;
  absl::StatusOr<Batch> SampleTrain(core::Key key, int64_t batch) const override;
  absl::StatusOr<EvalBatch> SampleEval(core::Key key, int64_t batch, int64_t length) const override;

 private:
  SortTaskConfig config_;
};

// Validate, then construct. InvalidArgument names the bad field.
absl::StatusOr<std::unique_ptr<Task>> MakeCopyTask(const CopyTaskConfig& config);
absl::StatusOr<std::unique_ptr<Task>> MakeSortTask(const SortTaskConfig& config);

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_COPY_TASK_H_
