// ParamTree: an ordered, immutable map from a path ("layers/3/mixer/A_log") to a Tensor.
// Parameters, gradients and optimizer moments share one structure; checkpoints use the paths as
// tensor names. Every operation returns a new tree (copies share tensor storage).
//
//   ASSIGN_OR_RETURN(ParamTree tree, ParamTree::FromPairs({{"embedding/weight", emb}}));
//   ASSIGN_OR_RETURN(tree, tree.With("layers/0/mixer/D", ones));      // add or replace
//   ASSIGN_OR_RETURN(Tensor a, tree.Get("layers/0/mixer/A_log"));
//   ParamTree mixers = tree.Select("layers/*/mixer/**");              // glob: * within a segment,
//                                                                      // ** across segments
//   ASSIGN_OR_RETURN(Tensor flat, tree.Flatten());                     // one contiguous f32 buffer
#ifndef MIMETIC_CORE_PARAM_TREE_H_
#define MIMETIC_CORE_PARAM_TREE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {

class ParamTree {
 public:
  ParamTree();

  // Paths must be non-empty, '/'-separated, without empty segments, and unique.
  static absl::StatusOr<ParamTree> FromPairs(std::vector<std::pair<std::string, Tensor>> pairs);

  // Replaces the tensor at `path`, or appends it when the path is new.
  absl::StatusOr<ParamTree> With(absl::string_view path, Tensor value) const;
  // Replaces the tensor at an existing `path`; the new value must have the same shape and dtype.
  absl::StatusOr<ParamTree> Replace(absl::string_view path, Tensor value) const;
  // NotFound naming the path (and the nearest existing paths) when absent.
  absl::StatusOr<Tensor> Get(absl::string_view path) const;
  bool Contains(absl::string_view path) const;

  size_t size() const { return data_->paths.size(); }
  bool empty() const { return size() == 0; }
  const std::vector<std::string>& Paths() const { return data_->paths; }
  const std::vector<Tensor>& Leaves() const { return data_->leaves; }

  // f applied to every leaf, same paths and order.
  ParamTree Map(const std::function<Tensor(const Tensor&)>& f) const;
  ParamTree MapWithPath(const std::function<Tensor(const std::string&, const Tensor&)>& f) const;
  // The leaves whose path matches `glob`, in order. `*` matches within one segment, `**` matches
  // any number of segments, `?` one character.
  ParamTree Select(absl::string_view glob) const;
  static bool GlobMatch(absl::string_view glob, absl::string_view path);

  // Same paths in the same order with the same shapes and dtypes.
  bool SameStructure(const ParamTree& other) const;
  // OK, or InvalidArgument naming the first path or shape that differs.
  absl::Status CheckSameStructure(const ParamTree& other) const;
  // This tree's paths with new leaves (same count, shapes and dtypes).
  absl::StatusOr<ParamTree> WithLeaves(std::vector<Tensor> leaves) const;
  // Pairs up leaves of two trees with the same structure.
  absl::StatusOr<ParamTree> ZipWith(const ParamTree& other,
                                    const std::function<Tensor(const Tensor&, const Tensor&)>& f) const;

  // All leaves (which must be CPU f32) concatenated in path order into one 1-D f32 tensor.
  absl::StatusOr<Tensor> Flatten() const;
  // Splits a 1-D f32 tensor of NumElements() values back into this tree's structure.
  absl::StatusOr<ParamTree> Unflatten(const Tensor& flat) const;
  int64_t NumElements() const;

  std::string DebugString() const;  // one "path: f32(2, 3)@cpu" line per leaf

 private:
  struct Data {
    std::vector<std::string> paths;
    std::vector<Tensor> leaves;
    absl::flat_hash_map<std::string, size_t> index;
  };
  explicit ParamTree(std::shared_ptr<const Data> data) : data_(std::move(data)) {}
  static absl::Status ValidatePath(absl::string_view path);
  absl::Status NotFound(absl::string_view path) const;

  std::shared_ptr<const Data> data_;
};

// A leaf that holds NaN or infinite values (FindNonFinite).
struct NonFiniteLeaf {
  std::string path;
  int64_t count = 0;  // how many of its values are NaN or infinite
  int64_t numel = 0;
};
// The first leaf of `tree`, in path order, that holds a NaN or an infinity; nullopt when every value is
// finite. Integer leaves are skipped; device leaves are copied to the host.
absl::StatusOr<std::optional<NonFiniteLeaf>> FindNonFinite(const ParamTree& tree);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_PARAM_TREE_H_
