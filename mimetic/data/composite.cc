#include "mimetic/data/composite.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"
#include "mimetic/data/packing.h"
#include "mimetic/data/random_stream.h"

namespace mimetic::data {
namespace {

constexpr int kMaxKey = 1 << 20;
constexpr int kMaxAnchor = 4;

// Standard variant (ACH App. C.1): anchor -> shift.
constexpr int kStandardShift[5] = {0, +5, +1, -2, -8};  // Index 0 unused.
// Fully symmetric variant: the two shift sets (anchor 4 of set 2 comes from the config).
constexpr int kSet1Shift[5] = {+2, +5, +1, -2, -8};
constexpr int kSet2Shift[4] = {-9, +6, -7, +3};

bool InSet1(int a1, int a2) {
  // Pairs 01 02 14 23 34 and their mirrors.
  const int lo = std::min(a1, a2), hi = std::max(a1, a2);
  return (lo == 0 && hi == 1) || (lo == 0 && hi == 2) || (lo == 1 && hi == 4) || (lo == 2 && hi == 3) ||
         (lo == 3 && hi == 4);
}

int MinAnchor(CompositeVariant variant) { return variant == CompositeVariant::kStandard ? 1 : 0; }

absl::Status ValidateBasics(const CompositeFunctionConfig& config) {
  if (config.seq_len < 3 || config.seq_len > 4096) {
    return absl::InvalidArgumentError(absl::StrCat("CompositeFunctionConfig.seq_len = ", config.seq_len,
                                                   "; expected 3 <= seq_len <= 4096 (key and two anchors)"));
  }
  if (config.key_min <= kMaxAnchor || config.key_min > kMaxKey) {
    return absl::InvalidArgumentError(absl::StrCat("CompositeFunctionConfig.key_min = ", config.key_min,
                                                   "; expected ", kMaxAnchor + 1, " <= key_min <= ", kMaxKey,
                                                   " (keys must differ from the anchor ids 0..4)"));
  }
  if (config.key_max < config.key_min || config.key_max > kMaxKey) {
    return absl::InvalidArgumentError(absl::StrCat("CompositeFunctionConfig.key_max = ", config.key_max,
                                                   "; expected key_min = ", config.key_min,
                                                   " <= key_max <= ", kMaxKey));
  }
  if (config.only_unseen_pair && config.split != CompositeSplit::kTest) {
    return absl::InvalidArgumentError(
        "CompositeFunctionConfig.only_unseen_pair = true; expected split = kTest (pair 43 is never in "
        "training)");
  }
  if (config.pair43_label == Pair43Label::kSymmetric && config.variant != CompositeVariant::kStandard) {
    return absl::InvalidArgumentError(
        "CompositeFunctionConfig.pair43_label = kSymmetric; expected variant = kStandard (in the fully "
        "symmetric "
        "variant 43 and 34 already share their function)");
  }
  if (config.set2_anchor4_shift < -kMaxKey || config.set2_anchor4_shift > kMaxKey) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompositeFunctionConfig.set2_anchor4_shift = ", config.set2_anchor4_shift,
                     "; expected |shift| <= ", kMaxKey));
  }
  return absl::OkStatus();
}

// Whether 0-based key position p is the key's residue position: 1-based position p + 1 <-> residue
// (p + 1) mod seq_len.
bool AtResiduePosition(int key, int64_t p, int64_t seq_len) { return key % seq_len == (p + 1) % seq_len; }

}  // namespace

absl::StatusOr<int> CompositePairShift(const CompositeFunctionConfig& config, int a1, int a2) {
  const int lo = MinAnchor(config.variant);
  if (a1 < lo || a1 > kMaxAnchor || a2 < lo || a2 > kMaxAnchor ||
      (config.variant == CompositeVariant::kFullySymmetric && a1 == a2)) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompositePairShift: pair ", a1, a2, " is not part of the ",
                     config.variant == CompositeVariant::kStandard
                         ? "standard variant (anchors 1..4)"
                         : "fully symmetric variant (two different anchors 0..4)"));
  }
  if (config.variant == CompositeVariant::kStandard) {
    if (a1 == 3 && a2 == 4) return -6;  // Set by hand, not the composition -10.
    if (a1 == 4 && a2 == 3 && config.pair43_label == Pair43Label::kSymmetric) return -6;
    return kStandardShift[a1] + kStandardShift[a2];
  }
  if (InSet1(a1, a2)) return kSet1Shift[a1] + kSet1Shift[a2];
  const auto set2 = [&](int a) { return a == 4 ? config.set2_anchor4_shift : kSet2Shift[a]; };
  return set2(a1) + set2(a2);
}

