#include "mimetic/ops/matmul/matmul.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"
#include "mimetic/core/xt_view.h"
#include "xtensor/xtensor.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;

Shape BatchDims(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

int64_t Product(const Shape& s) {
  int64_t p = 1;
  for (int64_t d : s) p *= d;
  return p;
}

// c_i = op(a_i) op(b_i) for each of the batch's GEMMs (a rank-2 operand is shared by all), or with
// sum_batch c = sum_i op(a_i) op(b_i): sums over k in double, added over the batch in double and
// rounded once at the end.
template <typename T>
void ReferenceGemms(const GemmPlan& p, const Tensor& a_t, const Tensor& b_t, const Tensor& c_t) {
  const XtView<const T, 3> a = core::ReshapedXtViewOrDie<const T>(
      a_t, {a_t.rank() > 2 ? p.batch : int64_t{1}, a_t.dim(-2), a_t.dim(-1)});  // (batch or 1, rows, cols)
  const XtView<const T, 3> b = core::ReshapedXtViewOrDie<const T>(
      b_t, {b_t.rank() > 2 ? p.batch : int64_t{1}, b_t.dim(-2), b_t.dim(-1)});  // (batch or 1, rows, cols)
  // (batch, M, N), or (1, M, N) with sum_batch
  xt::xtensor<double, 3> acc = xt::zeros<double>({p.accumulate ? int64_t{1} : p.batch, p.m, p.n});
  for (int64_t i = 0; i < p.batch; ++i) {
    const int64_t ia = a_t.rank() > 2 ? i : 0, ib = b_t.rank() > 2 ? i : 0, ic = p.accumulate ? 0 : i;
    for (int64_t m = 0; m < p.m; ++m) {
      for (int64_t n = 0; n < p.n; ++n) {
        double s = 0;
        for (int64_t k = 0; k < p.k; ++k) {
          const double x = p.transpose_a ? a(ia, k, m) : a(ia, m, k);  // op(a_i)(m, k)
          const double y = p.transpose_b ? b(ib, n, k) : b(ib, k, n);  // op(b_i)(k, n)
          s += x * y;
        }
        acc(ic, m, n) += s;
      }
    }
  }
  XtView<T, 3> c = core::XtViewOrDie<T, 3>(c_t, acc.shape());  // (batch or 1, M, N)
  c = xt::cast<T>(acc);
}

// A tensor of `like`'s rank from the product of x and y: sums over the batch when `like` is a
// shared (rank-2) operand but x and y are both batched.
Tensor ProductLike(const Tensor& x, const Tensor& y, bool tx, bool ty, const Tensor& like) {
  if (like.rank() == 2 && x.rank() > 2 && y.rank() > 2) return MatMulSumBatch(x, y, tx, ty);
  return MatMul(x, y, tx, ty);
}

}  // namespace

std::string MatMulOp::AttrString() const {
  return absl::StrCat("transpose_a=", transpose_a_ ? 1 : 0, " transpose_b=", transpose_b_ ? 1 : 0);
}

absl::StatusOr<std::vector<TensorMeta>> MatMulOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 2) return absl::InvalidArgumentError(absl::StrCat("expected 2 inputs, got ", in.size()));
  const TensorMeta& a = in[0];
  const TensorMeta& b = in[1];
  if (a.dtype == DType::kI32 || a.dtype != b.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("dtypes ", core::DTypeName(a.dtype), " and ",
                                                   core::DTypeName(b.dtype),
                                                   "; expected both f32 or both f64"));
  }
  if (a.shape.size() < 2 || b.shape.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("ranks ", a.shape.size(), " and ", b.shape.size(), "; expected matrices (rank >= 2)"));
  }
  const size_t ra = a.shape.size(), rb = b.shape.size();
  const int64_t m = transpose_a_ ? a.shape[ra - 1] : a.shape[ra - 2];
  const int64_t ka = transpose_a_ ? a.shape[ra - 2] : a.shape[ra - 1];
  const int64_t kb = transpose_b_ ? b.shape[rb - 1] : b.shape[rb - 2];
  const int64_t n = transpose_b_ ? b.shape[rb - 2] : b.shape[rb - 1];
  if (ka != kb) {
    return absl::InvalidArgumentError(absl::StrCat("contraction dims differ: op(a) is (", m, ", ", ka,
                                                   "), op(b) is (", kb, ", ", n,
                                                   "); expected op(a) (M, K) and op(b) (K, N)"));
  }
  const Shape batch_a = BatchDims(a.shape), batch_b = BatchDims(b.shape);
  Shape out;
  if (sum_batch_) {
    if (batch_a != batch_b) {
      return absl::InvalidArgumentError(absl::StrCat("batch dims ", ShapeString(batch_a), " and ",
                                                     ShapeString(batch_b),
                                                     " differ; expected identical ones"));
    }
  } else if (!batch_a.empty() && !batch_b.empty() && batch_a != batch_b) {
    return absl::InvalidArgumentError(
        absl::StrCat("batch dims ", ShapeString(batch_a), " and ", ShapeString(batch_b),
                     " differ; expected identical ones, or one operand of rank 2"));
  } else {
    out = batch_a.empty() ? batch_b : batch_a;
  }
  out.push_back(m);
  out.push_back(n);
  return std::vector<TensorMeta>{TensorMeta{out, a.dtype, a.device}};
}

