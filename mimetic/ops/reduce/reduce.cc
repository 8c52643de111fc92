#include "mimetic/ops/reduce/reduce.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/xt_view.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/shape/shape.h"
#include "xtensor/xadapt.hpp"
#include "xtensor/xarray.hpp"
#include "xtensor/xbroadcast.hpp"
#include "xtensor/xbuilder.hpp"
#include "xtensor/xnoalias.hpp"
#include "xtensor/xstrided_view.hpp"
#include "xtensor/xtensor.hpp"
#include "xtensor/xview.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::TensorMeta;
using core::XtView;

Shape ReducedShape(const Shape& shape, int axis, bool keepdims) {
  Shape out = shape;
  if (keepdims) {
    out[axis] = 1;
  } else {
    out.erase(out.begin() + axis);
  }
  return out;
}

// y[o, i] = scale * sum_k x[o, k, i] for x viewed as (outer, n, inner). Long lines are cut into
// at most 64 blocks whose count depends only on n; the blocks' partial sums are added in order,
// so the bits never depend on the number of threads.
template <typename T>
void SumLines(const T* x, T* y, int64_t outer, int64_t n, int64_t inner, T scale) {
  constexpr int64_t kBlock = 1024, kInnerChunk = 4096;
  const int64_t nb = std::max<int64_t>(1, std::min<int64_t>(64, (n + kBlock - 1) / kBlock));
  const int64_t bs = (n + nb - 1) / nb;
  const int64_t ic = std::max<int64_t>(1, (inner + kInnerChunk - 1) / kInnerChunk);
  std::vector<T> partial(nb > 1 ? outer * nb * inner : 0);
  T* dst = nb > 1 ? partial.data() : y;
  const int64_t tasks = outer * nb * ic;
  const bool parallel = outer * n * inner > internal::kParallelThreshold && tasks > 1;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t ob = t / ic;  // = o * nb + b
    const int64_t o = ob / nb, b = ob % nb;
    const int64_t k0 = std::min(n, b * bs), k1 = std::min(n, k0 + bs);
    const int64_t i0 = (t % ic) * kInnerChunk, i1 = std::min(inner, i0 + kInnerChunk);
    const T* xs = x + (o * n + k0) * inner;
    T* d = dst + ob * inner;
    if (inner == 1) {
      // Eight independent accumulators: vectorised, and a fixed association order.
      T acc[8] = {};
      const int64_t len = k1 - k0;
      int64_t k = 0;
      for (; k + 8 <= len; k += 8) {
        for (int j = 0; j < 8; ++j) acc[j] += xs[k + j];
      }
      T s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
      for (; k < len; ++k) s += xs[k];
      d[0] = s;
    } else {
      std::fill(d + i0, d + i1, T(0));
      for (int64_t k = k0; k < k1; ++k) {
        const T* row = xs + (k - k0) * inner;
        for (int64_t i = i0; i < i1; ++i) d[i] += row[i];
      }
    }
  }
  if (nb > 1) {
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t o = 0; o < outer; ++o) {
      T* yo = y + o * inner;
      const T* p = partial.data() + o * nb * inner;
      std::copy(p, p + inner, yo);
      for (int64_t b = 1; b < nb; ++b) {
        for (int64_t i = 0; i < inner; ++i) yo[i] += p[b * inner + i];
      }
    }
  }
  if (scale != T(1)) {
    for (int64_t i = 0; i < outer * inner; ++i) y[i] *= scale;
  }
}

// y(o, i) = scale * sum_k x(o, k, i), summed in k order in double.
template <typename T>
void SumLinesReference(const Tensor& x_t, const Tensor& y_t, int64_t outer, int64_t n, int64_t inner,
                       double scale) {
  const XtView<const T, 3> x =
      core::ReshapedXtViewOrDie<const T>(x_t, {outer, n, inner});      // (outer, n, inner)
  XtView<T, 2> y = core::ReshapedXtViewOrDie<T>(y_t, {outer, inner});  // (outer, inner)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t k = 0; k < n; ++k) s += x(o, k, i);
      y(o, i) = static_cast<T>(s * scale);
    }
  }
}

