// Launchers of the elementwise CUDA kernels (elementwise.cu). Plain C++ with builtin types only, so
// elementwise_cuda.cc (g++) and elementwise.cu (nvcc) share it without CUDA or absl headers.
//
//   BroadcastPlan plan = ...;  // from ops::internal::MakeLoopPlan over {a, b}
//   if (const char* err = LaunchBinary(kBinaryAdd, kDTypeF32, plan, a, b, out, n, stream)) ...
//
// Every launcher returns nullptr on success or a static CUDA error string, runs on `stream`
// (a cudaStream_t), never synchronises and never allocates, so it can be captured in a CUDA graph.
// Pointers are device pointers; `n` is the number of output elements (0: nothing is launched).
#ifndef MIMETIC_OPS_ELEMENTWISE_ELEMENTWISE_KERNELS_H_
#define MIMETIC_OPS_ELEMENTWISE_ELEMENTWISE_KERNELS_H_

#include <cstdint>

namespace mimetic::ops::cuda_kernels {

// Same values as core::DType (checked by static_asserts in elementwise_cuda.cc).
inline constexpr int kDTypeF32 = 0;
inline constexpr int kDTypeF64 = 1;
inline constexpr int kDTypeI32 = 2;

// Same values as ops::BinaryKind.
inline constexpr int kBinaryAdd = 0;
inline constexpr int kBinarySub = 1;
inline constexpr int kBinaryMul = 2;
inline constexpr int kBinaryDiv = 3;
inline constexpr int kBinaryMaximum = 4;
inline constexpr int kBinaryGreaterEqual = 5;

// Same values as ops::UnaryKind.
inline constexpr int kUnaryNeg = 0;
inline constexpr int kUnaryExp = 1;
inline constexpr int kUnaryLog = 2;
inline constexpr int kUnarySigmoid = 3;
inline constexpr int kUnarySoftplus = 4;
inline constexpr int kUnarySilu = 5;
inline constexpr int kUnarySiluGrad = 6;
inline constexpr int kUnarySquare = 7;
inline constexpr int kUnarySqrt = 8;
inline constexpr int kUnaryRsqrt = 9;
inline constexpr int kUnaryTanh = 10;
inline constexpr int kUnaryAbs = 11;
inline constexpr int kUnarySign = 12;
inline constexpr int kUnaryAddScalar = 13;
inline constexpr int kUnaryMulScalar = 14;
inline constexpr int kUnaryPowScalar = 15;

// A broadcast collapsed by ops::internal::MakeLoopPlan: the output (contiguous, row-major over
// dims) is iterated over `ndim` merged dimensions; strides[k][d] is operand k's element stride
// along dim d (0 where it is broadcast). The innermost stride of every operand is 0 or 1.
inline constexpr int kMaxBroadcastDims = 8;
inline constexpr int kMaxBroadcastOperands = 3;
struct BroadcastPlan {
  int ndim = 1;
  int64_t dims[kMaxBroadcastDims] = {};
  int64_t strides[kMaxBroadcastOperands][kMaxBroadcastDims] = {};
};

// out = a (kind) b over the plan (operands 0 = a, 1 = b); dtype f32, f64 or i32 (div and
// greater_equal: f32/f64 only).
const char* LaunchBinary(int kind, int dtype, const BroadcastPlan& plan, const void* a, const void* b,
                         void* out, int64_t n, void* stream);

// y = f(x) elementwise, f32 or f64; `scalar` is the constant of add/mul/pow_scalar.
const char* LaunchUnary(int kind, int dtype, double scalar, const void* x, void* y, int64_t n, void* stream);

// y = x converted from `from_dtype` to `to_dtype` (float -> i32 truncates toward zero, NaN -> 0,
// saturating; as CastOp's reference).
const char* LaunchCast(int from_dtype, int to_dtype, const void* x, void* y, int64_t n, void* stream);

// out = cond != 0 ? a : b over the plan (operands 0 = cond, 1 = a, 2 = b).
const char* LaunchWhere(int cond_dtype, int dtype, const BroadcastPlan& plan, const void* cond, const void* a,
                        const void* b, void* out, int64_t n, void* stream);

}  // namespace mimetic::ops::cuda_kernels

#endif  // MIMETIC_OPS_ELEMENTWISE_ELEMENTWISE_KERNELS_H_
