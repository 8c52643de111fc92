// Multi-query associative recall in the copy-task layout of the mimetic paper's eq. 11 (Zoology's
// multiquery_ar, §10): `$ k1 v1 ... kK vK | q1 a1 ... qK aK .`, with K distinct keys from [0, V/2), K
// distinct values from [V/2, V) (v_i belongs to k_i), the queries a uniformly random permutation of the keys
// and a_j the value of q_j. Every key is stored once and queried once.
//
//   MqarCopyStyleConfig config;  // V 512, K in [4, 32], T 256
//   ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeMqarCopyStyleTask(config));
//   ASSIGN_OR_RETURN(EvalBatch eval, task->SampleEval(key, 32, 64));   // K = 64 pairs per row
//
// Length = K, the number of key-value pairs (an example has 4K + 3 tokens). Tokens: tokens.h with
// V content tokens (BOS, SEP, EOS, PAD after them; model vocabulary V + 4). Mask: 1 on the answers
// and EOS, so the model is trained to predict a_j at q_j's position and EOS after a_K; 0 on the
// prompt and on the queries (unpredictable). Training rows are packed like copy (packing.h), K
// uniform in [min_kv, max_kv]; eval rows hold one example padded with PAD, and the answer positions
// are the K query positions 2K + 2 + 2j (tokens coordinates).
//
// Keys come from [0, V/2): unlike Zoology, 0 is a key here, since this layout has no 0 filler
// (Zoology draws them from [1, V/2)).
#ifndef MIMETIC_DATA_MQAR_COPY_H_
#define MIMETIC_DATA_MQAR_COPY_H_

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

struct MqarCopyStyleConfig {
  int vocab = 512;     // V: keys [0, V/2), values [V/2, V); max_kv <= V/2.
  int64_t min_kv = 4;  // Training K, uniform in [min_kv, max_kv].
  int64_t max_kv = 32;
  int64_t context_len = 256;     // T of training rows, >= 4 max_kv + 3.
  int64_t eval_context_len = 0;  // T of eval rows; 0: max(context_len, 4K + 2).
};

// `$ k1 v1 ... kK vK | q1 a1 ... qK aK .` and its mask, with query_order[j] = i meaning q_j = k_i.
// keys, values and query_order have one size K; query_order is a permutation of 0 .. K-1 (checked).
Example BuildMqarCopyExample(const TokenLayout& layout, absl::Span<const int32_t> keys,
                             absl::Span<const int32_t> values, absl::Span<const int32_t> query_order);

class MqarCopyStyleTask : public Task {
 public:
  explicit MqarCopyStyleTask(const MqarCopyStyleConfig& config) : config_(config) {}
  const MqarCopyStyleConfig& config() const { return config_; }
  TokenLayout layout() const { return TokenLayout{config_.vocab}; }

  std::string name() const override { return "mqar_copy"; }
  int model_vocab() const override { return layout().model_vocab(); }
  int64_t seq_len() const override { return config_.context_len; }
  absl::Status Validate() const override;
  absl::StatusOr<Batch> SampleTrain(core::Key key, int64_t batch) const override;
  // `length` = K, 1 <= K <= V/2.
  absl::StatusOr<EvalBatch> SampleEval(core::Key key, int64_t batch, int64_t length) const override;

 private:
  MqarCopyStyleConfig config_;
};

absl::StatusOr<std::unique_ptr<Task>> MakeMqarCopyStyleTask(const MqarCopyStyleConfig& config);

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_MQAR_COPY_H_
