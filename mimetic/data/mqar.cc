#include "mimetic/data/mqar.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/random.h"
#include "mimetic/core/status.h"
#include "mimetic/data/packing.h"
#include "mimetic/data/random_stream.h"

namespace mimetic::data {
namespace {

constexpr int64_t kMaxSeqLen = int64_t{1} << 22;  // Keeps the quantised gap weights' sum below 2^64.

// Zoology's gap weights (g + 1)^(a - 1), scaled so the largest is 2^40 and rounded to integers >= 1.
// The elementary functions are core's machine-independent Log and Exp (random.h), so the weights,
// and hence the samples, are the same on every machine.
std::vector<uint64_t> QuantizedGapWeights(int64_t space, double power_a) {
  std::vector<double> log_w(space);
  for (int64_t g = 0; g < space; ++g)
    log_w[g] = (power_a - 1.0) * core::internal::Log(static_cast<double>(g + 1));
  const double max_log_w = *std::max_element(log_w.begin(), log_w.end());
  std::vector<uint64_t> weights(space);
  for (int64_t g = 0; g < space; ++g) {
    const double scaled = std::ldexp(core::internal::Exp(log_w[g] - max_log_w), 40);
    weights[g] = std::max<uint64_t>(1, static_cast<uint64_t>(std::floor(scaled + 0.5)));
  }
  return weights;
}

// Successive sampling without replacement (each draw proportional to weight among the items not yet
// drawn, the distribution of numpy's choice(replace=False, p)), exact in integer arithmetic: a
// Fenwick tree of the weights, a uniform integer below the remaining total, a descent to the item,
// and the item's weight removed. O(space) to copy the tree per call, O(log space) per draw.
class WeightedSampler {
 public:
  explicit WeightedSampler(std::vector<uint64_t> weights) : weights_(std::move(weights)) {
    const int64_t n = static_cast<int64_t>(weights_.size());
    tree_.assign(n + 1, 0);
    for (int64_t i = 1; i <= n; ++i) {
      tree_[i] += weights_[i - 1];
      const int64_t parent = i + (i & -i);
      if (parent <= n) tree_[parent] += tree_[i];
      total_ += weights_[i - 1];
    }
    top_ = 1;
    while (top_ * 2 <= n) top_ *= 2;
  }

  void Sample(RandomStream& rng, int64_t k, int32_t* out) {
    const int64_t n = static_cast<int64_t>(weights_.size());
    MIMETIC_CHECK(k <= n) << "internal: " << k << " draws from " << n << " gaps";
    scratch_ = tree_;
    uint64_t total = total_;
    for (int64_t d = 0; d < k; ++d) {
      uint64_t r = static_cast<uint64_t>(rng.UniformBelow(static_cast<int64_t>(total)));
      int64_t pos = 0;  // Largest pos with prefix(pos) <= r; item `pos` (0-based) then holds r.
      for (int64_t step = top_; step > 0; step /= 2) {
        if (pos + step <= n && scratch_[pos + step] <= r) {
          pos += step;
          r -= scratch_[pos];
        }
      }
      out[d] = static_cast<int32_t>(pos);
      const uint64_t w = weights_[pos];
      for (int64_t i = pos + 1; i <= n; i += i & -i) scratch_[i] -= w;
      total -= w;
    }
  }

 private:
  std::vector<uint64_t> weights_;
  std::vector<uint64_t> tree_;  // 1-based Fenwick tree of weights_.
  std::vector<uint64_t> scratch_;
  uint64_t total_ = 0;
  int64_t top_ = 1;  // Largest power of two <= n.
};

// Zoology's assertions for one (T, K), plus the key vocabulary being large enough. The generator
// asserts vocab > input_seq_len; the deterministic core skips that check (require_vocab_above_len
// false), since Zoology's own docstring example, the same example, has V 12 < T 16.
absl::Status CheckShape(const char* where, int64_t vocab, int64_t seq_len, int64_t num_kv_pairs,
                        bool require_vocab_above_len = true) {
  if (seq_len < 4 || seq_len % 2 != 0 || seq_len > kMaxSeqLen) {
    return absl::InvalidArgumentError(absl::StrCat(where, "input_seq_len = ", seq_len,
                                                   "; expected an even number in [4, ", kMaxSeqLen, "]"));
  }
  if (require_vocab_above_len && vocab <= seq_len) {
    return absl::InvalidArgumentError(absl::StrCat(where, "vocab = ", vocab,
                                                   " with input_seq_len = ", seq_len,
                                                   "; expected vocab > input_seq_len (Zoology's assertion)"));
  }
  if (num_kv_pairs < 1 || 4 * num_kv_pairs > seq_len) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "num_kv_pairs = ", num_kv_pairs, " with input_seq_len = ", seq_len,
                     "; expected 1 <= num_kv_pairs <= input_seq_len / 4 = ", seq_len / 4));
  }
  if (num_kv_pairs > vocab / 2 - 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, "num_kv_pairs = ", num_kv_pairs, " with vocab = ", vocab,
                     "; expected num_kv_pairs <= vocab / 2 - 1 = ", vocab / 2 - 1,
                     " (distinct keys from [1, vocab / 2))"));
  }
  return absl::OkStatus();
}

