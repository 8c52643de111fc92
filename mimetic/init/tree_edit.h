// Small out-of-place edits of tree leaves used by init transforms (Equinox tree_at style): read a
// leaf to the host, change rows, put a new leaf back. Row ranges come from models/proj_layout.h.
//
//   const models::Mamba2InProj in = models::Mamba2InProjOf(dims);
//   ASSIGN_OR_RETURN(tree, EditRows(tree, "layers/0/mixer/in_proj/weight",
//                                   [&](RowEditor& w) { return w.Scale(in.dt, 0.0); }));
#ifndef MIMETIC_INIT_TREE_EDIT_H_
#define MIMETIC_INIT_TREE_EDIT_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/proj_layout.h"

namespace mimetic::init {

using models::RowRange;

// A host copy (in double) of one leaf seen as a (rows, width) matrix, rows along the first
// dimension, edited by row ranges. Every edit checks its ranges and names the leaf when one falls
// outside the matrix.
class RowEditor {
 public:
  RowEditor(std::string path, std::vector<double>* values, int64_t width);

  int64_t rows() const { return width_ == 0 ? 0 : static_cast<int64_t>(values_->size()) / width_; }
  int64_t width() const { return width_; }
  RowRange all() const { return {0, rows()}; }

  // rows *= scale.
  absl::Status Scale(RowRange rows, double scale);
  // rows := value.
  absl::Status Fill(RowRange rows, double value);
  // dst := (dst + src) / 2, row dst.begin + i with row src.begin + i.
  absl::Status AverageInto(RowRange dst, RowRange src);
  // dst := rows [src_begin, src_begin + dst.size) of a (., width) source matrix.
  absl::Status CopyFrom(RowRange dst, const std::vector<double>& src, int64_t src_begin);
  // Column `col` of every row := value.
  absl::Status FillColumn(int64_t col, double value);

 private:
  absl::Status Check(RowRange rows, const char* what) const;
  double* Row(int64_t r) { return values_->data() + r * width_; }

  std::string path_;
  std::vector<double>* values_;
  int64_t width_;
};

// Calls edit(rows) on a host copy of the f32 or f64 leaf at `path` and returns the tree with the
// edited leaf (same shape and dtype; edits in double are exact for f32 leaves).
absl::StatusOr<core::ParamTree> EditRows(const core::ParamTree& tree, const std::string& path,
                                         const std::function<absl::Status(RowEditor&)>& edit);

// The leaf at `path` as a host (rows, width) matrix in double, for reading rows from another tree.
absl::StatusOr<std::vector<double>> HostValues(const core::ParamTree& tree, const std::string& path);

// Checks that the leaf at `path` has `expected` shape; an InvalidArgument naming the path and
// both shapes otherwise.
absl::Status CheckShape(const core::ParamTree& tree, const std::string& path, const core::Shape& expected);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_TREE_EDIT_H_
