// Zero-copy xtensor views of host Tensors, so that code on host arrays (the ops' reference kernels,
// analysis of attention maps) can index by name and read like its equation:
//
//   XtView<const double, 4> x = XtViewOrDie<const double, 4>(in[0]);  // (B, L, H, P)
//   XtView<double, 4> y = XtViewOrDie<double, 4>(out[0]);             // (B, L, H, P)
//   y(b, t, h, p) = d(h) * x(b, t, h, p);
//
// A view aliases the tensor's buffer (no copy; writes through a mutable view land in the tensor) and
// is valid while the tensor's storage lives. Tensors are dense and row-major, so a view's strides are
// the row-major ones of its shape. Views are for host code that is not on a hot path: xtensor's
// indexing costs a stride product per call.
#ifndef MIMETIC_CORE_XT_VIEW_H_
#define MIMETIC_CORE_XT_VIEW_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/status.h"
#include "mimetic/core/tensor.h"
#include "xtensor/xadapt.hpp"
#include "xtensor/xtensor.hpp"

namespace mimetic::core {

// The DType whose elements are T (const or not): kF64 for double, kF32 for float, kI32 for int32_t.
template <typename T>
constexpr DType DTypeOf() {
  using U = std::remove_const_t<T>;
  static_assert(std::is_same_v<U, double> || std::is_same_v<U, float> || std::is_same_v<U, int32_t>,
                "a Tensor holds double, float or int32_t elements");
  if constexpr (std::is_same_v<U, double>) return DType::kF64;
  if constexpr (std::is_same_v<U, float>) return DType::kF32;
  return DType::kI32;
}

// A rank-N row-major view of T elements (const T for a read-only view).
template <typename T, size_t N>
using XtView = decltype(xt::adapt(std::declval<T*>(), std::declval<std::array<size_t, N>>()));

// A row-major view of T elements whose rank is known only at run time (rank-generic ops: broadcasting).
template <typename T>
using XtDynView = decltype(xt::adapt(std::declval<T*>(), std::declval<std::vector<size_t>>()));

namespace internal {

// OK when `t` is a live host tensor of T elements; otherwise the reason.
template <typename T>
absl::Status CheckViewable(const Tensor& t) {
  if (t.absent()) return absl::InvalidArgumentError("cannot view an absent tensor");
  RETURN_IF_ERROR(t.status());
  if (t.device() != Device::kCpu) {
    return absl::InvalidArgumentError(absl::StrCat("cannot view ", t.meta().DebugString(), ": it is on ",
                                                   DeviceName(t.device()), "; expected a host (cpu) tensor"));
  }
  if (t.dtype() != DTypeOf<T>()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot view ", t.meta().DebugString(), " as ",
                                                   DTypeName(DTypeOf<T>()), " elements: its dtype is ",
                                                   DTypeName(t.dtype())));
  }
  return absl::OkStatus();
}

}  // namespace internal

// The view of `t` with `shape`, which must hold as many elements as t (e.g. a norm's input of any rank
// as (rows, D)); or an error naming what was wrong: an error or absent tensor, a device tensor, a dtype
// other than T's, or a shape of another size.
template <typename T, size_t N>
absl::StatusOr<XtView<T, N>> MakeXtView(const Tensor& t, const std::array<size_t, N>& shape) {
  RETURN_IF_ERROR(internal::CheckViewable<T>(t));
  size_t numel = 1;
  for (size_t d : shape) numel *= d;
  if (numel != static_cast<size_t>(t.numel())) {
    return absl::InvalidArgumentError(absl::StrCat("cannot view ", t.meta().DebugString(), " as shape (",
                                                   absl::StrJoin(shape, ", "), "): ", numel,
                                                   " elements, expected ", t.numel()));
  }
  T* data = const_cast<T*>(t.data<std::remove_const_t<T>>());  // const again when T is const
  return xt::adapt(static_cast<T*>(data), shape);
}

// The view of `t` with its own shape; also an error when t's rank is not N.
template <typename T, size_t N>
absl::StatusOr<XtView<T, N>> MakeXtView(const Tensor& t) {
  RETURN_IF_ERROR(internal::CheckViewable<T>(t));
  if (t.rank() != static_cast<int>(N)) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot view ", t.meta().DebugString(), " as rank ", N, ": it has rank ", t.rank()));
  }
  std::array<size_t, N> shape;
  for (size_t i = 0; i < N; ++i) shape[i] = static_cast<size_t>(t.dim(static_cast<int>(i)));
  return MakeXtView<T, N>(t, shape);
}

// MakeXtView for tensors already validated (an op's inputs after InferMeta, its outputs): a failure
// is a bug in mimetic and aborts with the reason.
template <typename T, size_t N>
XtView<T, N> XtViewOrDie(const Tensor& t) {
  absl::StatusOr<XtView<T, N>> v = MakeXtView<T, N>(t);
  MIMETIC_CHECK(v.ok()) << v.status();
  return *std::move(v);
}
template <typename T, size_t N>
XtView<T, N> XtViewOrDie(const Tensor& t, const std::array<size_t, N>& shape) {
  absl::StatusOr<XtView<T, N>> v = MakeXtView<T, N>(t, shape);
  MIMETIC_CHECK(v.ok()) << v.status();
  return *std::move(v);
}

// The view of a validated tensor with its own shape, whatever its rank (e.g. an elementwise operand
// broadcast to the output's shape); a failure is a bug in mimetic and aborts with the reason.
template <typename T>
XtDynView<T> XtDynViewOrDie(const Tensor& t) {
  const absl::Status ok = internal::CheckViewable<T>(t);
  MIMETIC_CHECK(ok.ok()) << ok;
  T* data = const_cast<T*>(t.data<std::remove_const_t<T>>());  // const again when T is const
  return xt::adapt(static_cast<T*>(data), std::vector<size_t>(t.shape().begin(), t.shape().end()));
}

// XtViewOrDie with a shape of any integer type, written inline, e.g. a norm's input as (rows, D):
//   ReshapedXtViewOrDie<const T>(x, {x.numel() / d, d})
template <typename T, typename I, size_t N>
XtView<T, N> ReshapedXtViewOrDie(const Tensor& t, const I (&shape)[N]) {
  std::array<size_t, N> dims;
  for (size_t k = 0; k < N; ++k) dims[k] = static_cast<size_t>(shape[k]);
  return XtViewOrDie<T, N>(t, dims);
}

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_XT_VIEW_H_
