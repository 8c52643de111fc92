// Fast CPU kernels of the elementwise ops and the broadcasting machinery they share with reduce.
//
// A broadcast is collapsed (MakeLoopPlan) into rows of a contiguous inner dimension in which every
// operand has stride 1 or 0, so each row is one of four simple loops the compiler vectorises:
// same shape -> one row; bias (E) over (B, L, E) -> rows of E with the bias reused; (B, L, 1) over
// (B, L, E) -> a scalar per row. Rows (and long rows, in chunks) are spread over OpenMP threads
// with a static schedule; every element is computed independently, so results never depend on
// the thread count.
//
// f32 transcendental functions are fast_math.h's polynomials, written with selects only, so the loops
// vectorise (glibc's expf/log1pf are scalar calls without -ffast-math); relative error < 2.5e-7.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "mimetic/ops/cpu/fast_math.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/elementwise/silu.h"

namespace mimetic::ops {
namespace internal {

using core::Shape;

absl::StatusOr<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  const size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shapes ", core::ShapeString(a), " and ", core::ShapeString(b), " do not broadcast (dimension -",
          i + 1, ": ", da, " vs ", db, "); expected equal sizes or 1"));
    }
    out[r - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> ContiguousStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t s = 1;
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = s;
    s *= shape[d];
  }
  return strides;
}

std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out_shape) {
  const size_t r = out_shape.size();
  std::vector<int64_t> strides(r, 0);
  int64_t stride = 1;
  for (size_t i = 0; i < shape.size() && i < r; ++i) {
    const int64_t d = shape[shape.size() - 1 - i];
    strides[r - 1 - i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  return strides;
}

int64_t LoopPlan::rows() const {
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < dims.size(); ++d) rows *= dims[d];
  return rows;
}

void LoopPlan::RowOffsets(int64_t row, int64_t* offsets) const {
  for (size_t k = 0; k < strides.size(); ++k) offsets[k] = 0;
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0 && row > 0; --d) {
    const int64_t c = row % dims[d];
    row /= dims[d];
    for (size_t k = 0; k < strides.size(); ++k) offsets[k] += c * strides[k][d];
  }
}

LoopPlan MakeLoopPlan(const Shape& out_shape, const std::vector<std::vector<int64_t>>& strides) {
  LoopPlan plan;
  plan.strides.resize(strides.size());
  for (size_t d = 0; d < out_shape.size(); ++d) {
    const int64_t n = out_shape[d];
    if (n == 1) continue;
    bool merge = !plan.dims.empty();
    for (size_t k = 0; k < strides.size() && merge; ++k) merge = plan.strides[k].back() == strides[k][d] * n;
    if (merge) {
      plan.dims.back() *= n;
      for (size_t k = 0; k < strides.size(); ++k) plan.strides[k].back() = strides[k][d];
    } else {
      plan.dims.push_back(n);
      for (size_t k = 0; k < strides.size(); ++k) plan.strides[k].push_back(strides[k][d]);
    }
  }
  if (plan.dims.empty()) {
    plan.dims.push_back(1);
    for (auto& s : plan.strides) s.push_back(0);
  }
  return plan;
}

// Calls fn(offsets, len) for every row of the plan, long rows split into chunks; in parallel
// (static schedule) when the iteration is large. Offsets are in elements, one per operand (<= 4).
template <typename Fn>
void ForEachRow(const LoopPlan& plan, Fn fn) {
  constexpr int64_t kChunk = 16384;
  const int64_t rows = plan.rows();
  const int64_t inner = plan.inner();
  const int64_t chunks_per_row = (inner + kChunk - 1) / kChunk;
  const int64_t tasks = rows * chunks_per_row;
  const size_t n_ops = plan.strides.size();
#pragma omp parallel for schedule(static) if (rows * inner > kParallelThreshold && tasks > 1)
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t row = chunks_per_row == 1 ? t : t / chunks_per_row;
    const int64_t begin = chunks_per_row == 1 ? 0 : (t % chunks_per_row) * kChunk;
    int64_t offsets[4];
    plan.RowOffsets(row, offsets);
    for (size_t k = 0; k < n_ops; ++k) offsets[k] += begin * plan.strides[k].back();
    fn(offsets, std::min(kChunk, inner - begin));
  }
}

