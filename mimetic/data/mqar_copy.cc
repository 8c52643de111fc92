#include "mimetic/data/mqar_copy.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"

namespace mimetic::data {
namespace {

constexpr int64_t kMaxVocab = int64_t{1} << 30;

// Writes the example for key i / value i, queried in the order query_order; returns 4K + 3.
int64_t WriteExample(const TokenLayout& layout, int64_t k, const int32_t* keys, const int32_t* values,
                     const int32_t* query_order, int32_t* ids, float* mask) {
  const int64_t n = 4 * k + 3;
  ids[0] = layout.bos();
  for (int64_t i = 0; i < k; ++i) {
    ids[1 + 2 * i] = keys[i];
    ids[2 + 2 * i] = values[i];
  }
  ids[2 * k + 1] = layout.sep();
  std::fill(mask, mask + n, 0.0f);
  for (int64_t j = 0; j < k; ++j) {
    const int64_t query = 2 * k + 2 + 2 * j;
    ids[query] = keys[query_order[j]];
    ids[query + 1] = values[query_order[j]];
    mask[query + 1] = 1.0f;  // Trained to predict the answer from the query.
  }
  ids[n - 1] = layout.eos();
  mask[n - 1] = 1.0f;
  return n;
}

// Scratch buffers and the per-example sampler shared by training and eval.
class ExampleSampler {
 public:
  ExampleSampler(const TokenLayout& layout, int64_t max_kv)
      : layout_(layout), keys_(max_kv), values_(max_kv), order_(max_kv) {}

  int64_t operator()(RandomStream& rng, int64_t k, int32_t* ids, float* mask) {
    const int64_t half = layout_.vocab / 2;
    distinct_.Sample(rng, half, k, keys_.data());
    distinct_.Sample(rng, layout_.vocab - half, k, values_.data());
    for (int64_t i = 0; i < k; ++i) values_[i] += static_cast<int32_t>(half);
    distinct_.Sample(rng, k, k, order_.data());  // A uniformly random permutation.
    return WriteExample(layout_, k, keys_.data(), values_.data(), order_.data(), ids, mask);
  }

 private:
  TokenLayout layout_;
  DistinctSampler distinct_;
  std::vector<int32_t> keys_, values_, order_;
};

}  // namespace

Example BuildMqarCopyExample(const TokenLayout& layout, absl::Span<const int32_t> keys,
                             absl::Span<const int32_t> values, absl::Span<const int32_t> query_order) {
  const int64_t k = static_cast<int64_t>(keys.size());
  MIMETIC_CHECK(values.size() == keys.size() && query_order.size() == keys.size())
      << "BuildMqarCopyExample: " << keys.size() << " keys, " << values.size() << " values, "
      << query_order.size() << " queries";
  std::vector<bool> seen(k, false);
  for (int32_t i : query_order) {
    MIMETIC_CHECK(0 <= i && i < k && !seen[i]) << "BuildMqarCopyExample: query_order is not a permutation";
    seen[i] = true;
  }
  Example example;
  example.ids.resize(4 * k + 3);
  example.mask.resize(4 * k + 3);
  WriteExample(layout, k, keys.data(), values.data(), query_order.data(), example.ids.data(),
               example.mask.data());
  return example;
}

absl::Status MqarCopyStyleTask::Validate() const {
  const int64_t vocab = config_.vocab;
  if (vocab < 2 || vocab > kMaxVocab) {
    return absl::InvalidArgumentError(
        absl::StrCat("MqarCopyStyleConfig.vocab = ", vocab, "; expected 2 <= vocab <= ", kMaxVocab));
  }
  if (config_.min_kv < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("MqarCopyStyleConfig.min_kv = ", config_.min_kv, "; expected min_kv >= 1"));
  }
  if (config_.max_kv < config_.min_kv) {
    return absl::InvalidArgumentError(absl::StrCat("MqarCopyStyleConfig.max_kv = ", config_.max_kv,
                                                   "; expected max_kv >= min_kv = ", config_.min_kv));
  }
  if (config_.max_kv > vocab / 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("MqarCopyStyleConfig.max_kv = ", config_.max_kv, " with vocab = ", vocab,
                     "; expected max_kv <= vocab / 2 = ", vocab / 2, " (distinct keys from [0, vocab / 2))"));
  }
  if (config_.context_len < 4 * config_.max_kv + 3) {
    return absl::InvalidArgumentError(absl::StrCat("MqarCopyStyleConfig.context_len = ", config_.context_len,
                                                   "; expected context_len >= 4 * max_kv + 3 = ",
                                                   4 * config_.max_kv + 3, " (one whole example per row)"));
  }
  if (config_.eval_context_len < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("MqarCopyStyleConfig.eval_context_len = ", config_.eval_context_len,
                     "; expected >= 0 (0: size eval rows automatically)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Batch> MqarCopyStyleTask::SampleTrain(core::Key key, int64_t batch) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("MqarCopyStyleTask::SampleTrain", batch));
  ExampleSampler sampler(layout(), config_.max_kv);
  PackingSpec spec{config_.min_kv, config_.max_kv, config_.context_len, 4 * config_.max_kv + 3};
  return SamplePackedBatch(key, batch, spec, [&](RandomStream& rng, int64_t k, int32_t* ids, float* mask) {
    return sampler(rng, k, ids, mask);
  });
}

absl::StatusOr<EvalBatch> MqarCopyStyleTask::SampleEval(core::Key key, int64_t batch, int64_t length) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("MqarCopyStyleTask::SampleEval", batch));
  if (length < 1 || length > config_.vocab / 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("MqarCopyStyleTask::SampleEval: length = ", length,
                     " key-value pairs; expected 1 <= length <= vocab / 2 = ", config_.vocab / 2));
  }
  ASSIGN_OR_RETURN(const int64_t seq_len,
                   EvalSeqLen("MqarCopyStyleConfig.eval_context_len", config_.eval_context_len,
                              config_.context_len, 4 * length + 3));
  ExampleSampler sampler(layout(), length);
  return SampleSingleExampleBatch(
      key, batch, length, 4 * length + 3, seq_len, layout().pad(),
      [&](RandomStream& rng, int64_t k, int32_t* ids, float* mask) { return sampler(rng, k, ids, mask); });
}

absl::StatusOr<std::unique_ptr<Task>> MakeMqarCopyStyleTask(const MqarCopyStyleConfig& config) {
  auto task = std::make_unique<MqarCopyStyleTask>(config);
  RETURN_IF_ERROR(task->Validate());
  return std::unique_ptr<Task>(std::move(task));
}

}  // namespace mimetic::data
