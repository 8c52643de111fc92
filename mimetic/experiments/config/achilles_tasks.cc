#include "mimetic/experiments/config/achilles_tasks.h"

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/data/composite.h"
#include "mimetic/data/inverse_sequence.h"

namespace mimetic::experiments {
namespace {

// The value `word` names in `table`, or InvalidArgument naming the field and the words it takes.
template <typename T>
absl::StatusOr<T> Word(const std::string& field, const std::string& word,
                       const std::map<std::string, T>& table) {
  auto it = table.find(word);
  if (it != table.end()) return it->second;
  std::vector<std::string> words;
  for (const auto& [w, v] : table) words.push_back("\"" + w + "\"");
  return absl::InvalidArgumentError(
      absl::StrCat("config: ", field, " = \"", word, "\"; expected one of ", absl::StrJoin(words, ", ")));
}

}  // namespace

absl::StatusOr<std::unique_ptr<data::Task>> MakeCompositeTask(const CompositeTask& spec) {
  data::CompositeFunctionConfig c;
  auto variant = Word<data::CompositeVariant>("task.composite.variant", spec.variant(),
                                              {{"standard", data::CompositeVariant::kStandard},
                                               {"fully_symmetric", data::CompositeVariant::kFullySymmetric}});
  if (!variant.ok()) return variant.status();
  auto split = Word<data::CompositeSplit>(
      "task.composite.split", spec.split(),
      {{"train", data::CompositeSplit::kTrain}, {"test", data::CompositeSplit::kTest}});
  if (!split.ok()) return split.status();
  auto label = Word<data::Pair43Label>(
      "task.composite.pair43_label", spec.pair43_label(),
      {{"composite", data::Pair43Label::kComposite}, {"symmetric", data::Pair43Label::kSymmetric}});
  if (!label.ok()) return label.status();
  c.variant = *variant;
  c.split = *split;
  c.pair43_label = *label;
  c.seq_len = spec.seq_len();
  c.key_min = spec.key_min();
  c.key_max = spec.key_max();
  c.only_unseen_pair = spec.only_unseen_pair();
  c.set2_anchor4_shift = spec.set2_anchor4_shift();
  return data::MakeCompositeFunctionTask(c);
}

absl::StatusOr<std::unique_ptr<data::Task>> MakeInverseSequenceTask(const InverseSequenceTask& spec) {
  data::InverseSequenceConfig c;
  auto split = Word<data::InverseSplit>("task.inverse_sequence.split", spec.split(),
                                        {{"train", data::InverseSplit::kTrain},
                                         {"test", data::InverseSplit::kTest},
                                         {"ood", data::InverseSplit::kOod}});
  if (!split.ok()) return split.status();
  c.split = *split;
  c.n_layers = spec.n_layers();
  return data::MakeInverseSequenceTask(c);
}

}  // namespace mimetic::experiments