bool BroadcastsTo(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<int> internal::NormalizeAxis(int axis, int rank) {
  if (axis < -rank || axis >= rank) {
    return absl::InvalidArgumentError(absl::StrCat("axis ", axis, " is out of range for rank ", rank,
                                                   "; expected ", -rank, " <= axis < ", rank));
  }
  return axis < 0 ? axis + rank : axis;
}

void internal::SplitAroundAxis(const Shape& shape, int axis, int64_t* outer, int64_t* n, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int d = 0; d < axis; ++d) *outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) *inner *= shape[d];
  *n = shape[axis];
}

// ---- sum / mean ----

std::string SumOp::AttrString() const { return absl::StrCat("axis=", axis_, " keepdims=", keepdims_); }

absl::StatusOr<std::vector<TensorMeta>> SumOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  RETURN_IF_ERROR(internal::ExpectFloat(in[0].dtype));
  ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(axis_, in[0].shape.size()));
  return std::vector<TensorMeta>{
      TensorMeta{ReducedShape(in[0].shape, axis, keepdims_), in[0].dtype, in[0].device}};
}

absl::Status SumOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const double scale = mean_ ? 1.0 / static_cast<double>(n) : 1.0;
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    SumLinesReference<T>(in[0], out[0], outer, n, inner, scale);
  });
  return absl::OkStatus();
}

absl::Status SumOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  const double scale = mean_ ? 1.0 / static_cast<double>(n) : 1.0;
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    SumLines<T>(in[0].data<T>(), out[0].mutable_data<T>(), outer, n, inner, static_cast<T>(scale));
  });
  return absl::OkStatus();
}

std::vector<Tensor> SumOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                               absl::Span<const Tensor> out_grads) const {
  const Tensor& x = in[0];
  const int axis = internal::NormalizeAxis(axis_, x.rank()).value();
  Tensor g = BroadcastTo(Reshape(out_grads[0], ReducedShape(x.shape(), axis, true)), x.shape());
  if (mean_) g = MulScalar(g, 1.0 / static_cast<double>(x.dim(axis)));
  return {g};
}

// ---- sum_to ----

std::string SumToOp::AttrString() const { return absl::StrCat("shape=", core::ShapeString(shape_)); }

absl::StatusOr<std::vector<TensorMeta>> SumToOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  RETURN_IF_ERROR(internal::ExpectFloat(in[0].dtype));
  if (!BroadcastsTo(shape_, in[0].shape)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot sum ", core::ShapeString(in[0].shape), " to ", core::ShapeString(shape_),
                     "; expected a shape that broadcasts to ", core::ShapeString(in[0].shape)));
  }
  return std::vector<TensorMeta>{TensorMeta{shape_, in[0].dtype, in[0].device}};
}

absl::Status SumToOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto x = core::XtDynViewOrDie<const T>(in[0]);  // x's shape
    auto y = core::XtDynViewOrDie<T>(out[0]);             // shape_, which broadcasts to x's shape
    // y[j] = sum of x[i] over the elements i of x that y[j] broadcasts to, accumulated in double in
    // x's row-major order. target holds y's element numbers broadcast to x's shape: target[i] = j.
    const xt::xarray<size_t> target =
        xt::broadcast(xt::reshape_view(xt::arange<size_t>(y.size()), y.shape()), x.shape());
    xt::xarray<double> acc = xt::zeros<double>(y.shape());  // shape_
    auto j = target.cbegin();
    for (const T& xi : x) acc.flat(*j++) += xi;
    std::transform(acc.cbegin(), acc.cend(), y.begin(), [](double v) { return static_cast<T>(v); });
  });
  return absl::OkStatus();
}

