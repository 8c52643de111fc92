// Elementwise primitives: numpy-style broadcasting binary ops, unary math, casts and selection.
//
//   Tensor y = ops::Add(x, bias);             // x: (B, L, E), bias: (E) -> (B, L, E)
//   Tensor g = ops::Mul(gate, ops::Silu(z));  // gate: (B, L, 1), z: (B, L, E)
//   Tensor m = ops::Where(mask, a, ops::ZerosLike(a));
//
// Broadcasting: shapes are right-aligned; a missing or size-1 dimension is repeated to match the
// other operand. Both operands must have the same dtype (f32 or f64; add/sub/mul/maximum/where
// also take i32). Binary VJPs reduce the cotangent back to each input's shape with SumTo.
//
// The fast CPU path (elementwise_cpu.cc) collapses the broadcast into rows of a contiguous inner
// dimension (same-shape, bias (E) over (B, L, E), (B, L, 1) over (B, L, E), scalars, ...), uses
// vectorisable exp/log for f32 and OpenMP (static schedule) above 32k elements.
#ifndef MIMETIC_OPS_ELEMENTWISE_ELEMENTWISE_H_
#define MIMETIC_OPS_ELEMENTWISE_ELEMENTWISE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops {

using core::Tensor;

// a, b: broadcast-compatible, same dtype -> broadcast shape.
Tensor Add(const Tensor& a, const Tensor& b);
Tensor Sub(const Tensor& a, const Tensor& b);
Tensor Mul(const Tensor& a, const Tensor& b);
Tensor Div(const Tensor& a, const Tensor& b);
// Elementwise max; the VJP sends the gradient to the larger input (ties: to a).
Tensor Maximum(const Tensor& a, const Tensor& b);
// 1 where a >= b else 0, in a's dtype; zero gradient. (Used by Maximum's VJP.)
Tensor GreaterEqual(const Tensor& a, const Tensor& b);

// Unary ops: x (any shape) f32|f64 -> same shape and dtype.
Tensor Neg(const Tensor& x);
Tensor Exp(const Tensor& x);
Tensor Log(const Tensor& x);
Tensor Sigmoid(const Tensor& x);
// log(1 + e^x), = x for x > 20 (as the mamba kernels; one definition: mimetic/ops/softplus.h).
// VJP = sigmoid(x).
Tensor Softplus(const Tensor& x);
// x * sigmoid(x); VJP uses SiluGrad.
Tensor Silu(const Tensor& x);
// d silu / dx = s (1 + x (1 - s)), s = sigmoid(x). A differentiable primitive itself.
Tensor SiluGrad(const Tensor& x);
Tensor Square(const Tensor& x);
Tensor Sqrt(const Tensor& x);
Tensor Rsqrt(const Tensor& x);
Tensor Tanh(const Tensor& x);
Tensor Abs(const Tensor& x);
// -1, 0 or 1; zero gradient. (Used by Abs's VJP.)
Tensor Sign(const Tensor& x);
Tensor AddScalar(const Tensor& x, double c);
Tensor MulScalar(const Tensor& x, double c);
Tensor PowScalar(const Tensor& x, double p);

// f32 <-> f64 <-> i32 (float -> i32 truncates toward zero). The VJP casts the cotangent back
// (float inputs) or is absent (i32 inputs).
Tensor Cast(const Tensor& x, core::DType dtype);
Tensor ZerosLike(const Tensor& x);  // via core::Fill
Tensor OnesLike(const Tensor& x);

// cond != 0 ? a : b, all three broadcast together. cond: a 0/1 mask of any dtype (no gradient);
// a, b: same dtype.
Tensor Where(const Tensor& cond, const Tensor& a, const Tensor& b);

// ---- Op classes (for backends and tests; use the functions above) ----

enum class BinaryKind : uint8_t { kAdd, kSub, kMul, kDiv, kMaximum, kGreaterEqual };

