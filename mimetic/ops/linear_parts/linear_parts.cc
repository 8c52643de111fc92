#include "mimetic/ops/linear_parts/linear_parts.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/status.h"
#include "mimetic/core/xt_view.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;

int64_t Rows(const Tensor& x) { return x.numel() / x.dim(-1); }

Shape WithLast(const Shape& s, int64_t last) {
  Shape out = s;
  out.back() = last;
  return out;
}

// Validates x (..., K) and w (S, K) against `sizes`.
absl::Status CheckOperands(const TensorMeta& x, const TensorMeta& w, const std::vector<int64_t>& sizes) {
  if (x.dtype == DType::kI32 || x.dtype != w.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("dtypes ", core::DTypeName(x.dtype), " and ",
                                                   core::DTypeName(w.dtype),
                                                   "; expected both f32 or both f64"));
  }
  if (x.shape.empty() || w.shape.size() != 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "x ", ShapeString(x.shape), " and w ", ShapeString(w.shape), "; expected x (..., K) and w (S, K)"));
  }
  if (x.shape.back() != w.shape[1]) {
    return absl::InvalidArgumentError(absl::StrCat("x ", ShapeString(x.shape), " has K = ", x.shape.back(),
                                                   " but w ", ShapeString(w.shape), " has ", w.shape[1]));
  }
  if (sizes.empty() || std::any_of(sizes.begin(), sizes.end(), [](int64_t s) { return s <= 0; })) {
    return absl::InvalidArgumentError(
        absl::StrCat("sizes [", absl::StrJoin(sizes, ", "), "]; expected one or more positive sizes"));
  }
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  if (total != w.shape[0]) {
    return absl::InvalidArgumentError(absl::StrCat("sizes [", absl::StrJoin(sizes, ", "), "] sum to ", total,
                                                   " but w ", ShapeString(w.shape), " has ", w.shape[0],
                                                   " rows"));
  }
  return absl::OkStatus();
}

// Reference: double sums over K (forward) and over rows (weight gradient). Part i holds rows
// [o_i, o_i + S_i) of w, o_i = S_0 + ... + S_{i-1}.

// y_i(r, j) = sum_k x(r, k) w(o_i + j, k).
template <typename T>
void ReferenceForward(const std::vector<int64_t>& sizes, absl::Span<const Tensor> in,
                      absl::Span<const Tensor> out) {
  const int64_t rows = Rows(in[0]), K = in[0].dim(-1);
  const XtView<const T, 2> x = core::ReshapedXtViewOrDie<const T>(in[0], {rows, K});  // (rows, K)
  const XtView<const T, 2> w = core::XtViewOrDie<const T, 2>(in[1]);                  // (S, K)
  int64_t o = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    XtView<T, 2> y = core::ReshapedXtViewOrDie<T>(out[i], {rows, sizes[i]});  // (rows, S_i)
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < sizes[i]; ++j) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += double(x(r, k)) * double(w(o + j, k));
        y(r, j) = static_cast<T>(s);
      }
    }
    o += sizes[i];
  }
}

// dx(r, k) = sum_i sum_j g_i(r, j) w(o_i + j, k);  dw(o_i + j, k) = sum_r g_i(r, j) x(r, k).
template <typename T>
void ReferenceBackward(const std::vector<int64_t>& sizes, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const int64_t rows = Rows(in[0]), K = in[0].dim(-1);
  const XtView<const T, 2> x = core::ReshapedXtViewOrDie<const T>(in[0], {rows, K});  // (rows, K)
  const XtView<const T, 2> w = core::XtViewOrDie<const T, 2>(in[1]);                  // (S, K)
  std::vector<XtView<const T, 2>> g;                                                  // (rows, S_i) each
  for (size_t i = 0; i < sizes.size(); ++i)
    g.push_back(core::ReshapedXtViewOrDie<const T>(in[2 + i], {rows, sizes[i]}));
  XtView<T, 2> dx = core::ReshapedXtViewOrDie<T>(out[0], {rows, K});  // (rows, K)
  XtView<T, 2> dw = core::XtViewOrDie<T, 2>(out[1]);                  // (S, K)
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < K; ++k) {
      double s = 0;
      int64_t o = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        for (int64_t j = 0; j < sizes[i]; ++j) s += double(g[i](r, j)) * double(w(o + j, k));
        o += sizes[i];
      }
      dx(r, k) = static_cast<T>(s);
    }
  }
  int64_t o = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    for (int64_t j = 0; j < sizes[i]; ++j) {
      for (int64_t k = 0; k < K; ++k) {
        double s = 0;
        for (int64_t r = 0; r < rows; ++r) s += double(g[i](r, j)) * double(x(r, k));
        dw(o + j, k) = static_cast<T>(s);
      }
    }
    o += sizes[i];
  }
}

}  // namespace