absl::Status SumToOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const Shape& xs = in[0].shape();
  // Collapse x's dims into alternating kept / summed groups, then sum the groups away from the
  // innermost one outwards through (outer, n, inner) reductions.
  const internal::LoopPlan plan = internal::MakeLoopPlan(
      xs, {internal::BroadcastStrides(shape_, xs), internal::BroadcastStrides(xs, xs)});
  std::vector<int64_t> dims = plan.dims;
  std::vector<bool> summed;
  for (int64_t s : plan.strides[0]) summed.push_back(s == 0);
  if (in[0].numel() == 0 || out[0].numel() == 0) {
    internal::DispatchDType(in[0].dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::fill(out[0].mutable_data<T>(), out[0].mutable_data<T>() + out[0].numel(), T(0));
    });
    return absl::OkStatus();
  }
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = in[0].data<T>();
    T* y = out[0].mutable_data<T>();
    std::vector<T> bufs[2];
    int which = 0;
    int remaining = 0;
    for (bool s : summed) remaining += s ? 1 : 0;
    if (remaining == 0) {
      std::memcpy(y, src, out[0].bytes());
      return;
    }
    for (int j = static_cast<int>(dims.size()) - 1; j >= 0; --j) {
      if (!summed[j]) continue;
      int64_t outer = 1, inner = 1;
      for (int d = 0; d < j; ++d) outer *= dims[d];
      for (size_t d = j + 1; d < dims.size(); ++d) inner *= dims[d];
      T* dst = y;
      if (--remaining > 0) {
        bufs[which].resize(outer * inner);
        dst = bufs[which].data();
      }
      SumLines<T>(src, dst, outer, dims[j], inner, T(1));
      src = dst;
      which ^= 1;
      dims[j] = 1;
    }
  });
  return absl::OkStatus();
}

std::vector<Tensor> SumToOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                 absl::Span<const Tensor> out_grads) const {
  return {BroadcastTo(out_grads[0], in[0].shape())};
}

// ---- broadcast_to ----

std::string BroadcastToOp::AttrString() const { return absl::StrCat("shape=", core::ShapeString(shape_)); }

absl::StatusOr<std::vector<TensorMeta>> BroadcastToOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  for (int64_t d : shape_) {
    if (d < 0)
      return absl::InvalidArgumentError(absl::StrCat("negative dimension in ", core::ShapeString(shape_)));
  }
  if (!BroadcastsTo(in[0].shape, shape_)) {
    return absl::InvalidArgumentError(absl::StrCat("cannot broadcast ", core::ShapeString(in[0].shape),
                                                   " to ", core::ShapeString(shape_),
                                                   "; expected equal or size-1 dimensions (right-aligned)"));
  }
  return std::vector<TensorMeta>{TensorMeta{shape_, in[0].dtype, in[0].device}};
}

absl::Status BroadcastToOp::ComputeReference(absl::Span<const Tensor> in,
                                             absl::Span<const Tensor> out) const {
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    const auto x = core::XtDynViewOrDie<const T>(in[0]);  // x's shape
    auto y = core::XtDynViewOrDie<T>(out[0]);             // shape_
    xt::noalias(y) = xt::broadcast(x, y.shape());
  });
  return absl::OkStatus();
}

absl::Status BroadcastToOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  internal::BroadcastCopy(in[0], out[0]);
  return absl::OkStatus();
}

std::vector<Tensor> BroadcastToOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                       absl::Span<const Tensor> out_grads) const {
  return {SumTo(out_grads[0], in[0].shape())};
}

// ---- max / argmax ----

std::string MaxOp::AttrString() const { return absl::StrCat("axis=", axis_, " keepdims=", keepdims_); }

absl::StatusOr<std::vector<TensorMeta>> MaxOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  RETURN_IF_ERROR(internal::ExpectFloat(in[0].dtype));
  ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(axis_, in[0].shape.size()));
  if (in[0].shape[axis] == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis_, " is empty; expected at least one element"));
  }
  return std::vector<TensorMeta>{
      TensorMeta{ReducedShape(in[0].shape, axis, keepdims_), arg_ ? DType::kI32 : in[0].dtype, in[0].device}};
}

namespace {
// best(o, i) = max_k x(o, k, i) and idx(o, i) the first k that attains it, visiting x row by row.
template <typename T>
void ArgMaxLines(const XtView<const T, 3>& x, xt::xtensor<T, 2>& best, xt::xtensor<int32_t, 2>& idx) {
  const int64_t outer = x.shape(0), n = x.shape(1), inner = x.shape(2);
  best = xt::view(x, xt::all(), 0, xt::all());  // (outer, inner)
  idx = xt::zeros<int32_t>({outer, inner});     // (outer, inner)
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 1; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        if (x(o, k, i) > best(o, i)) {
          best(o, i) = x(o, k, i);
          idx(o, i) = static_cast<int32_t>(k);
        }
      }
    }
  }
}
}  // namespace