class BinaryOp : public core::Op {
 public:
  explicit BinaryOp(BinaryKind kind) : kind_(kind) {}
  const char* name() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  BinaryKind kind() const { return kind_; }

 private:
  BinaryKind kind_;
};

enum class UnaryKind : uint8_t {
  kNeg,
  kExp,
  kLog,
  kSigmoid,
  kSoftplus,
  kSilu,
  kSiluGrad,
  kSquare,
  kSqrt,
  kRsqrt,
  kTanh,
  kAbs,
  kSign,
  kAddScalar,  // x + scalar
  kMulScalar,  // x * scalar
  kPowScalar,  // x ^ scalar
};

class UnaryOp : public core::Op {
 public:
  explicit UnaryOp(UnaryKind kind, double scalar = 0) : kind_(kind), scalar_(scalar) {}
  const char* name() const override;
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  UnaryKind kind() const { return kind_; }
  double scalar() const { return scalar_; }

 private:
  UnaryKind kind_;
  double scalar_;
};

class CastOp : public core::Op {
 public:
  explicit CastOp(core::DType dtype) : dtype_(dtype) {}
  const char* name() const override { return "cast"; }
  std::string AttrString() const override;
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
  core::DType dtype() const { return dtype_; }

 private:
  core::DType dtype_;
};

class WhereOp : public core::Op {
 public:
  const char* name() const override { return "where"; }
  absl::StatusOr<std::vector<core::TensorMeta>> InferMeta(
      absl::Span<const core::TensorMeta> in) const override;
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  absl::Status ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override;
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                          absl::Span<const Tensor> out_grads) const override;
};

// ---- Broadcasting helpers shared by the op families (elementwise_cpu.cc) ----
namespace internal {

// The numpy broadcast of two shapes, or InvalidArgument naming both shapes and the first
// dimension that does not fit.
absl::StatusOr<core::Shape> BroadcastShapes(const core::Shape& a, const core::Shape& b);

// Row-major element strides of a contiguous tensor of `shape`.
std::vector<int64_t> ContiguousStrides(const core::Shape& shape);

// Element strides of a contiguous tensor of `shape` when read as `out_shape` (right-aligned;
// 0 along broadcast dimensions). One entry per dimension of out_shape.
std::vector<int64_t> BroadcastStrides(const core::Shape& shape, const core::Shape& out_shape);

// An iteration over out_shape with the size-1 dimensions dropped and adjacent dimensions merged
// wherever every operand's strides allow; dims is never empty (a scalar is {1}). The innermost
// stride of every operand is then 0 or 1.
struct LoopPlan {
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides;  // per operand, one per dim
  int64_t inner() const { return dims.back(); }
  int64_t rows() const;  // product of all dims but the last
  // Element offsets of row `row` for every operand.
  void RowOffsets(int64_t row, int64_t* offsets) const;
};
LoopPlan MakeLoopPlan(const core::Shape& out_shape, const std::vector<std::vector<int64_t>>& strides);

// Fast kernel of BroadcastTo: fills out (any dtype) with x repeated along broadcast dimensions.
void BroadcastCopy(const core::Tensor& x, const core::Tensor& out);

// Above this many elements the fast CPU kernels use OpenMP.
inline constexpr int64_t kParallelThreshold = 32768;

// Calls f(T()) with T the C++ type of dtype (float, double or int32_t).
template <typename F>
auto DispatchDType(core::DType dtype, F&& f) {
  switch (dtype) {
    case core::DType::kF64:
      return f(double());
    case core::DType::kI32:
      return f(int32_t());
    case core::DType::kF32:
    default:
      return f(float());
  }
}

// OK for f32/f64; otherwise InvalidArgument "expected f32 or f64, got <dtype>".
absl::Status ExpectFloat(core::DType dtype);

}  // namespace internal
}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_ELEMENTWISE_ELEMENTWISE_H_
