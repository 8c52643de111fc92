#include "mimetic/ops/embedding/embedding.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "mimetic/core/xt_view.h"
#include "xtensor/xview.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;
using core::XtViewOrDie;

// Below this many copied elements a parallel region costs more than it saves.
constexpr int64_t kParallelElements = 1 << 15;
// Columns per task of the parallel scatter-add: one 64-byte cache line of f32.
constexpr int64_t kColumnChunk = 16;

// OK when every id lies in [0, num_rows); otherwise names the first one that does not.
absl::Status CheckIds(const Tensor& ids, int64_t num_rows) {
  const int32_t* id = ids.data<int32_t>();
  const int64_t n = ids.numel();
  for (int64_t p = 0; p < n; ++p) {
    if (id[p] < 0 || id[p] >= num_rows) {
      return absl::InvalidArgumentError(
          absl::StrCat("id ", id[p], " at flat position ", p,
                       " is out of range; expected ids in [0, V) with V=", num_rows));
    }
  }
  return absl::OkStatus();
}

template <typename T>
void Gather(const Tensor& table, const Tensor& ids, const Tensor& out, bool parallel) {
  const int64_t d = table.dim(1);
  const int64_t n = ids.numel();
  const T* src = table.data<T>();
  const int32_t* id = ids.data<int32_t>();
  T* dst = out.mutable_data<T>();
#pragma omp parallel for schedule(static) if (parallel && n * d >= kParallelElements)
  for (int64_t p = 0; p < n; ++p) {
    std::memcpy(dst + p * d, src + static_cast<int64_t>(id[p]) * d, d * sizeof(T));
  }
}

// out[ids[p], c0:c1] += grad[p, c0:c1] for every position p in order: the same summation order
// for every column range, hence the same bits however the columns are split among threads.
template <typename T>
void ScatterAddColumns(const T* grad, const int32_t* id, int64_t n, int64_t d, int64_t c0, int64_t c1,
                       T* out) {
  for (int64_t p = 0; p < n; ++p) {
    const T* g = grad + p * d;
    T* o = out + static_cast<int64_t>(id[p]) * d;
    for (int64_t c = c0; c < c1; ++c) o[c] += g[c];
  }
}

template <typename T>
void ScatterAdd(const Tensor& grad, const Tensor& ids, const Tensor& out, bool parallel) {
  const int64_t d = out.dim(1);
  const int64_t n = ids.numel();
  T* dst = out.mutable_data<T>();
  std::fill(dst, dst + out.numel(), T(0));
  const T* g = grad.data<T>();
  const int32_t* id = ids.data<int32_t>();
  if (!parallel || n * d < kParallelElements) {
    ScatterAddColumns<T>(g, id, n, d, 0, d, dst);
    return;
  }
  const int64_t chunks = (d + kColumnChunk - 1) / kColumnChunk;
#pragma omp parallel for schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    ScatterAddColumns<T>(g, id, n, d, c * kColumnChunk, std::min(d, (c + 1) * kColumnChunk), dst);
  }
}

// ---- Reference: one position at a time, on named views. ----

// out[p, :] = table[ids[p], :] for every position p of ids (...), taken in row-major order.
template <typename T>
void ReferenceGather(absl::Span<const Tensor> in, const Tensor& out) {
  const int64_t n = in[1].numel(), d = in[0].dim(1);
  const XtView<const T, 2> table = XtViewOrDie<const T, 2>(in[0]);                            // (V, D)
  const XtView<const int32_t, 1> ids = core::ReshapedXtViewOrDie<const int32_t>(in[1], {n});  // (N)
  XtView<T, 2> y = core::ReshapedXtViewOrDie<T>(out, {n, d});                                 // (N, D)
  for (int64_t p = 0; p < n; ++p) xt::row(y, p) = xt::row(table, ids(p));
}

// dtable[v, :] = sum of grad[p, :] over the positions p with ids[p] = v, added in order of p.
template <typename T>
void ReferenceScatterAdd(absl::Span<const Tensor> in, const Tensor& out) {
  const int64_t n = in[1].numel(), d = out.dim(1);
  const XtView<const T, 2> grad = core::ReshapedXtViewOrDie<const T>(in[0], {n, d});          // (N, D)
  const XtView<const int32_t, 1> ids = core::ReshapedXtViewOrDie<const int32_t>(in[1], {n});  // (N)
  XtView<T, 2> dtable = XtViewOrDie<T, 2>(out);                                               // (V, D)
  dtable.fill(T(0));
  for (int64_t p = 0; p < n; ++p) xt::row(dtable, ids(p)) += xt::row(grad, p);
}

}  // namespace

