#include "mimetic/data/inverse_sequence.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"
#include "mimetic/data/packing.h"
#include "mimetic/data/random_stream.h"

namespace mimetic::data {
namespace {

constexpr int64_t kMaxLayers = 1024;
constexpr int kNumKeySequences = 5;

// The six permutations of three positions, in lexicographic order.
constexpr int kPermutations[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};

struct Range {
  int lo, hi;  // Inclusive.
};

Range RangeOf(InverseSplit split) { return split == InverseSplit::kOod ? Range{101, 200} : Range{20, 100}; }

bool SameResidueMod3(const std::array<int32_t, 3>& g) { return g[0] % 3 == g[1] % 3 && g[1] % 3 == g[2] % 3; }

// Uniform over the range minus G (rejection).
int32_t OutsideSet(RandomStream& rng, Range range, const std::array<int32_t, 3>& g) {
  while (true) {
    const auto v = static_cast<int32_t>(rng.UniformInt(range.lo, range.hi));
    if (v != g[0] && v != g[1] && v != g[2]) return v;
  }
}

}  // namespace

absl::Status InverseSequenceTask::Validate() const {
  if (config_.n_layers < 1 || config_.n_layers > kMaxLayers) {
    return absl::InvalidArgumentError(absl::StrCat("InverseSequenceConfig.n_layers = ", config_.n_layers,
                                                   "; expected 1 <= n_layers <= ", kMaxLayers));
  }
  return absl::OkStatus();
}

absl::StatusOr<Batch> InverseSequenceTask::Sample(core::Key key, int64_t batch) const {
  const int64_t seq_len = this->seq_len();
  const int64_t row_len = seq_len + 1;
  const int64_t fillers = 3 * config_.n_layers;
  const Range range = RangeOf(config_.split);
  std::vector<int32_t> ids(batch * row_len);
  std::vector<float> mask(batch * row_len, 0.0f);
  DistinctSampler distinct;
  std::array<int32_t, 3> g;
  std::array<int32_t, 6> perm_order;
  for (int64_t b = 0; b < batch; ++b) {
    RandomStream rng(core::FoldIn(key, static_cast<uint32_t>(b)));
    int32_t* row = ids.data() + b * row_len;
    while (true) {  // G uniform over the split's 3-subsets (rejection; about 1 in 9 pass for test).
      distinct.Sample(rng, range.hi - range.lo + 1, 3, g.data());
      for (int32_t& v : g) v += range.lo;
      if (config_.split == InverseSplit::kOod) break;
      if (SameResidueMod3(g) == (config_.split == InverseSplit::kTest)) break;
    }
    distinct.Sample(rng, 6, kNumKeySequences, perm_order.data());  // 5 of the 6, in random order.
    int64_t t = 0;
    for (int s = 0; s < kNumKeySequences; ++s) {
      for (int i = 0; i < 3; ++i) row[t++] = g[kPermutations[perm_order[s]][i]];
      row[t++] = OutsideSet(rng, range, g);
    }
    for (int64_t f = 0; f < fillers; ++f) row[t++] = OutsideSet(rng, range, g);
    const int query = static_cast<int>(rng.UniformBelow(kNumKeySequences));
    for (int i = 2; i >= 0; --i) row[t++] = g[kPermutations[perm_order[query]][i]];
    row[t++] = query + 1;  // Label k in 1..5 is token id k.
    MIMETIC_CHECK(t == row_len) << "internal: wrote " << t << " of " << row_len;
    mask[b * row_len + seq_len] = 1.0f;  // Loss on the last prediction only.
  }
  return BatchFromRows(ids, mask, batch, row_len);
}

absl::StatusOr<Batch> InverseSequenceTask::SampleTrain(core::Key key, int64_t batch) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("InverseSequenceTask::SampleTrain", batch));
  return Sample(key, batch);
}

absl::StatusOr<EvalBatch> InverseSequenceTask::SampleEval(core::Key key, int64_t batch,
                                                          int64_t length) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("InverseSequenceTask::SampleEval", batch));
  if (length != seq_len()) {
    return absl::InvalidArgumentError(
        absl::StrCat("InverseSequenceTask::SampleEval: length = ", length,
                     "; expected the fixed sequence length 23 + 3 * n_layers = ", seq_len()));
  }
  EvalBatch out;
  ASSIGN_OR_RETURN(out.batch, Sample(key, batch));
  out.answer_positions.assign(batch, {seq_len() - 1});
  out.lengths.assign(batch, length);
  return out;
}

absl::StatusOr<std::unique_ptr<Task>> MakeInverseSequenceTask(const InverseSequenceConfig& config) {
  auto task = std::make_unique<InverseSequenceTask>(config);
  RETURN_IF_ERROR(task->Validate());
  return std::unique_ptr<Task>(std::move(task));
}

}  // namespace mimetic::data