std::string LinearPartsOp::AttrString() const {
  return absl::StrCat("sizes=[", absl::StrJoin(sizes_, ","), "]");
}

absl::StatusOr<std::vector<TensorMeta>> LinearPartsOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 2) return absl::InvalidArgumentError(absl::StrCat("expected 2 inputs, got ", in.size()));
  if (absl::Status s = CheckOperands(in[0], in[1], sizes_); !s.ok()) return s;
  std::vector<TensorMeta> out;
  for (int64_t s : sizes_) out.push_back(TensorMeta{WithLast(in[0].shape, s), in[0].dtype, in[0].device});
  return out;
}

absl::Status LinearPartsOp::ComputeReference(absl::Span<const Tensor> in,
                                             absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceForward<double>(sizes_, in, out);
  } else {
    ReferenceForward<float>(sizes_, in, out);
  }
  return absl::OkStatus();
}

std::vector<Tensor> LinearPartsOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                       absl::Span<const Tensor> out_grads) const {
  return LinearPartsBackward(in[0], in[1], std::vector<Tensor>(out_grads.begin(), out_grads.end()));
}

std::string LinearPartsBackwardOp::AttrString() const {
  return absl::StrCat("sizes=[", absl::StrJoin(sizes_, ","), "]");
}

absl::StatusOr<std::vector<TensorMeta>> LinearPartsBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  if (in.size() != 2 + sizes_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected x, w and ", sizes_.size(), " cotangents, got ", in.size(), " inputs"));
  }
  if (absl::Status s = CheckOperands(in[0], in[1], sizes_); !s.ok()) return s;
  for (size_t i = 0; i < sizes_.size(); ++i) {
    const Shape want = WithLast(in[0].shape, sizes_[i]);
    if (in[2 + i].shape != want || in[2 + i].dtype != in[0].dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "cotangent ", i, " is ", core::DTypeName(in[2 + i].dtype), ShapeString(in[2 + i].shape),
          "; expected ", core::DTypeName(in[0].dtype), ShapeString(want)));
    }
  }
  return std::vector<TensorMeta>{in[0], in[1]};
}

absl::Status LinearPartsBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                     absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceBackward<double>(sizes_, in, out);
  } else {
    ReferenceBackward<float>(sizes_, in, out);
  }
  return absl::OkStatus();
}

std::vector<Tensor> LinearParts(const Tensor& x, const Tensor& w, std::vector<int64_t> sizes) {
  return core::Call(std::make_shared<LinearPartsOp>(std::move(sizes)), {x, w});
}

std::vector<Tensor> LinearPartsBackward(const Tensor& x, const Tensor& w, const std::vector<Tensor>& g) {
  std::vector<int64_t> sizes;
  for (const Tensor& t : g) sizes.push_back(t.ok() && t.rank() > 0 ? t.dim(-1) : 0);
  std::vector<Tensor> in = {x, w};
  in.insert(in.end(), g.begin(), g.end());
  return core::Call(std::make_shared<LinearPartsBackwardOp>(std::move(sizes)), std::move(in));
}

}  // namespace mimetic::ops