absl::StatusOr<std::vector<TensorMeta>> EmbeddingOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 2) return absl::InvalidArgumentError(absl::StrCat("expected 2 inputs, got ", in.size()));
  const TensorMeta& table = in[0];
  const TensorMeta& ids = in[1];
  if (table.shape.size() != 2 || table.dtype == DType::kI32) {
    return absl::InvalidArgumentError(
        absl::StrCat("table is ", table.DebugString(), "; expected a (V, D) f32 or f64 table"));
  }
  if (ids.dtype != DType::kI32) {
    return absl::InvalidArgumentError(
        absl::StrCat("ids are ", core::DTypeName(ids.dtype), "; expected i32 ids"));
  }
  Shape out = ids.shape;
  out.push_back(table.shape[1]);
  return std::vector<TensorMeta>{TensorMeta{out, table.dtype, table.device}};
}

absl::Status EmbeddingOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  RETURN_IF_ERROR(CheckIds(in[1], in[0].dim(0)));
  if (in[0].dtype() == DType::kF64) {
    ReferenceGather<double>(in, out[0]);
  } else {
    ReferenceGather<float>(in, out[0]);
  }
  return absl::OkStatus();
}

absl::Status EmbeddingOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  RETURN_IF_ERROR(CheckIds(in[1], in[0].dim(0)));
  if (in[0].dtype() == DType::kF64) {
    Gather<double>(in[0], in[1], out[0], /*parallel=*/true);
  } else {
    Gather<float>(in[0], in[1], out[0], /*parallel=*/true);
  }
  return absl::OkStatus();
}

std::vector<Tensor> EmbeddingOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                     absl::Span<const Tensor> out_grads) const {
  return {EmbeddingBackward(out_grads[0], in[1], in[0].dim(0)), Tensor()};
}

std::string EmbeddingBackwardOp::AttrString() const { return absl::StrCat("num_rows=", num_rows_); }

absl::StatusOr<std::vector<TensorMeta>> EmbeddingBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  if (in.size() != 2) return absl::InvalidArgumentError(absl::StrCat("expected 2 inputs, got ", in.size()));
  const TensorMeta& grad = in[0];
  const TensorMeta& ids = in[1];
  if (grad.dtype == DType::kI32 || ids.dtype != DType::kI32) {
    return absl::InvalidArgumentError("expected an f32 or f64 grad and i32 ids");
  }
  if (grad.shape.size() != ids.shape.size() + 1 ||
      !std::equal(ids.shape.begin(), ids.shape.end(), grad.shape.begin())) {
    return absl::InvalidArgumentError(absl::StrCat("grad ", ShapeString(grad.shape), " does not fit ids ",
                                                   ShapeString(ids.shape),
                                                   "; expected grad (..., D) with ids (...)"));
  }
  if (num_rows_ < 0) return absl::InvalidArgumentError(absl::StrCat("num_rows ", num_rows_, " is negative"));
  return std::vector<TensorMeta>{TensorMeta{{num_rows_, grad.shape.back()}, grad.dtype, grad.device}};
}

absl::Status EmbeddingBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                   absl::Span<const Tensor> out) const {
  RETURN_IF_ERROR(CheckIds(in[1], num_rows_));
  if (in[0].dtype() == DType::kF64) {
    ReferenceScatterAdd<double>(in, out[0]);
  } else {
    ReferenceScatterAdd<float>(in, out[0]);
  }
  return absl::OkStatus();
}

absl::Status EmbeddingBackwardOp::ComputeCpu(absl::Span<const Tensor> in,
                                             absl::Span<const Tensor> out) const {
  RETURN_IF_ERROR(CheckIds(in[1], num_rows_));
  if (in[0].dtype() == DType::kF64) {
    ScatterAdd<double>(in[0], in[1], out[0], /*parallel=*/true);
  } else {
    ScatterAdd<float>(in[0], in[1], out[0], /*parallel=*/true);
  }
  return absl::OkStatus();
}

std::vector<Tensor> EmbeddingBackwardOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                             absl::Span<const Tensor> out_grads) const {
  return {Embedding(out_grads[0], in[1]), Tensor()};
}

Tensor Embedding(const Tensor& table, const Tensor& ids) {
  return core::Call(std::make_shared<EmbeddingOp>(), {table, ids})[0];
}

Tensor EmbeddingBackward(const Tensor& grad, const Tensor& ids, int64_t num_rows) {
  return core::Call(std::make_shared<EmbeddingBackwardOp>(num_rows), {grad, ids})[0];
}

}  // namespace mimetic::ops
