#include "mimetic/ops/shape/shape.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/xt_view.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"
#include "xtensor/xadapt.hpp"
#include "xtensor/xmanipulation.hpp"
#include "xtensor/xview.hpp"

namespace mimetic::ops {
namespace {

using core::Shape;
using core::TensorMeta;
using core::XtView;

const char* Bytes(const Tensor& t) { return static_cast<const char*>(t.storage()->data()); }
char* MutableBytes(const Tensor& t) { return static_cast<char*>(t.storage()->data()); }

// Byte views. The shape ops move elements of any dtype unchanged, so their references view buffers as
// uint8_t (B: uint8_t, or const uint8_t for an input), which core::XtViewOrDie (dtype-checked) does not.

// t's bytes as (outer, n, row) for the ops along one axis: row = the bytes of one (inner) slab.
template <typename B>
XtView<B, 3> RowBytes(const Tensor& t, int64_t outer, int64_t n, int64_t row) {
  const std::array<size_t, 3> shape = {static_cast<size_t>(outer), static_cast<size_t>(n),
                                       static_cast<size_t>(row)};
  return xt::adapt(static_cast<B*>(t.storage()->data()), shape);
}

// t's bytes with t's own shape plus a last axis of one element's bytes, for rank-generic transpose.
template <typename B>
auto ElementBytes(const Tensor& t) {
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  shape.push_back(core::DTypeSize(t.dtype()));
  return xt::adapt(static_cast<B*>(t.storage()->data()), shape);
}

}  // namespace

// ---- reshape ----

std::string ReshapeOp::AttrString() const { return absl::StrCat("shape=", core::ShapeString(shape_)); }

absl::StatusOr<std::vector<TensorMeta>> ReshapeOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  Shape shape = shape_;
  int inferred = -1;
  int64_t known = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1 && inferred < 0) {
      inferred = static_cast<int>(d);
    } else if (shape[d] < 0) {
      return absl::InvalidArgumentError(absl::StrCat("invalid target shape ", core::ShapeString(shape_),
                                                     "; expected sizes >= 0 and at most one -1"));
    } else {
      known *= shape[d];
    }
  }
  const int64_t numel = in[0].numel();
  if (inferred >= 0) {
    if (known == 0 || numel % known != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot reshape ", core::ShapeString(in[0].shape), " (", numel, " elements) to ",
                       core::ShapeString(shape_), "; expected the known sizes to divide the element count"));
    }
    shape[inferred] = numel / known;
  } else if (known != numel) {
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", core::ShapeString(in[0].shape), " (",
                                                   numel, " elements) to ", core::ShapeString(shape_), " (",
                                                   known, " elements); expected the same element count"));
  }
  return std::vector<TensorMeta>{TensorMeta{shape, in[0].dtype, in[0].device}};
}

std::vector<Tensor> ReshapeOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                   absl::Span<const Tensor> out_grads) const {
  return {Reshape(out_grads[0], in[0].shape())};
}

// ---- transpose ----

std::string TransposeOp::AttrString() const {
  return absl::StrCat("perm=[", absl::StrJoin(perm_, ", "), "]");
}

absl::StatusOr<std::vector<TensorMeta>> TransposeOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  const int rank = static_cast<int>(in[0].shape.size());
  std::vector<bool> seen(rank, false);
  bool ok = static_cast<int>(perm_.size()) == rank;
  for (size_t i = 0; ok && i < perm_.size(); ++i) {
    ok = perm_[i] >= 0 && perm_[i] < rank && !seen[perm_[i]];
    if (ok) seen[perm_[i]] = true;
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat("perm [", absl::StrJoin(perm_, ", "),
                                                   "] is not a permutation; expected each of 0..", rank - 1,
                                                   " exactly once"));
  }
  Shape shape(rank);
  for (int i = 0; i < rank; ++i) shape[i] = in[0].shape[perm_[i]];
  return std::vector<TensorMeta>{TensorMeta{shape, in[0].dtype, in[0].device}};
}

// y(i_0, ..., i_{r-1}) = x at index i_d on axis perm[d]. Each element moves as its bytes, on a last
// axis that stays in place.
absl::Status TransposeOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const auto x = ElementBytes<const uint8_t>(in[0]);  // (x's dims..., element bytes)
  auto y = ElementBytes<uint8_t>(out[0]);             // (x's dims permuted..., element bytes)
  std::vector<size_t> perm(perm_.begin(), perm_.end());
  perm.push_back(perm_.size());  // the element's bytes
  y = xt::transpose(x, perm);
  return absl::OkStatus();
}

