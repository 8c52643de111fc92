// Fast CPU paths of the shape ops: one memcpy per contiguous row. The references in shape.cc say the
// same moves as views; these exist because a training step runs concat, split, slice and pad on every
// layer and a row memcpy is several times faster than an element-wise view assignment (shape_test's
// consistency rows check both give the same bytes).
#include <algorithm>
#include <cstring>
#include <vector>

#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::ops {
namespace {

using core::Shape;

const char* Bytes(const Tensor& t) { return static_cast<const char*>(t.storage()->data()); }
char* MutableBytes(const Tensor& t) { return static_cast<char*>(t.storage()->data()); }

// The bytes of one slab inside `axis` (the inner dims) and the outer/axis sizes of t's shape.
struct Rows {
  int64_t outer, n;
  size_t row;  // bytes
};
Rows RowsAround(const Tensor& t, int axis_attr) {
  const int axis = internal::NormalizeAxis(axis_attr, t.rank()).value();
  int64_t outer, n, inner;
  internal::SplitAroundAxis(t.shape(), axis, &outer, &n, &inner);
  return Rows{outer, n, static_cast<size_t>(inner) * core::DTypeSize(t.dtype())};
}

// Transpose kernel over a collapsed plan (operand 0: x's strides in out order; operand 1: out).
// When x's innermost stride is 1 every row is a contiguous copy (e.g. (B, L, H, P) -> (B, H, L, P));
// otherwise 32 x 32 tiles of the two dims holding x's and out's unit strides are swapped.
template <typename T>
void TransposeFast(const internal::LoopPlan& plan, const T* x, T* y) {
  const int nd = static_cast<int>(plan.dims.size());
  const std::vector<int64_t>& sx = plan.strides[0];
  const std::vector<int64_t>& sy = plan.strides[1];
  const int64_t total = plan.rows() * plan.inner();
  if (sx.back() == 1 || plan.inner() == 1) {
    const int64_t inner = plan.inner(), rows = plan.rows();
#pragma omp parallel for schedule(static) if (total > internal::kParallelThreshold)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t off[2];
      plan.RowOffsets(r, off);
      if (inner == 1) {
        y[off[1]] = x[off[0]];
      } else {
        std::memcpy(y + off[1], x + off[0], inner * sizeof(T));
      }
    }
    return;
  }
  int q = 0;  // the dim where x is contiguous
  for (int d = 0; d < nd; ++d) {
    if (sx[d] == 1) q = d;
  }
  const int64_t m = plan.dims[q], n = plan.inner();
  const int64_t ys_q = sy[q], xs_n = sx.back();
  // Batch dims: all but q and the last.
  std::vector<int64_t> bdims, bsx, bsy;
  for (int d = 0; d + 1 < nd; ++d) {
    if (d == q) continue;
    bdims.push_back(plan.dims[d]);
    bsx.push_back(sx[d]);
    bsy.push_back(sy[d]);
  }
  int64_t batches = 1;
  for (int64_t b : bdims) batches *= b;
  constexpr int64_t kTile = 32;
  const int64_t mt = (m + kTile - 1) / kTile;
  const int64_t tasks = batches * mt;
#pragma omp parallel for schedule(static) if (total > internal::kParallelThreshold)
  for (int64_t t = 0; t < tasks; ++t) {
    int64_t b = t / mt, ox = 0, oy = 0;
    for (int d = static_cast<int>(bdims.size()) - 1; d >= 0; --d) {
      const int64_t c = b % bdims[d];
      b /= bdims[d];
      ox += c * bsx[d];
      oy += c * bsy[d];
    }
    const int64_t i0 = (t % mt) * kTile, i1 = std::min(m, i0 + kTile);
    for (int64_t j0 = 0; j0 < n; j0 += kTile) {
      const int64_t j1 = std::min(n, j0 + kTile);
      for (int64_t i = i0; i < i1; ++i) {
        const T* xr = x + ox + i;
        T* yr = y + oy + i * ys_q;
        for (int64_t j = j0; j < j1; ++j) yr[j] = xr[j * xs_n];
      }
    }
  }
}

}  // namespace

absl::Status TransposeOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const Shape& os = out[0].shape();
  if (out[0].numel() == 0) return absl::OkStatus();
  const std::vector<int64_t> in_strides = internal::ContiguousStrides(in[0].shape());
  std::vector<int64_t> sx(os.size());
  for (size_t d = 0; d < os.size(); ++d) sx[d] = in_strides[perm_[d]];
  const internal::LoopPlan plan = internal::MakeLoopPlan(os, {sx, internal::ContiguousStrides(os)});
  internal::DispatchDType(in[0].dtype(), [&](auto tag) {
    using T = decltype(tag);
    TransposeFast<T>(plan, in[0].data<T>(), out[0].mutable_data<T>());
  });
  return absl::OkStatus();
}

absl::Status SliceOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const Rows r = RowsAround(in[0], axis_);
  const int64_t m = end_ - start_;
  for (int64_t o = 0; o < r.outer; ++o) {
    std::memcpy(MutableBytes(out[0]) + o * m * r.row, Bytes(in[0]) + (o * r.n + start_) * r.row, m * r.row);
  }
  return absl::OkStatus();
}

absl::Status PadOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const Rows r = RowsAround(in[0], axis_);
  const int64_t m = r.n + before_ + after_;
  for (int64_t o = 0; o < r.outer; ++o) {
    char* y = MutableBytes(out[0]) + o * m * r.row;
    std::memset(y, 0, before_ * r.row);
    std::memcpy(y + before_ * r.row, Bytes(in[0]) + o * r.n * r.row, r.n * r.row);
    std::memset(y + (before_ + r.n) * r.row, 0, after_ * r.row);
  }
  return absl::OkStatus();
}

absl::Status ConcatOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int axis = internal::NormalizeAxis(axis_, out[0].rank()).value();
  const Rows r = RowsAround(out[0], axis_);
  for (int64_t o = 0; o < r.outer; ++o) {
    char* y = MutableBytes(out[0]) + o * r.n * r.row;
    for (const Tensor& x : in) {
      const int64_t n = x.dim(axis);
      std::memcpy(y, Bytes(x) + o * n * r.row, n * r.row);
      y += n * r.row;
    }
  }
  return absl::OkStatus();
}

absl::Status SplitOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const Rows r = RowsAround(in[0], axis_);
  for (int64_t o = 0; o < r.outer; ++o) {
    const char* x = Bytes(in[0]) + o * r.n * r.row;
    for (size_t k = 0; k < out.size(); ++k) {
      std::memcpy(MutableBytes(out[k]) + o * sizes_[k] * r.row, x, sizes_[k] * r.row);
      x += sizes_[k] * r.row;
    }
  }
  return absl::OkStatus();
}

}  // namespace mimetic::ops
