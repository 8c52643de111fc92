// Task: a synthetic recall task as pure functions of a PRNG key (docs/architecture.md, "Keys,
// never global randomness"). The same key always gives the same batch; rows are independent, row b being
// drawn from FoldIn(key, b) alone, so the first rows of a larger batch equal a smaller batch.
//
//   CopyTaskConfig config;  // V = 26, lengths 5..50, rows of 256 tokens
//   ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeCopyTask(config));
//   ASSIGN_OR_RETURN(Batch train, task->SampleTrain(core::FoldIn(data_key, step), 32));
//   ASSIGN_OR_RETURN(EvalBatch eval, task->SampleEval(core::FoldIn(eval_key, 100), 32, 100));
//
// Factories (copy_task.h, mqar.h, mqar_copy.h, composite.h, inverse_sequence.h) validate their
// config and return InvalidArgument naming the field, its value and the expected range.
#ifndef MIMETIC_DATA_TASK_H_
#define MIMETIC_DATA_TASK_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/core/key.h"
#include "mimetic/data/batch.h"

namespace mimetic::data {

class Task {
 public:
  virtual ~Task() = default;

  // Short stable name, e.g. "copy", "stack_copy", "sort", "mqar", "mqar_copy".
  virtual std::string name() const = 0;
  // Number of token ids the model must embed (every id in tokens and targets is below it).
  virtual int model_vocab() const = 0;
  // T of the training rows: SampleTrain returns (batch, seq_len()) tensors.
  virtual int64_t seq_len() const = 0;

  // OK, or InvalidArgument naming the first bad config field and the range it must lie in.
  virtual absl::Status Validate() const = 0;

  // A training batch (batch, seq_len()): copy-like tasks pack several examples per row with their
  // lengths uniform in [min, max] (Jelassi et al.'s train_utils.py); the others draw one example per row.
  // batch >= 1.
  virtual absl::StatusOr<Batch> SampleTrain(core::Key key, int64_t batch) const = 0;

  // `batch` examples at exactly `length` (the task's notion of length: string length for copy and
  // sort, number of key-value pairs for copy-style MQAR, sequence length T for Zoology MQAR, the
  // fixed sequence length for the composite and inverse-sequence tasks), one per row, padded where
  // the task has a PAD token. InvalidArgument when `length` does not fit the task.
  virtual absl::StatusOr<EvalBatch> SampleEval(core::Key key, int64_t batch, int64_t length) const = 0;
};

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_TASK_H_