GemmPlan MakeGemmPlan(const MatMulOp& op, const TensorMeta& a, const TensorMeta& b, bool flatten) {
  const size_t ra = a.shape.size(), rb = b.shape.size();
  GemmPlan p;
  p.transpose_a = op.transpose_a();
  p.transpose_b = op.transpose_b();
  p.m = p.transpose_a ? a.shape[ra - 1] : a.shape[ra - 2];
  p.k = p.transpose_a ? a.shape[ra - 2] : a.shape[ra - 1];
  p.n = p.transpose_b ? b.shape[rb - 2] : b.shape[rb - 1];
  p.lda = std::max<int64_t>(1, a.shape[ra - 1]);
  p.ldb = std::max<int64_t>(1, b.shape[rb - 1]);
  p.ldc = std::max<int64_t>(1, p.n);
  const bool a_batched = ra > 2, b_batched = rb > 2;
  p.batch = a_batched ? Product(BatchDims(a.shape)) : b_batched ? Product(BatchDims(b.shape)) : 1;
  p.stride_a = a_batched ? a.shape[ra - 2] * a.shape[ra - 1] : 0;
  p.stride_b = b_batched ? b.shape[rb - 2] * b.shape[rb - 1] : 0;
  p.accumulate = op.sum_batch();
  p.stride_c = p.accumulate ? 0 : p.m * p.n;
  if (!flatten || p.batch <= 1) return p;
  if (!op.sum_batch() && a_batched && !b_batched && !p.transpose_a) {
    // (batch*M, K) @ op(b): the rows of all batch entries are contiguous with stride lda.
    p.m *= p.batch;
    p.batch = 1;
  } else if (op.sum_batch() && p.transpose_a && !p.transpose_b) {
    // sum_i a_i^T b_i = A^T B with A (batch*K, M), B (batch*K, N): contract over every row at once.
    p.k *= p.batch;
    p.batch = 1;
    p.accumulate = false;
  }
  return p;
}

absl::Status MatMulOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const GemmPlan p = MakeGemmPlan(*this, in[0].meta(), in[1].meta(), /*flatten=*/false);
  if (in[0].dtype() == DType::kF64) {
    ReferenceGemms<double>(p, in[0], in[1], out[0]);
  } else {
    ReferenceGemms<float>(p, in[0], in[1], out[0]);
  }
  return absl::OkStatus();
}

// With C = op(A) op(B): d op(A) = G op(B)^T and d op(B) = op(A)^T G; each case below writes the
// cotangent of the stored (possibly transposed) operand as one product with transpose flags.
std::vector<Tensor> MatMulOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                  absl::Span<const Tensor> out_grads) const {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const Tensor& g = out_grads[0];
  const bool ta = transpose_a_, tb = transpose_b_;
  Tensor da = ta ? ProductLike(b, g, tb, true, a)     // A^T = op(B) G^T
                 : ProductLike(g, b, false, !tb, a);  // A = G op(B)^T
  Tensor db = tb ? ProductLike(g, a, true, ta, b)     // B^T = G^T op(A)
                 : ProductLike(a, g, !ta, false, b);  // B = op(A)^T G
  return {da, db};
}

Tensor MatMul(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  return core::Call(std::make_shared<MatMulOp>(transpose_a, transpose_b, /*sum_batch=*/false), {a, b})[0];
}

Tensor MatMulSumBatch(const Tensor& a, const Tensor& b, bool transpose_a, bool transpose_b) {
  return core::Call(std::make_shared<MatMulOp>(transpose_a, transpose_b, /*sum_batch=*/true), {a, b})[0];
}

}  // namespace mimetic::ops