void BroadcastCopy(const core::Tensor& x, const core::Tensor& out) {
  const Shape& os = out.shape();
  const LoopPlan plan = MakeLoopPlan(os, {BroadcastStrides(x.shape(), os), BroadcastStrides(os, os)});
  const bool contiguous = plan.strides[0].back() != 0;
  const size_t esize = core::DTypeSize(x.dtype());
  DispatchDType(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data<T>();
    T* po = out.mutable_data<T>();
    ForEachRow(plan, [&](const int64_t* off, int64_t len) {
      if (contiguous) {
        std::memcpy(po + off[1], px + off[0], len * esize);
      } else {
        std::fill(po + off[1], po + off[1] + len, px[off[0]]);
      }
    });
  });
}

}  // namespace internal

namespace {

using internal::ForEachRow;
using internal::LoopPlan;

using fast_math::Exp;
using fast_math::Sigmoid;
using fast_math::Softplus;

// Cephes tanhf: an odd polynomial for |x| < 0.625, else (1 - e^-2|x|) / (1 + e^-2|x|).
inline float FastTanh(float x) {
  const float ax = std::abs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float e = Exp(-2.0f * ax);
  const float big = std::copysign((1.0f - e) / (1.0f + e), x);
  return ax < 0.625f ? small : big;
}

template <typename T, typename F>
void UnaryLoop(const T* x, T* y, int64_t n, F f) {
#pragma omp parallel for schedule(static) if (n > internal::kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

void UnaryF32(UnaryKind kind, float c, const float* x, float* y, int64_t n) {
  switch (kind) {
    case UnaryKind::kNeg:
      return UnaryLoop(x, y, n, [](float v) { return -v; });
    case UnaryKind::kExp:
      return UnaryLoop(x, y, n, [](float v) { return Exp(v); });
    case UnaryKind::kLog:
      return UnaryLoop(x, y, n, [](float v) { return std::log(v); });
    case UnaryKind::kSigmoid:
      return UnaryLoop(x, y, n, [](float v) { return Sigmoid(v); });
    case UnaryKind::kSoftplus:
      return UnaryLoop(x, y, n, [](float v) { return Softplus(v); });
    case UnaryKind::kSilu:
      return UnaryLoop(x, y, n, [](float v) { return silu::Fast(v); });
    case UnaryKind::kSiluGrad:
      return UnaryLoop(x, y, n, [](float v) { return silu::FastGrad(v); });
    case UnaryKind::kSquare:
      return UnaryLoop(x, y, n, [](float v) { return v * v; });
    case UnaryKind::kSqrt:
      return UnaryLoop(x, y, n, [](float v) { return std::sqrt(v); });
    case UnaryKind::kRsqrt:
      return UnaryLoop(x, y, n, [](float v) { return 1.0f / std::sqrt(v); });
    case UnaryKind::kTanh:
      return UnaryLoop(x, y, n, [](float v) { return FastTanh(v); });
    case UnaryKind::kAbs:
      return UnaryLoop(x, y, n, [](float v) { return std::abs(v); });
    case UnaryKind::kSign:
      return UnaryLoop(x, y, n, [](float v) { return v > 0.0f ? 1.0f : (v < 0.0f ? -1.0f : 0.0f); });
    case UnaryKind::kAddScalar:
      return UnaryLoop(x, y, n, [c](float v) { return v + c; });
    case UnaryKind::kMulScalar:
      return UnaryLoop(x, y, n, [c](float v) { return v * c; });
    case UnaryKind::kPowScalar:
      if (c == 2.0f) return UnaryLoop(x, y, n, [](float v) { return v * v; });
      if (c == 1.0f) return UnaryLoop(x, y, n, [](float v) { return v; });
      if (c == 0.5f) return UnaryLoop(x, y, n, [](float v) { return std::sqrt(v); });
      if (c == -1.0f) return UnaryLoop(x, y, n, [](float v) { return 1.0f / v; });
      return UnaryLoop(x, y, n, [c](float v) { return std::pow(v, c); });
  }
}

// out = f(a, b) over a broadcast; one of four row loops by the operands' inner strides.
template <typename T, typename F>
void BinaryFast(const Tensor& a, const Tensor& b, const Tensor& out, F f) {
  const core::Shape& os = out.shape();
  const LoopPlan plan = internal::MakeLoopPlan(
      os, {internal::BroadcastStrides(a.shape(), os), internal::BroadcastStrides(b.shape(), os),
           internal::BroadcastStrides(os, os)});
  const bool va = plan.strides[0].back() != 0;
  const bool vb = plan.strides[1].back() != 0;
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.mutable_data<T>();
  ForEachRow(plan, [&](const int64_t* off, int64_t len) {
    const T* x = pa + off[0];
    const T* y = pb + off[1];
    T* z = po + off[2];
    if (va && vb) {
      for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], y[i]);
    } else if (va) {
      const T yv = *y;
      for (int64_t i = 0; i < len; ++i) z[i] = f(x[i], yv);
    } else if (vb) {
      const T xv = *x;
      for (int64_t i = 0; i < len; ++i) z[i] = f(xv, y[i]);
    } else {
      std::fill(z, z + len, f(*x, *y));
    }
  });
}

}  // namespace