std::vector<std::pair<int, int>> CompositePairs(const CompositeFunctionConfig& config) {
  if (config.only_unseen_pair) return {{4, 3}};
  std::vector<std::pair<int, int>> pairs;
  for (int a1 = MinAnchor(config.variant); a1 <= kMaxAnchor; ++a1) {
    for (int a2 = MinAnchor(config.variant); a2 <= kMaxAnchor; ++a2) {
      if (config.variant == CompositeVariant::kFullySymmetric && a1 == a2) continue;
      if (config.split == CompositeSplit::kTrain && a1 == 4 && a2 == 3) continue;  // The unseen pair.
      pairs.emplace_back(a1, a2);
    }
  }
  return pairs;
}

CompositeFunctionTask::CompositeFunctionTask(const CompositeFunctionConfig& config) : config_(config) {
  if (!ValidateBasics(config_).ok()) return;  // Validate() reports it; nothing to precompute.
  pairs_ = CompositePairs(config_);
  int max_id = config_.key_max;
  for (const auto& [a1, a2] : pairs_) {
    const int shift = CompositePairShift(config_, a1, a2).value();
    pair_shifts_.push_back(shift);
    max_id = std::max(max_id, config_.key_max + shift);
  }
  model_vocab_ = max_id + 1;
  const bool test = config_.split == CompositeSplit::kTest;
  for (int key = config_.key_min; key <= config_.key_max; ++key) {
    for (int64_t p = 0; p + 2 < config_.seq_len; ++p) {
      if (AtResiduePosition(key, p, config_.seq_len) == test)
        key_positions_.emplace_back(key, static_cast<int>(p));
    }
  }
}

std::string CompositeFunctionTask::name() const {
  return config_.variant == CompositeVariant::kStandard ? "composite" : "composite_symmetric";
}

absl::Status CompositeFunctionTask::Validate() const {
  RETURN_IF_ERROR(ValidateBasics(config_));
  for (size_t i = 0; i < pairs_.size(); ++i) {
    if (config_.key_min + pair_shifts_[i] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("CompositeFunctionConfig.key_min = ", config_.key_min,
                                                     "; expected key_min >= ", -pair_shifts_[i],
                                                     " so that pair ", pairs_[i].first, pairs_[i].second,
                                                     " (shift ", pair_shifts_[i], ") gives labels >= 0"));
    }
  }
  if (key_positions_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("CompositeFunctionConfig: no key in [", config_.key_min, ", ", config_.key_max,
                     "] fits the ", config_.split == CompositeSplit::kTest ? "test" : "train",
                     " split's key positions with seq_len = ", config_.seq_len));
  }
  return absl::OkStatus();
}

absl::StatusOr<Batch> CompositeFunctionTask::Sample(core::Key key, int64_t batch) const {
  const int64_t seq_len = config_.seq_len;
  const int64_t row_len = seq_len + 1;
  std::vector<int32_t> ids(batch * row_len);
  std::vector<float> mask(batch * row_len, 0.0f);
  for (int64_t b = 0; b < batch; ++b) {
    RandomStream rng(core::FoldIn(key, static_cast<uint32_t>(b)));
    int32_t* row = ids.data() + b * row_len;
    const int64_t pair = rng.UniformBelow(static_cast<int64_t>(pairs_.size()));
    const auto [key_id, p] = key_positions_[rng.UniformBelow(static_cast<int64_t>(key_positions_.size()))];
    for (int64_t t = 0; t < seq_len; ++t)
      row[t] = static_cast<int32_t>(rng.UniformInt(config_.key_min, config_.key_max));
    row[p] = key_id;
    row[p + 1] = pairs_[pair].first;
    row[p + 2] = pairs_[pair].second;
    row[seq_len] = key_id + pair_shifts_[pair];
    mask[b * row_len + seq_len] = 1.0f;  // Loss on the last prediction only.
  }
  return BatchFromRows(ids, mask, batch, row_len);
}

absl::StatusOr<Batch> CompositeFunctionTask::SampleTrain(core::Key key, int64_t batch) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("CompositeFunctionTask::SampleTrain", batch));
  return Sample(key, batch);
}

absl::StatusOr<EvalBatch> CompositeFunctionTask::SampleEval(core::Key key, int64_t batch,
                                                            int64_t length) const {
  RETURN_IF_ERROR(Validate());
  RETURN_IF_ERROR(CheckBatchSize("CompositeFunctionTask::SampleEval", batch));
  if (length != config_.seq_len) {
    return absl::InvalidArgumentError(absl::StrCat("CompositeFunctionTask::SampleEval: length = ", length,
                                                   "; expected the fixed seq_len = ", config_.seq_len));
  }
  EvalBatch out;
  ASSIGN_OR_RETURN(out.batch, Sample(key, batch));
  out.answer_positions.assign(batch, {config_.seq_len - 1});
  out.lengths.assign(batch, length);
  return out;
}

absl::StatusOr<std::unique_ptr<Task>> MakeCompositeFunctionTask(const CompositeFunctionConfig& config) {
  auto task = std::make_unique<CompositeFunctionTask>(config);
  RETURN_IF_ERROR(task->Validate());
  return std::unique_ptr<Task>(std::move(task));
}

}  // namespace mimetic::data