// Writes one example (inputs, targets, mask: T each) for key i / value i queried at gap i.
// Unsupervised targets are 0. Returns nothing; positions 2K + 2 gap_i are the supervised ones.
void WriteExample(int64_t seq_len, int64_t k, const int32_t* keys, const int32_t* values, const int32_t* gaps,
                  int32_t* inputs, int32_t* targets, float* mask) {
  std::fill(inputs, inputs + seq_len, 0);
  std::fill(targets, targets + seq_len, 0);
  std::fill(mask, mask + seq_len, 0.0f);
  for (int64_t i = 0; i < k; ++i) {
    inputs[2 * i] = keys[i];
    inputs[2 * i + 1] = values[i];
    // Zoology: queries[2 gap] = key, labels[2K + 2 gap + 1] = value before labels = labels[1:].
    const int64_t query = 2 * k + 2 * static_cast<int64_t>(gaps[i]);
    inputs[query] = keys[i];
    targets[query] = values[i];
    mask[query] = 1.0f;
  }
}

struct Sampled {
  Batch batch;
  std::vector<std::vector<int64_t>> query_positions;
};

absl::StatusOr<Sampled> SampleRows(const MqarZoologyConfig& config, core::Key key, int64_t batch,
                                   int64_t seq_len, int64_t k) {
  const int64_t vocab = config.vocab;
  const int64_t half = vocab / 2;
  WeightedSampler gap_sampler(QuantizedGapWeights((seq_len - 2 * k) / 2, config.power_a));
  DistinctSampler distinct;
  std::vector<int32_t> inputs(batch * seq_len), targets(batch * seq_len);
  std::vector<float> mask(batch * seq_len);
  std::vector<int32_t> keys(k), values(k), gaps(k);
  Sampled out;
  out.query_positions.resize(batch);
  for (int64_t b = 0; b < batch; ++b) {
    RandomStream rng(core::FoldIn(key, static_cast<uint32_t>(b)));
    distinct.Sample(rng, half - 1, k, keys.data());
    for (int32_t& key_id : keys) key_id += 1;
    distinct.Sample(rng, vocab - half, k, values.data());
    for (int32_t& value : values) value += static_cast<int32_t>(half);
    gap_sampler.Sample(rng, k, gaps.data());
    int32_t* row = inputs.data() + b * seq_len;
    WriteExample(seq_len, k, keys.data(), values.data(), gaps.data(), row, targets.data() + b * seq_len,
                 mask.data() + b * seq_len);
    if (config.random_non_queries) {
      for (int64_t t = 0; t < seq_len; ++t) {
        if (row[t] == 0) row[t] = static_cast<int32_t>(rng.UniformBelow(vocab));
      }
    }
    std::vector<int64_t>& positions = out.query_positions[b];
    for (int64_t i = 0; i < k; ++i) positions.push_back(2 * k + 2 * static_cast<int64_t>(gaps[i]));
    std::sort(positions.begin(), positions.end());
  }
  ASSIGN_OR_RETURN(out.batch, BatchFromParts(inputs, targets, mask, batch, seq_len));
  return out;
}

}  // namespace