absl::Status BinaryOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    switch (kind_) {
      case BinaryKind::kAdd:
        return BinaryFast<T>(in[0], in[1], out[0], [](T x, T y) { return x + y; });
      case BinaryKind::kSub:
        return BinaryFast<T>(in[0], in[1], out[0], [](T x, T y) { return x - y; });
      case BinaryKind::kMul:
        return BinaryFast<T>(in[0], in[1], out[0], [](T x, T y) { return x * y; });
      case BinaryKind::kDiv:
        return BinaryFast<T>(in[0], in[1], out[0], [](T x, T y) { return x / y; });
      case BinaryKind::kMaximum:
        return BinaryFast<T>(in[0], in[1], out[0], [](T x, T y) { return x >= y ? x : y; });
      case BinaryKind::kGreaterEqual:
        return BinaryFast<T>(in[0], in[1], out[0], [](T x, T y) { return x >= y ? T(1) : T(0); });
    }
  });
  return absl::OkStatus();
}

absl::Status UnaryOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  if (in[0].dtype() != core::DType::kF32) return ComputeReference(in, out);
  UnaryF32(kind_, static_cast<float>(scalar_), in[0].data<float>(), out[0].mutable_data<float>(),
           in[0].numel());
  return absl::OkStatus();
}

absl::Status WhereOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const core::Shape& os = out[0].shape();
  const LoopPlan plan = internal::MakeLoopPlan(
      os, {internal::BroadcastStrides(in[0].shape(), os), internal::BroadcastStrides(in[1].shape(), os),
           internal::BroadcastStrides(in[2].shape(), os), internal::BroadcastStrides(os, os)});
  const int64_t sc = plan.strides[0].back(), sa = plan.strides[1].back(), sb = plan.strides[2].back();
  internal::DispatchDType(in[0].dtype(), [&](auto ctag) {
    using C = decltype(ctag);
    internal::DispatchDType(in[1].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const C* pc = in[0].data<C>();
      const T* pa = in[1].data<T>();
      const T* pb = in[2].data<T>();
      T* po = out[0].mutable_data<T>();
      ForEachRow(plan, [&](const int64_t* off, int64_t len) {
        const C* c = pc + off[0];
        const T* a = pa + off[1];
        const T* b = pb + off[2];
        T* o = po + off[3];
        for (int64_t i = 0; i < len; ++i) o[i] = c[i * sc] != C(0) ? a[i * sa] : b[i * sb];
      });
    });
  });
  return absl::OkStatus();
}

}  // namespace mimetic::ops
