// The composite-function (anchor) task of Zhang et al. 2024 and Chen et al. 2025 ("Achilles' heel of
// Mamba", App. C.1). A row is seq_len tokens holding one key followed by two anchors,
// `... key a1 a2 ...`, every other token uniform in the key range; the model predicts the label at
// the last position (loss on the last token only): label = key + shift(a1, a2).
//
//   CompositeFunctionConfig config;            // standard, seq_len 8, keys [20, 100], train split
//   ASSIGN_OR_RETURN(std::unique_ptr<Task> train, MakeCompositeFunctionTask(config));
//   config.split = CompositeSplit::kTest;
//   config.only_unseen_pair = true;            // only pair 43
//   config.pair43_label = Pair43Label::kSymmetric;
//   ASSIGN_OR_RETURN(std::unique_ptr<Task> test43, MakeCompositeFunctionTask(config));
//
// Standard: anchors 1, 2, 3, 4 shift by +5, +1, -2, -8; pair (a1, a2) shifts by their sum, except
// pair 34, set to -6 (its composition would be -10). Training uses the 15 pairs other than 43; the
// test split uses all 16, with pair 43 labelled key - 10 (kComposite, the composition) or key - 6
// (kSymmetric, as 34).
// Fully symmetric: anchors 0..4, pairs of two different anchors (20); pairs 01 02 10 20 14 41 23 32
// 34 43 sum shift set 1 (0:+2 1:+5 2:+1 3:-2 4:-8), pairs 03 30 04 40 12 21 13 31 24 42 sum set 2
// (0:-9 1:+6 2:-7 3:+3 4:set2_anchor4_shift). The paper gives no set-2 shift for anchor 4 although
// 04 40 24 42 use it; the default -5 is [INFERRED] (it gives pair shifts -14 and -12, equal to no
// other pair's). Training leaves out 43 only; the test split uses all 20.
//
// Split by key position (1-based position j <-> residue j mod seq_len): the key sits at 0-based
// position p in [0, seq_len - 3] (anchors at p + 1, p + 2). Training: key mod seq_len != (p + 1) mod
// seq_len; test: key mod seq_len == (p + 1) mod seq_len (e.g. key 33 = 1 mod 8 never at the first
// position in training, only there in test). (key, p) is uniform over the combinations the split
// allows; the pair is uniform over the split's pairs.
//
// Encoding: token id = the number itself: anchors 0..4, keys and fillers [key_min, key_max], labels
// key + shift, unwrapped (as in the original composition.py). Model vocabulary = the largest label
// or key + 1: 111 for the standard task with keys [20, 100] (labels cover [4, 110]; the smallest
// labels coincide with anchor ids, as in the original). `length` in SampleEval is seq_len; the
// answer position is seq_len - 1. Row = seq_len tokens + label, so targets elsewhere are the next
// input token, untrained.
#ifndef MIMETIC_DATA_COMPOSITE_H_
#define MIMETIC_DATA_COMPOSITE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/data/task.h"

namespace mimetic::data {

enum class CompositeVariant { kStandard, kFullySymmetric };
enum class CompositeSplit { kTrain, kTest };
enum class Pair43Label {
  kComposite,  // key + shift(4) + shift(3) = key - 10.
  kSymmetric,  // Standard variant only: as pair 34, key - 6.
};

struct CompositeFunctionConfig {
  CompositeVariant variant = CompositeVariant::kStandard;
  CompositeSplit split = CompositeSplit::kTrain;
  int64_t seq_len = 8;  // >= 3.
  int key_min = 20;     // Keys and fillers: [key_min, key_max]; key_min > 4.
  int key_max = 100;
  bool only_unseen_pair = false;                       // Test split only: every row uses pair 43.
  Pair43Label pair43_label = Pair43Label::kComposite;  // Label of pair 43 in the standard variant.
  int set2_anchor4_shift = -5;                         // Fully symmetric variant; [INFERRED], see above.
};

// The label shift of anchor pair (a1, a2) under `config` (variant, pair43_label,
// set2_anchor4_shift), or InvalidArgument when the pair is not part of the variant.
absl::StatusOr<int> CompositePairShift(const CompositeFunctionConfig& config, int a1, int a2);

// The anchor pairs a split draws from, in a fixed order.
std::vector<std::pair<int, int>> CompositePairs(const CompositeFunctionConfig& config);

class CompositeFunctionTask : public Task {
 public:
  explicit CompositeFunctionTask(const CompositeFunctionConfig& config);
  const CompositeFunctionConfig& config() const { return config_; }

  std::string name() const override;
  int model_vocab() const override { return model_vocab_; }
  int64_t seq_len() const override { return config_.seq_len; }
  absl::Status Validate() const override;
  absl::StatusOr<Batch> SampleTrain(core::Key key, int64_t batch) const override;
  // `length` must equal seq_len.
  absl::StatusOr<EvalBatch> SampleEval(core::Key key, int64_t batch, int64_t length) const override;

 private:
  absl::StatusOr<Batch> Sample(core::Key key, int64_t batch) const;

  CompositeFunctionConfig config_;
  std::vector<std::pair<int, int>> pairs_;
  std::vector<int> pair_shifts_;
  std::vector<std::pair<int, int>> key_positions_;  // The (key, position) combinations of the split.
  int model_vocab_ = 0;
};

absl::StatusOr<std::unique_ptr<Task>> MakeCompositeFunctionTask(const CompositeFunctionConfig& config);

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_COMPOSITE_H_
