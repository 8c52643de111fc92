// Small out-of-place edits of tree leaves used by init transforms (Equinox tree_at style): read a
// leaf to the host, change rows, put a new leaf back.
#ifndef MIMETIC_INIT_TREE_EDIT_H_
#define MIMETIC_INIT_TREE_EDIT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/param_tree.h"

namespace mimetic::init {

// Calls edit(values, row_width) on a host copy (in double) of the f32 or f64 leaf at `path` and returns the tree with
// the edited leaf (same shape). Rows are along the first dimension.
absl::StatusOr<core::ParamTree> EditLeaf(const core::ParamTree& tree, const std::string& path,
                                         const std::function<absl::Status(std::vector<double>&, int64_t)>& edit);

// Checks that the leaf at `path` has `expected` shape; an InvalidArgument naming the path and
// both shapes otherwise.
absl::Status CheckShape(const core::ParamTree& tree, const std::string& path, const core::Shape& expected);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_TREE_EDIT_H_
