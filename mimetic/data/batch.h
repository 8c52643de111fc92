// Batch and EvalBatch: what every task hands to training and evaluation.
//
// Batches are built as in Jelassi et al.'s train_utils.py (Jelassi et al. 2024, "Repeat After Me") from full
// rows of ids and a per-token mask, both (B, T+1): inputs are ids[:, :-1], targets ids[:, 1:] and the loss
// mask mask[:, 1:], so position t of `tokens` is trained to predict `targets[t]` = ids[t+1] when loss_mask[t]
// = 1.
//
//   std::vector<int32_t> ids = ...;   // (B, T+1), row-major
//   std::vector<float> mask = ...;    // (B, T+1), 0/1
//   ASSIGN_OR_RETURN(Batch batch, BatchFromRows(ids, mask, B, T + 1));
//   batch.tokens.shape();             // {B, T}
#ifndef MIMETIC_DATA_BATCH_H_
#define MIMETIC_DATA_BATCH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/tensor.h"

namespace mimetic::data {

struct Batch {
  core::Tensor tokens;     // (B, T) i32, model inputs.
  core::Tensor targets;    // (B, T) i32, the token to predict at each position (a valid id everywhere).
  core::Tensor loss_mask;  // (B, T) f32, 1 where the prediction is trained, 0 elsewhere.
};

struct EvalBatch {
  Batch batch;  // One example per row, at exactly `lengths[b]`, padded to the eval row length.
  // Per row, ascending: the positions t (in `tokens` coordinates) whose argmax prediction must equal
  // targets[t] for the example to count as solved (exact match). For copy: the '|' and the first
  // l-1 pasted tokens, i.e. the l predictions of the pasted string, EOS excluded (as test_utils.py
  // `evaluation` scores them).
  std::vector<std::vector<int64_t>> answer_positions;
  std::vector<int64_t> lengths;  // (B), the task's length of each row's example.
};

// Builds a Batch from full rows: `ids` and `mask` are (batch, row_len) row-major, row_len >= 2.
// InvalidArgument when the sizes disagree.
absl::StatusOr<Batch> BatchFromRows(absl::Span<const int32_t> ids, absl::Span<const float> mask,
                                    int64_t batch, int64_t row_len);

// Builds a Batch directly from (batch, seq_len) inputs, targets and loss mask (for tasks whose
// targets are not the next input, e.g. Zoology MQAR).
absl::StatusOr<Batch> BatchFromParts(absl::Span<const int32_t> tokens, absl::Span<const int32_t> targets,
                                     absl::Span<const float> loss_mask, int64_t batch, int64_t seq_len);

// Supervised positions of one row of a loss mask (seq_len values), ascending.
std::vector<int64_t> MaskedPositions(const float* loss_mask_row, int64_t seq_len);

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_BATCH_H_
