#include "mimetic/core/tree_jit.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace mimetic::core {
namespace {

// The inputs' paths and leaf metadata: what decides the trees the function builds and returns.
std::string StructureKey(absl::Span<const ParamTree> trees) {
  std::string key;
  for (const ParamTree& t : trees) {
    absl::StrAppend(&key, "{");
    for (size_t i = 0; i < t.size(); ++i) {
      absl::StrAppend(&key, t.Paths()[i], ":", t.Leaves()[i].meta().DebugString(), ";");
    }
    absl::StrAppend(&key, "}");
  }
  return key;
}

}  // namespace

TreeJit::TreeJit(TreeJitFn fn, std::string name)
    : fn_(std::move(fn)),
      jit_(
          [this](absl::Span<const Tensor> flat) -> std::vector<Tensor> {
            // Rebuild the input trees from the flat list, call the function, flatten its trees.
            std::vector<ParamTree> trees;
            size_t next = 0;
            for (const std::vector<std::string>& paths : input_paths_) {
              std::vector<std::pair<std::string, Tensor>> pairs;
              for (const std::string& p : paths) pairs.emplace_back(p, flat[next++]);
              absl::StatusOr<ParamTree> t = ParamTree::FromPairs(std::move(pairs));
              if (!t.ok()) return {Tensor::Error(t.status())};
              trees.push_back(*std::move(t));
            }
            absl::StatusOr<std::vector<ParamTree>> out = fn_(trees);
            if (!out.ok()) return {Tensor::Error(out.status())};
            traced_output_paths_.clear();
            std::vector<Tensor> leaves;
            for (const ParamTree& t : *out) {
              traced_output_paths_.push_back(t.Paths());
              leaves.insert(leaves.end(), t.Leaves().begin(), t.Leaves().end());
            }
            return leaves;
          },
          std::move(name)) {}

absl::StatusOr<std::vector<ParamTree>> TreeJit::operator()(absl::Span<const ParamTree> inputs) {
  const std::string key = StructureKey(inputs);
  input_paths_.clear();
  std::vector<Tensor> flat;
  for (const ParamTree& t : inputs) {
    input_paths_.push_back(t.Paths());
    flat.insert(flat.end(), t.Leaves().begin(), t.Leaves().end());
  }
  const int traces_before = jit_.num_traces();
  absl::StatusOr<std::vector<Tensor>> out = jit_(flat);
  flat.clear();  // release the inputs' leaves before the caller takes the outputs
  RETURN_IF_ERROR(out.status());
  if (jit_.num_traces() != traces_before) output_paths_[key] = traced_output_paths_;
  auto found = output_paths_.find(key);
  if (found == output_paths_.end()) {
    // Same leaf signature as an earlier trace but other paths: Jit replayed a plan whose output
    // names this structure has never seen.
    return absl::FailedPreconditionError(
        "TreeJit: the input trees' paths differ from those traced for the same leaf shapes and dtypes");
  }
  std::vector<ParamTree> trees;
  size_t next = 0;
  for (const std::vector<std::string>& paths : found->second) {
    std::vector<std::pair<std::string, Tensor>> pairs;
    for (const std::string& p : paths) pairs.emplace_back(p, (*out)[next++]);
    ASSIGN_OR_RETURN(ParamTree t, ParamTree::FromPairs(std::move(pairs)));
    trees.push_back(std::move(t));
  }
  return trees;
}

}  // namespace mimetic::core
