// The inverse-sequence matching task of Chen et al. 2025 ("Achilles' heel of Mamba", App. C.2; spec
// §8.2). A generation set G of three distinct numbers; five of its six permutations (the key
// sequences, in random order) each followed by one separator token not in G (5 x 4 = 20 tokens);
// then 3 n_layers filler tokens not in G (the receptive field of n_layers width-4 convolutions, so
// the query cannot be matched through convolutions alone); then the query: one key sequence
// reversed (3 tokens). S = 20 + 3 n_layers + 3 tokens (29 for two layers). The label is the
// 1-based index (1..5) of the key sequence whose reverse is the query; loss on the last token only.
//
//   InverseSequenceConfig config;  // n_layers 2, train split
//   ASSIGN_OR_RETURN(std::unique_ptr<Task> task, MakeInverseSequenceTask(config));
//   ASSIGN_OR_RETURN(Batch batch, task->SampleTrain(key, 1024));  // (1024, 29)
//
// Splits: train and test draw every number from [20, 100]; in train the three elements of G are not
// all in one residue class mod 3, in test they all are; OOD draws every number from [101, 200] with
// no constraint on G. G is uniform over the 3-subsets the split allows (random order); separators
// and fillers are iid uniform over the split's range minus G; the omitted permutation and the
// queried index are uniform.
//
// Encoding (ours; the paper does not give one): numbers are their own token ids, and label k in
// 1..5 is token id k (ids 1..5 never occur as inputs). The model vocabulary is 201 for every split,
// so one model sees train, test and OOD. Row = S tokens + label: the answer position is S - 1 and
// SampleEval's `length` must equal S.
#ifndef MIMETIC_DATA_INVERSE_SEQUENCE_H_
#define MIMETIC_DATA_INVERSE_SEQUENCE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/data/task.h"

namespace mimetic::data {

enum class InverseSplit { kTrain, kTest, kOod };

struct InverseSequenceConfig {
  int64_t n_layers = 2;  // >= 1, the depth of the model; sets the filler length 3 n_layers.
  InverseSplit split = InverseSplit::kTrain;
};

inline constexpr int kInverseSequenceModelVocab = 201;  // Numbers up to 200; labels 1..5.

class InverseSequenceTask : public Task {
 public:
  explicit InverseSequenceTask(const InverseSequenceConfig& config) : config_(config) {}
  const InverseSequenceConfig& config() const { return config_; }

  std::string name() const override { return "inverse_sequence"; }
  int model_vocab() const override { return kInverseSequenceModelVocab; }
  int64_t seq_len() const override { return 23 + 3 * config_.n_layers; }
  absl::Status Validate() const override;
  absl::StatusOr<Batch> SampleTrain(core::Key key, int64_t batch) const override;
  // `length` must equal seq_len().
  absl::StatusOr<EvalBatch> SampleEval(core::Key key, int64_t batch, int64_t length) const override;

 private:
  absl::StatusOr<Batch> Sample(core::Key key, int64_t batch) const;

  InverseSequenceConfig config_;
};

absl::StatusOr<std::unique_ptr<Task>> MakeInverseSequenceTask(const InverseSequenceConfig& config);

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_INVERSE_SEQUENCE_H_