absl::StatusOr<MqarExample> BuildZoologyMqarExample(int vocab, int64_t input_seq_len,
                                                    absl::Span<const int32_t> keys,
                                                    absl::Span<const int32_t> values,
                                                    absl::Span<const int32_t> gaps) {
  const int64_t k = static_cast<int64_t>(keys.size());
  if (values.size() != keys.size() || gaps.size() != keys.size()) {
    return absl::InvalidArgumentError(absl::StrCat("BuildZoologyMqarExample: ", keys.size(), " keys, ",
                                                   values.size(), " values, ", gaps.size(),
                                                   " gaps; expected equal counts"));
  }
  RETURN_IF_ERROR(
      CheckShape("BuildZoologyMqarExample: ", vocab, input_seq_len, k, /*require_vocab_above_len=*/false));
  const int64_t half = vocab / 2;
  const int64_t space = (input_seq_len - 2 * k) / 2;
  absl::flat_hash_set<int32_t> seen_keys, seen_gaps;
  for (int64_t i = 0; i < k; ++i) {
    if (keys[i] < 1 || keys[i] >= half || !seen_keys.insert(keys[i]).second) {
      return absl::InvalidArgumentError(absl::StrCat("BuildZoologyMqarExample: keys[", i, "] = ", keys[i],
                                                     "; expected distinct keys in [1, ", half, ")"));
    }
    if (values[i] < half || values[i] >= vocab) {
      return absl::InvalidArgumentError(absl::StrCat("BuildZoologyMqarExample: values[", i, "] = ", values[i],
                                                     "; expected values in [", half, ", ", vocab, ")"));
    }
    if (gaps[i] < 0 || gaps[i] >= space || !seen_gaps.insert(gaps[i]).second) {
      return absl::InvalidArgumentError(absl::StrCat("BuildZoologyMqarExample: gaps[", i, "] = ", gaps[i],
                                                     "; expected distinct gaps in [0, ", space, ")"));
    }
  }
  MqarExample example;
  example.inputs.resize(input_seq_len);
  std::vector<int32_t> targets(input_seq_len);
  std::vector<float> mask(input_seq_len);
  WriteExample(input_seq_len, k, keys.data(), values.data(), gaps.data(), example.inputs.data(),
               targets.data(), mask.data());
  example.labels.resize(input_seq_len);
  for (int64_t t = 0; t < input_seq_len; ++t)
    example.labels[t] = mask[t] != 0.0f ? targets[t] : kMqarIgnoreLabel;
  return example;
}

std::vector<double> ZoologyGapProbabilities(int64_t space, double power_a) {
  const std::vector<uint64_t> weights = QuantizedGapWeights(space, power_a);
  double total = 0;
  for (uint64_t w : weights) total += static_cast<double>(w);
  std::vector<double> p(space);
  for (int64_t g = 0; g < space; ++g) p[g] = static_cast<double>(weights[g]) / total;
  return p;
}

int64_t MqarZoologyTask::EvalNumKvPairs(int64_t length) const {
  if (config_.eval_num_kv_pairs > 0) return config_.eval_num_kv_pairs;
  return std::max<int64_t>(1, length * config_.num_kv_pairs / config_.input_seq_len);
}

absl::Status MqarZoologyTask::Validate() const {
  RETURN_IF_ERROR(
      CheckShape("MqarZoologyConfig.", config_.vocab, config_.input_seq_len, config_.num_kv_pairs));
  if (!(config_.power_a > 0.0) || !std::isfinite(config_.power_a)) {
    return absl::InvalidArgumentError(
        absl::StrCat("MqarZoologyConfig.power_a = ", config_.power_a, "; expected a finite power_a > 0"));
  }
  if (config_.eval_num_kv_pairs < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("MqarZoologyConfig.eval_num_kv_pairs = ", config_.eval_num_kv_pairs,
                     "; expected >= 0 (0: scale num_kv_pairs with the length)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Batch> MqarZoologyTask::SampleTrain(core::Key key, int64_t batch) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("MqarZoologyTask::SampleTrain", batch));
  ASSIGN_OR_RETURN(Sampled sampled,
                   SampleRows(config_, key, batch, config_.input_seq_len, config_.num_kv_pairs));
  return std::move(sampled.batch);
}

absl::StatusOr<EvalBatch> MqarZoologyTask::SampleEval(core::Key key, int64_t batch, int64_t length) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("MqarZoologyTask::SampleEval", batch));
  const int64_t k = EvalNumKvPairs(length);
  RETURN_IF_ERROR(CheckShape("MqarZoologyTask::SampleEval at this length: ", config_.vocab, length, k));
  ASSIGN_OR_RETURN(Sampled sampled, SampleRows(config_, key, batch, length, k));
  EvalBatch out;
  out.batch = std::move(sampled.batch);
  out.answer_positions = std::move(sampled.query_positions);
  out.lengths.assign(batch, length);
  return out;
}

absl::StatusOr<std::unique_ptr<Task>> MakeMqarZoologyTask(const MqarZoologyConfig& config) {
  auto task = std::make_unique<MqarZoologyTask>(config);
  RETURN_IF_ERROR(task->Validate());
  return std::unique_ptr<Task>(std::move(task));
}

}  // namespace mimetic::data
