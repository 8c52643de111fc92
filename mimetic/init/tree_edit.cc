#include "mimetic/init/tree_edit.h"

#include "absl/strings/str_cat.h"

namespace mimetic::init {

absl::StatusOr<core::ParamTree> EditLeaf(const core::ParamTree& tree, const std::string& path,
                                         const std::function<absl::Status(std::vector<double>&, int64_t)>& edit) {
  ASSIGN_OR_RETURN(core::Tensor leaf, tree.Get(path));
  // Edit in double: exact for f32 leaves and lossless for f64 ones.
  std::vector<double> values;
  if (leaf.dtype() == core::DType::kF64) {
    ASSIGN_OR_RETURN(values, leaf.ToVector<double>());
  } else {
    ASSIGN_OR_RETURN(std::vector<float> f, leaf.ToVector<float>());
    values.assign(f.begin(), f.end());
  }
  const int64_t width = leaf.rank() == 0 || leaf.dim(0) == 0 ? 1 : leaf.numel() / leaf.dim(0);
  RETURN_IF_ERROR(edit(values, width));
  core::Tensor edited;
  if (leaf.dtype() == core::DType::kF64) {
    ASSIGN_OR_RETURN(edited, core::Tensor::FromHost<double>(leaf.shape(), values));
  } else {
    std::vector<float> f(values.begin(), values.end());
    ASSIGN_OR_RETURN(edited, core::Tensor::FromHost<float>(leaf.shape(), f));
  }
  return tree.Replace(path, edited);
}

absl::Status CheckShape(const core::ParamTree& tree, const std::string& path, const core::Shape& expected) {
  ASSIGN_OR_RETURN(core::Tensor leaf, tree.Get(path));
  if (leaf.shape() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' has shape ", core::ShapeString(leaf.shape()),
                                                   "; expected ", core::ShapeString(expected)));
  }
  return absl::OkStatus();
}

}  // namespace mimetic::init