std::vector<Tensor> TransposeOp::Vjp(absl::Span<const Tensor>, absl::Span<const Tensor>,
                                     absl::Span<const Tensor> out_grads) const {
  std::vector<int> inverse(perm_.size());
  for (size_t i = 0; i < perm_.size(); ++i) inverse[perm_[i]] = static_cast<int>(i);
  return {Transpose(out_grads[0], inverse)};
}

// ---- slice ----

std::string SliceOp::AttrString() const {
  return absl::StrCat("axis=", axis_, " start=", start_, " end=", end_);
}

absl::StatusOr<std::vector<TensorMeta>> SliceOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(axis_, in[0].shape.size()));
  const int64_t dim = in[0].shape[axis];
  if (start_ < 0 || start_ > end_ || end_ > dim) {
    return absl::InvalidArgumentError(absl::StrCat("slice [", start_, ", ", end_, ") of axis ", axis_,
                                                   " (size ", dim,
                                                   ") is out of range; expected 0 <= start <= end <= ", dim));
  }
  Shape shape = in[0].shape;
  shape[axis] = end_ - start_;
  return std::vector<TensorMeta>{TensorMeta{shape, in[0].dtype, in[0].device}};
}

absl::Status SliceOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const int64_t row = inner * core::DTypeSize(in[0].dtype());
  const XtView<const uint8_t, 3> x = RowBytes<const uint8_t>(in[0], outer, n, row);  // (outer, n, row bytes)
  XtView<uint8_t, 3> y =
      RowBytes<uint8_t>(out[0], outer, end_ - start_, row);  // (outer, end - start, row bytes)
  y = xt::view(x, xt::all(), xt::range(start_, end_), xt::all());
  return absl::OkStatus();
}

std::vector<Tensor> SliceOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                 absl::Span<const Tensor> out_grads) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  return {Pad(out_grads[0], axis, start_, in[0].dim(axis) - end_)};
}

// ---- pad ----

std::string PadOp::AttrString() const {
  return absl::StrCat("axis=", axis_, " before=", before_, " after=", after_);
}

absl::StatusOr<std::vector<TensorMeta>> PadOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(axis_, in[0].shape.size()));
  if (before_ < 0 || after_ < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("padding (", before_, ", ", after_, ") is negative; expected before, after >= 0"));
  }
  Shape shape = in[0].shape;
  shape[axis] += before_ + after_;
  return std::vector<TensorMeta>{TensorMeta{shape, in[0].dtype, in[0].device}};
}

absl::Status PadOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const int64_t row = inner * core::DTypeSize(in[0].dtype());
  const XtView<const uint8_t, 3> x = RowBytes<const uint8_t>(in[0], outer, n, row);  // (outer, n, row bytes)
  XtView<uint8_t, 3> y =
      RowBytes<uint8_t>(out[0], outer, before_ + n + after_, row);  // (outer, before + n + after, row bytes)
  y.fill(0);
  xt::view(y, xt::all(), xt::range(before_, before_ + n), xt::all()) = x;
  return absl::OkStatus();
}

std::vector<Tensor> PadOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                               absl::Span<const Tensor> out_grads) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  return {Slice(out_grads[0], axis, before_, before_ + in[0].dim(axis))};
}

// ---- concat ----

std::string ConcatOp::AttrString() const { return absl::StrCat("axis=", axis_); }

absl::StatusOr<std::vector<TensorMeta>> ConcatOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.empty()) return absl::InvalidArgumentError("expected at least one input");
  ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(axis_, in[0].shape.size()));
  Shape shape = in[0].shape;
  for (size_t k = 1; k < in.size(); ++k) {
    if (in[k].dtype != in[0].dtype) {
      return absl::InvalidArgumentError(absl::StrCat("input ", k, " is ", core::DTypeName(in[k].dtype),
                                                     " but input 0 is ", core::DTypeName(in[0].dtype),
                                                     "; expected the same dtype"));
    }
    bool fits = in[k].shape.size() == shape.size();
    for (size_t d = 0; fits && d < shape.size(); ++d)
      fits = static_cast<int>(d) == axis || in[k].shape[d] == shape[d];
    if (!fits) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", k, " has shape ", core::ShapeString(in[k].shape), " but input 0 has ",
                       core::ShapeString(in[0].shape), "; expected equal sizes except along axis ", axis_));
    }
    shape[axis] += in[k].shape[axis];
  }
  return std::vector<TensorMeta>{TensorMeta{shape, in[0].dtype, in[0].device}};
}

