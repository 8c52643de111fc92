// Multi-query associative recall, exactly Zoology's `multiquery_ar` generator
// (zoology/data/associative_recall.py; Arora, Eyuboglu et al. 2024), with num_passes = 1. With T =
// input_seq_len, K = num_kv_pairs, V = vocab:
//   keys: K distinct from [1, V/2), values: K distinct from [V/2, V) (V/2 rounds down, as V // 2);
//   context `k1 v1 ... kK vK`; space = (T - 2K) / 2; gaps: K distinct g in [0, space), drawn one
//   after another with probability proportional to (g + 1)^(a - 1) among those not yet drawn
//   (numpy's choice(replace=False, p=p)); key i is placed at query offset 2 gap_i, i.e. input
//   position 2K + 2 gap_i, where its value is the label (predict the value as the next token);
//   every other query-region token is 0, or uniform in [0, V) when random_non_queries.
//
//   MqarZoologyConfig config;  // V 8192, T 64, K 8, a = 0.01
//   ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeMqarZoologyTask(config));
//   ASSIGN_OR_RETURN(Batch batch, task->SampleTrain(key, 64));          // (64, 64)
//   ASSIGN_OR_RETURN(EvalBatch eval, task->SampleEval(key, 64, 128));   // T = 128, K = 16
//
// Encoding: no special tokens; the model vocabulary is V. Batch: tokens = the inputs (B, T);
// loss_mask = 1 exactly where Zoology's label is not -100 (the K query-key positions); targets =
// the label there and 0 (a valid id, never trained) elsewhere. Eval answer positions = those K
// positions (Zoology's per-query accuracy; all K right = exact match).
//
// Lengths: training rows always have T = input_seq_len. SampleEval(key, B, length) generates at
// T = length with K = eval_num_kv_pairs, or, when that is 0, K = max(1, floor(length * K_train /
// T_train)) (the kv density of training, as Zoology's figure-2 sweeps scale K with T). Zoology's
// constraints hold at every length: T even, V > T, 4K <= T, K <= V/2 - 1.
#ifndef MIMETIC_DATA_MQAR_H_
#define MIMETIC_DATA_MQAR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/data/task.h"

namespace mimetic::data {

inline constexpr int32_t kMqarIgnoreLabel = -100;

struct MqarZoologyConfig {
  int vocab = 8192;            // V > input_seq_len; keys [1, V/2), values [V/2, V).
  int64_t input_seq_len = 64;  // T, even.
  int64_t num_kv_pairs = 8;    // K >= 1 with 4K <= T and K <= V/2 - 1.
  double power_a = 0.01;       // a > 0; a = 1 makes the gaps uniform.
  bool random_non_queries = true;
  int64_t eval_num_kv_pairs = 0;  // K at eval; 0: max(1, length * num_kv_pairs / input_seq_len).
};

// One example: inputs (T) and labels (T), kMqarIgnoreLabel where unsupervised.
struct MqarExample {
  std::vector<int32_t> inputs;
  std::vector<int32_t> labels;
};

// The deterministic core of the generator (multiquery_ar with random_non_queries = false): key
// i with value i queried at gap i. InvalidArgument unless T is even, the three spans have one size K
// with 4K <= T, keys are distinct in [1, V/2), values in [V/2, V), gaps distinct in [0, (T-2K)/2).
// (V > T is not required here: Zoology asserts it in the generator, yet its docstring example,
// below, has V < T.)
// Spec §5.1's worked example: V 12, T 16, keys {2, 4}, values {8, 7}, gaps {4, 1} gives inputs
// 2 8 4 7 0 0 4 0 0 0 0 0 2 0 0 0 with labels 7 at 6 and 8 at 12.
absl::StatusOr<MqarExample> BuildZoologyMqarExample(int vocab, int64_t input_seq_len,
                                                    absl::Span<const int32_t> keys,
                                                    absl::Span<const int32_t> values,
                                                    absl::Span<const int32_t> gaps);

// Zoology's gap distribution p(g) ∝ a (g + 1)^(a - 1), g = 0 .. space-1, normalised, as sampled here
// (weights quantised to integers with 40 significant bits, so that sampling without replacement is
// exact integer arithmetic). For tests and plots.
std::vector<double> ZoologyGapProbabilities(int64_t space, double power_a);

class MqarZoologyTask : public Task {
 public:
  explicit MqarZoologyTask(const MqarZoologyConfig& config) : config_(config) {}
  const MqarZoologyConfig& config() const { return config_; }
  // K used by SampleEval at `length` (see the header comment).
  int64_t EvalNumKvPairs(int64_t length) const;

  std::string name() const override { return "mqar"; }
  int model_vocab() const override { return config_.vocab; }
  int64_t seq_len() const override { return config_.input_seq_len; }
  absl::Status Validate() const override;
  absl::StatusOr<Batch> SampleTrain(core::Key key, int64_t batch) const override;
  absl::StatusOr<EvalBatch> SampleEval(core::Key key, int64_t batch, int64_t length) const override;

 private:
  MqarZoologyConfig config_;
};

absl::StatusOr<std::unique_ptr<Task>> MakeMqarZoologyTask(const MqarZoologyConfig& config);

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_MQAR_H_
