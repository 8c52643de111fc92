#include "mimetic/init/tree_edit.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace mimetic::init {
namespace {

absl::StatusOr<std::vector<double>> ToDouble(const core::Tensor& leaf) {
  if (leaf.dtype() == core::DType::kF64) return leaf.ToVector<double>();
  ASSIGN_OR_RETURN(std::vector<float> f, leaf.ToVector<float>());
  return std::vector<double>(f.begin(), f.end());
}

}  // namespace

RowEditor::RowEditor(std::string path, std::vector<double>* values, int64_t width)
    : path_(std::move(path)), values_(values), width_(width) {}

absl::Status RowEditor::Check(RowRange r, const char* what) const {
  if (r.begin < 0 || r.size < 0 || r.end() > rows()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " rows [", r.begin, ", ", r.end(), ") of '", path_,
                                                   "', which has ", rows(), " rows"));
  }
  return absl::OkStatus();
}

absl::Status RowEditor::Scale(RowRange r, double scale) {
  RETURN_IF_ERROR(Check(r, "scale"));
  for (int64_t i = r.begin * width_; i < r.end() * width_; ++i) (*values_)[i] *= scale;
  return absl::OkStatus();
}

absl::Status RowEditor::Fill(RowRange r, double value) {
  RETURN_IF_ERROR(Check(r, "fill"));
  std::fill(values_->begin() + r.begin * width_, values_->begin() + r.end() * width_, value);
  return absl::OkStatus();
}

absl::Status RowEditor::AverageInto(RowRange dst, RowRange src) {
  RETURN_IF_ERROR(Check(dst, "average into"));
  RETURN_IF_ERROR(Check(src, "average from"));
  if (dst.size != src.size) {
    return absl::InvalidArgumentError(absl::StrCat("average of '", path_, "': ", dst.size,
                                                   " destination rows but ", src.size, " source rows"));
  }
  for (int64_t r = 0; r < dst.size; ++r) {
    double* d = Row(dst.begin + r);
    const double* s = Row(src.begin + r);
    for (int64_t k = 0; k < width_; ++k) d[k] = 0.5 * (d[k] + s[k]);
  }
  return absl::OkStatus();
}

absl::Status RowEditor::CopyFrom(RowRange dst, const std::vector<double>& src, int64_t src_begin) {
  RETURN_IF_ERROR(Check(dst, "copy into"));
  const int64_t src_rows = static_cast<int64_t>(src.size()) / width_;
  if (src_begin < 0 || src_begin + dst.size > src_rows) {
    return absl::InvalidArgumentError(absl::StrCat("copy into '", path_, "' reads source rows [", src_begin,
                                                   ", ", src_begin + dst.size, ") of ", src_rows));
  }
  std::memcpy(Row(dst.begin), src.data() + src_begin * width_, dst.size * width_ * sizeof(double));
  return absl::OkStatus();
}

absl::Status RowEditor::FillColumn(int64_t col, double value) {
  if (col < 0 || col >= width_) {
    return absl::InvalidArgumentError(
        absl::StrCat("column ", col, " of '", path_, "', whose rows have ", width_, " columns"));
  }
  for (int64_t r = 0; r < rows(); ++r) Row(r)[col] = value;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<double>> HostValues(const core::ParamTree& tree, const std::string& path) {
  ASSIGN_OR_RETURN(core::Tensor leaf, tree.Get(path));
  return ToDouble(leaf);
}

absl::StatusOr<core::ParamTree> EditRows(const core::ParamTree& tree, const std::string& path,
                                         const std::function<absl::Status(RowEditor&)>& edit) {
  ASSIGN_OR_RETURN(core::Tensor leaf, tree.Get(path));
  // Edit in double: exact for f32 leaves and lossless for f64 ones.
  ASSIGN_OR_RETURN(std::vector<double> values, ToDouble(leaf));
  const int64_t width = leaf.rank() == 0 || leaf.dim(0) == 0 ? 1 : leaf.numel() / leaf.dim(0);
  RowEditor editor(path, &values, width);
  RETURN_IF_ERROR(edit(editor));
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