absl::Status ConcatOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, out[0].rank()).value();
  int64_t outer, m, inner;
  internal::SplitAroundAxis(out[0].shape(), axis, &outer, &m, &inner);
  const int64_t row = inner * core::DTypeSize(out[0].dtype());
  XtView<uint8_t, 3> y = RowBytes<uint8_t>(out[0], outer, m, row);  // (outer, m, row bytes)
  // Input k fills y's range [start, start + n) along the axis.
  int64_t start = 0;
  for (const Tensor& x : in) {
    const int64_t n = x.dim(axis);
    xt::view(y, xt::all(), xt::range(start, start + n), xt::all()) =
        RowBytes<const uint8_t>(x, outer, n, row);  // (outer, n, row bytes)
    start += n;
  }
  return absl::OkStatus();
}

std::vector<Tensor> ConcatOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                  absl::Span<const Tensor> out_grads) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  std::vector<int64_t> sizes;
  for (const Tensor& x : in) sizes.push_back(x.dim(axis));
  return Split(out_grads[0], axis, sizes);
}

// ---- split ----

std::string SplitOp::AttrString() const {
  return absl::StrCat("axis=", axis_, " sizes=[", absl::StrJoin(sizes_, ", "), "]");
}

absl::StatusOr<std::vector<TensorMeta>> SplitOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(axis_, in[0].shape.size()));
  int64_t total = 0;
  bool ok = !sizes_.empty();
  for (int64_t s : sizes_) {
    ok = ok && s >= 0;
    total += s;
  }
  if (!ok || total != in[0].shape[axis]) {
    return absl::InvalidArgumentError(
        absl::StrCat("sizes [", absl::StrJoin(sizes_, ", "), "] do not split axis ", axis_, " of size ",
                     in[0].shape[axis], "; expected non-negative sizes adding up to it"));
  }
  std::vector<TensorMeta> metas;
  for (int64_t s : sizes_) {
    TensorMeta m = in[0];
    m.shape[axis] = s;
    metas.push_back(m);
  }
  return metas;
}

absl::Status SplitOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const int64_t row = inner * core::DTypeSize(in[0].dtype());
  const XtView<const uint8_t, 3> x = RowBytes<const uint8_t>(in[0], outer, n, row);  // (outer, n, row bytes)
  // Output k takes x's range [start, start + sizes[k]) along the axis.
  int64_t start = 0;
  for (size_t k = 0; k < out.size(); ++k) {
    XtView<uint8_t, 3> y = RowBytes<uint8_t>(out[k], outer, sizes_[k], row);  // (outer, sizes[k], row bytes)
    y = xt::view(x, xt::all(), xt::range(start, start + sizes_[k]), xt::all());
    start += sizes_[k];
  }
  return absl::OkStatus();
}

std::vector<Tensor> SplitOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                 absl::Span<const Tensor> out_grads) const {
  return {Concat(std::vector<Tensor>(out_grads.begin(), out_grads.end()), axis_)};
}

// ---- stop_gradient ----

absl::StatusOr<std::vector<TensorMeta>> StopGradientOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  return std::vector<TensorMeta>{in[0]};
}

absl::Status StopGradientOp::ComputeReference(absl::Span<const Tensor> in,
                                              absl::Span<const Tensor> out) const {
  if (in[0].bytes() > 0) std::memcpy(MutableBytes(out[0]), Bytes(in[0]), in[0].bytes());
  return absl::OkStatus();
}

std::vector<Tensor> StopGradientOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                        absl::Span<const Tensor>) const {
  return {ZerosLike(in[0])};
}

// ---- public functions ----

Tensor Reshape(const Tensor& x, core::Shape shape) {
  return core::Call(std::make_shared<ReshapeOp>(std::move(shape)), {x})[0];
}

Tensor Transpose(const Tensor& x, std::vector<int> perm) {
  return core::Call(std::make_shared<TransposeOp>(std::move(perm)), {x})[0];
}

Tensor Slice(const Tensor& x, int axis, int64_t start, int64_t end) {
  return core::Call(std::make_shared<SliceOp>(axis, start, end), {x})[0];
}

Tensor Concat(const std::vector<Tensor>& xs, int axis) {
  return core::Call(std::make_shared<ConcatOp>(axis), xs)[0];
}

std::vector<Tensor> Split(const Tensor& x, int axis, const std::vector<int64_t>& sizes) {
  return core::Call(std::make_shared<SplitOp>(axis, sizes), {x});
}

Tensor Pad(const Tensor& x, int axis, int64_t before, int64_t after) {
  return core::Call(std::make_shared<PadOp>(axis, before, after), {x})[0];
}

Tensor StopGradient(const Tensor& x) { return core::Call(std::make_shared<StopGradientOp>(), {x})[0]; }

}  // namespace mimetic::ops