absl::Status MaxOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    xt::xtensor<T, 2> best;       // (outer, inner)
    xt::xtensor<int32_t, 2> idx;  // (outer, inner)
    ArgMaxLines<T>(core::ReshapedXtViewOrDie<const T>(in[0], {outer, n, inner}), best, idx);
    if (arg_) {
      XtView<int32_t, 2> y = core::ReshapedXtViewOrDie<int32_t>(out[0], {outer, inner});  // (outer, inner)
      y = idx;
    } else {
      XtView<T, 2> y = core::ReshapedXtViewOrDie<T>(out[0], {outer, inner});  // (outer, inner)
      y = best;
    }
  });
  return absl::OkStatus();
}

std::vector<Tensor> MaxOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                               absl::Span<const Tensor> out_grads) const {
  if (arg_) return {ZerosLike(in[0])};  // piecewise constant
  return {core::Call(std::make_shared<MaxBackwardOp>(axis_), {in[0], out_grads[0]})[0]};
}

std::string MaxBackwardOp::AttrString() const { return absl::StrCat("axis=", axis_); }

absl::StatusOr<std::vector<TensorMeta>> MaxBackwardOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 2) return absl::InvalidArgumentError("expected 2 inputs (x, g)");
  RETURN_IF_ERROR(internal::ExpectFloat(in[0].dtype));
  ASSIGN_OR_RETURN(int axis, internal::NormalizeAxis(axis_, in[0].shape.size()));
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape, axis, &outer, &n, &inner);
  if (in[1].dtype != in[0].dtype || in[1].numel() != outer * inner || n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected g of x's dtype with ", outer * inner, " elements and a non-empty axis"));
  }
  return std::vector<TensorMeta>{in[0]};
}

absl::Status MaxBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                             absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, in[0].rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(in[0].shape(), axis, &outer, &n, &inner);
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    const XtView<const T, 3> x =
        core::ReshapedXtViewOrDie<const T>(in[0], {outer, n, inner});  // (outer, n, inner)
    const XtView<const T, 2> g = core::ReshapedXtViewOrDie<const T>(in[1], {outer, inner});  // (outer, inner)
    XtView<T, 3> y = core::ReshapedXtViewOrDie<T>(out[0], {outer, n, inner});  // (outer, n, inner)
    xt::xtensor<T, 2> best;                                                    // (outer, inner)
    xt::xtensor<int32_t, 2> idx;                                               // (outer, inner)
    ArgMaxLines<T>(x, best, idx);
    y.fill(T(0));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < inner; ++i) y(o, idx(o, i), i) = g(o, i);  // g to the first maximum
    }
  });
  return absl::OkStatus();
}

std::vector<Tensor> MaxBackwardOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                       absl::Span<const Tensor> out_grads) const {
  // Linear in g with a one-hot mask: the cotangent of g gathers h at the argmax.
  Tensor mask = core::Call(std::make_shared<MaxBackwardOp>(axis_), {in[0], OnesLike(in[1])})[0];
  Tensor gathered = Sum(Mul(out_grads[0], mask), axis_, /*keepdims=*/false);
  return {ZerosLike(in[0]), Reshape(gathered, in[1].shape())};
}

// ---- public functions ----

Tensor Sum(const Tensor& x, int axis, bool keepdims) {
  return core::Call(std::make_shared<SumOp>(axis, keepdims, false), {x})[0];
}

Tensor Mean(const Tensor& x, int axis, bool keepdims) {
  return core::Call(std::make_shared<SumOp>(axis, keepdims, true), {x})[0];
}

Tensor SumAll(const Tensor& x) { return Sum(Reshape(x, {-1}), 0); }
Tensor MeanAll(const Tensor& x) { return Mean(Reshape(x, {-1}), 0); }

Tensor SumTo(const Tensor& x, const core::Shape& shape) {
  if (x.ok() && x.shape() == shape) return x;
  return core::Call(std::make_shared<SumToOp>(shape), {x})[0];
}

Tensor BroadcastTo(const Tensor& x, const core::Shape& shape) {
  if (x.ok() && x.shape() == shape) return x;
  return core::Call(std::make_shared<BroadcastToOp>(shape), {x})[0];
}

Tensor Max(const Tensor& x, int axis, bool keepdims) {
  return core::Call(std::make_shared<MaxOp>(axis, keepdims, false), {x})[0];
}

Tensor ArgMax(const Tensor& x, int axis) {
  return core::Call(std::make_shared<MaxOp>(axis, false, true), {x})[0];
}

}  // namespace mimetic::ops
