// CUDA kernels of the elementwise ops (elementwise.h): binary ops over a collapsed broadcast,
// unary math, casts and where. The formulas are those of the reference kernels in elementwise.cc,
// evaluated in the tensor's dtype with CUDA's correctly rounded + - * / sqrt and its libm
// (expf, log1pf, tanhf: <= 2 ulp); no fast-math intrinsics.
//
// Launch shapes: grid-stride loops of 256-thread blocks. When the broadcast collapses to one
// dimension (same shape, or a scalar operand) the kernels move 16 bytes per access (float4,
// double2, int4) where every vector operand is 16-byte aligned; otherwise each thread decomposes
// its flat output index over the collapsed dims (32-bit index math when the output has fewer than
// 2^31 elements). Every output element is written exactly once: results never depend on the launch.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "mimetic/ops/elementwise/elementwise_kernels.h"
#include "mimetic/ops/softplus.h"

namespace mimetic::ops::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

// 16-byte vectors for the contiguous fast paths.
template <typename T>
constexpr int VecWidth() {
  return static_cast<int>(16 / sizeof(T));
}

int Blocks(int64_t work_items) {
  int64_t blocks = (work_items + kThreads - 1) / kThreads;
  if (blocks < 1) blocks = 1;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<int>(blocks);
}

bool Aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// ---- math in T (overloads so templates pick the f32 or f64 libm function) ----

__device__ __forceinline__ float Exp(float x) { return expf(x); }
__device__ __forceinline__ double Exp(double x) { return exp(x); }
__device__ __forceinline__ float Log(float x) { return logf(x); }
__device__ __forceinline__ double Log(double x) { return log(x); }
__device__ __forceinline__ float Sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double Sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float Tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double Tanh(double x) { return tanh(x); }
__device__ __forceinline__ float Abs(float x) { return fabsf(x); }
__device__ __forceinline__ double Abs(double x) { return fabs(x); }
__device__ __forceinline__ float Pow(float x, float p) { return powf(x, p); }
__device__ __forceinline__ double Pow(double x, double p) { return pow(x, p); }

template <int kKind, typename T>
__device__ __forceinline__ T ApplyBinary(T a, T b) {
  if constexpr (kKind == kBinaryAdd) {
    return a + b;
  } else if constexpr (kKind == kBinarySub) {
    return a - b;
  } else if constexpr (kKind == kBinaryMul) {
    return a * b;
  } else if constexpr (kKind == kBinaryDiv) {
    return a / b;
  } else if constexpr (kKind == kBinaryMaximum) {
    return a >= b ? a : b;
  } else {
    return a >= b ? T(1) : T(0);
  }
}

// The reference formulas of elementwise.cc; c is the op's scalar converted to T.
template <int kKind, typename T>
__device__ __forceinline__ T ApplyUnary(T x, T c) {
  if constexpr (kKind == kUnaryNeg) {
    return -x;
  } else if constexpr (kKind == kUnaryExp) {
    return Exp(x);
  } else if constexpr (kKind == kUnaryLog) {
    return Log(x);
  } else if constexpr (kKind == kUnarySigmoid) {
    return T(1) / (T(1) + Exp(-x));
  } else if constexpr (kKind == kUnarySoftplus) {
    return ::mimetic::ops::Softplus(x);  // log(1 + e^x); = x above 20 (softplus.h)
  } else if constexpr (kKind == kUnarySilu) {
    return x / (T(1) + Exp(-x));
  } else if constexpr (kKind == kUnarySiluGrad) {
    const T s = T(1) / (T(1) + Exp(-x));
    return s * (T(1) + x * (T(1) - s));
  } else if constexpr (kKind == kUnarySquare) {
    return x * x;
  } else if constexpr (kKind == kUnarySqrt) {
    return Sqrt(x);
  } else if constexpr (kKind == kUnaryRsqrt) {
    return T(1) / Sqrt(x);
  } else if constexpr (kKind == kUnaryTanh) {
    return Tanh(x);
  } else if constexpr (kKind == kUnaryAbs) {
    return Abs(x);
  } else if constexpr (kKind == kUnarySign) {
    return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
  } else if constexpr (kKind == kUnaryAddScalar) {
    return x + c;
  } else if constexpr (kKind == kUnaryMulScalar) {
    return x * c;
  } else {
    // The fast CPU path's exact special cases for f32; the reference's pow otherwise.
    if constexpr (std::is_same_v<T, float>) {
      if (c == 2.0f) return x * x;
      if (c == 1.0f) return x;
      if (c == 0.5f) return sqrtf(x);
      if (c == -1.0f) return 1.0f / x;
    }
    return Pow(x, c);
  }
}

// Element offsets of flat output index `idx` in each operand of the plan: the index is
// decomposed innermost first. The loop is unrolled over the fixed maximum rank so the plan's
// arrays are read from the kernel's parameter bank with static indices.
template <int kOps, typename Index>
__device__ __forceinline__ void PlanOffsets(const BroadcastPlan& p, Index idx, Index (&off)[kOps]) {
#pragma unroll
  for (int k = 0; k < kOps; ++k) off[k] = 0;
#pragma unroll
  for (int d = kMaxBroadcastDims - 1; d >= 1; --d) {
    if (d < p.ndim) {
      const Index dim = static_cast<Index>(p.dims[d]);
      const Index q = idx / dim;
      const Index c = idx - q * dim;
#pragma unroll
      for (int k = 0; k < kOps; ++k) off[k] += c * static_cast<Index>(p.strides[k][d]);
      idx = q;
    }
  }
#pragma unroll
  for (int k = 0; k < kOps; ++k) off[k] += idx * static_cast<Index>(p.strides[k][0]);
}

// ---- binary ----

// One collapsed dim: a and b are contiguous (va/vb) or a single broadcast element.
template <int kKind, typename T>
__global__ void BinaryFlatKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                 int64_t n, bool va, bool vb, bool vectorize) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const T a0 = a[0];
  const T b0 = b[0];
  int64_t tail = 0;
  if (vectorize) {
    constexpr int V = VecWidth<T>();
    using VT = Vec<T, V>;
    const int64_t nv = n / V;
    for (int64_t j = tid; j < nv; j += stride) {
      VT x, y, z;
      if (va) {
        x = reinterpret_cast<const VT*>(a)[j];
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) x.v[e] = a0;
      }
      if (vb) {
        y = reinterpret_cast<const VT*>(b)[j];
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) y.v[e] = b0;
      }
#pragma unroll
      for (int e = 0; e < V; ++e) z.v[e] = ApplyBinary<kKind, T>(x.v[e], y.v[e]);
      reinterpret_cast<VT*>(out)[j] = z;
    }
    tail = nv * V;
  }
  for (int64_t i = tail + tid; i < n; i += stride) {
    out[i] = ApplyBinary<kKind, T>(va ? a[i] : a0, vb ? b[i] : b0);
  }
}

template <int kKind, typename T, typename Index>
__global__ void BinaryPlanKernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ out,
                                 const BroadcastPlan plan, Index n) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Index off[2];
    PlanOffsets<2, Index>(plan, i, off);
    out[i] = ApplyBinary<kKind, T>(a[off[0]], b[off[1]]);
  }
}

template <int kKind, typename T>
const char* BinaryTyped(const BroadcastPlan& plan, const T* a, const T* b, T* out, int64_t n,
                        cudaStream_t stream) {
  if (plan.ndim == 1) {
    const bool va = plan.strides[0][0] != 0;
    const bool vb = plan.strides[1][0] != 0;
    const bool vectorize = (!va || Aligned16(a)) && (!vb || Aligned16(b)) && Aligned16(out);
    const int64_t work = vectorize ? n / VecWidth<T>() + 1 : n;
    BinaryFlatKernel<kKind, T><<<Blocks(work), kThreads, 0, stream>>>(a, b, out, n, va, vb, vectorize);
  } else if (n <= INT32_MAX) {
    BinaryPlanKernel<kKind, T, uint32_t>
        <<<Blocks(n), kThreads, 0, stream>>>(a, b, out, plan, static_cast<uint32_t>(n));
  } else {
    BinaryPlanKernel<kKind, T, int64_t><<<Blocks(n), kThreads, 0, stream>>>(a, b, out, plan, n);
  }
  return LastError();
}

template <typename T>
const char* BinaryDispatch(int kind, const BroadcastPlan& plan, const void* a, const void* b, void* out,
                           int64_t n, cudaStream_t stream) {
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  switch (kind) {
    case kBinaryAdd:
      return BinaryTyped<kBinaryAdd, T>(plan, pa, pb, po, n, stream);
    case kBinarySub:
      return BinaryTyped<kBinarySub, T>(plan, pa, pb, po, n, stream);
    case kBinaryMul:
      return BinaryTyped<kBinaryMul, T>(plan, pa, pb, po, n, stream);
    case kBinaryMaximum:
      return BinaryTyped<kBinaryMaximum, T>(plan, pa, pb, po, n, stream);
    default:
      break;
  }
  if constexpr (std::is_floating_point_v<T>) {
    switch (kind) {
      case kBinaryDiv:
        return BinaryTyped<kBinaryDiv, T>(plan, pa, pb, po, n, stream);
      case kBinaryGreaterEqual:
        return BinaryTyped<kBinaryGreaterEqual, T>(plan, pa, pb, po, n, stream);
      default:
        break;
    }
  }
  return "unsupported binary kind/dtype";
}

// ---- unary ----

template <int kKind, typename T>
__global__ void UnaryKernel(const T* __restrict__ x, T* __restrict__ y, int64_t n, T c, bool vectorize) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t tail = 0;
  if (vectorize) {
    constexpr int V = VecWidth<T>();
    using VT = Vec<T, V>;
    const int64_t nv = n / V;
    for (int64_t j = tid; j < nv; j += stride) {
      VT v = reinterpret_cast<const VT*>(x)[j];
#pragma unroll
      for (int e = 0; e < V; ++e) v.v[e] = ApplyUnary<kKind, T>(v.v[e], c);
      reinterpret_cast<VT*>(y)[j] = v;
    }
    tail = nv * V;
  }
  for (int64_t i = tail + tid; i < n; i += stride) y[i] = ApplyUnary<kKind, T>(x[i], c);
}

template <int kKind, typename T>
const char* UnaryTyped(const void* x, void* y, int64_t n, double scalar, cudaStream_t stream) {
  const bool vectorize = Aligned16(x) && Aligned16(y);
  const int64_t work = vectorize ? n / VecWidth<T>() + 1 : n;
  UnaryKernel<kKind, T><<<Blocks(work), kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y),
                                                               n, static_cast<T>(scalar), vectorize);
  return LastError();
}

template <typename T>
const char* UnaryDispatch(int kind, const void* x, void* y, int64_t n, double c, cudaStream_t s) {
  switch (kind) {
    case kUnaryNeg:
      return UnaryTyped<kUnaryNeg, T>(x, y, n, c, s);
    case kUnaryExp:
      return UnaryTyped<kUnaryExp, T>(x, y, n, c, s);
    case kUnaryLog:
      return UnaryTyped<kUnaryLog, T>(x, y, n, c, s);
    case kUnarySigmoid:
      return UnaryTyped<kUnarySigmoid, T>(x, y, n, c, s);
    case kUnarySoftplus:
      return UnaryTyped<kUnarySoftplus, T>(x, y, n, c, s);
    case kUnarySilu:
      return UnaryTyped<kUnarySilu, T>(x, y, n, c, s);
    case kUnarySiluGrad:
      return UnaryTyped<kUnarySiluGrad, T>(x, y, n, c, s);
    case kUnarySquare:
      return UnaryTyped<kUnarySquare, T>(x, y, n, c, s);
    case kUnarySqrt:
      return UnaryTyped<kUnarySqrt, T>(x, y, n, c, s);
    case kUnaryRsqrt:
      return UnaryTyped<kUnaryRsqrt, T>(x, y, n, c, s);
    case kUnaryTanh:
      return UnaryTyped<kUnaryTanh, T>(x, y, n, c, s);
    case kUnaryAbs:
      return UnaryTyped<kUnaryAbs, T>(x, y, n, c, s);
    case kUnarySign:
      return UnaryTyped<kUnarySign, T>(x, y, n, c, s);
    case kUnaryAddScalar:
      return UnaryTyped<kUnaryAddScalar, T>(x, y, n, c, s);
    case kUnaryMulScalar:
      return UnaryTyped<kUnaryMulScalar, T>(x, y, n, c, s);
    case kUnaryPowScalar:
      return UnaryTyped<kUnaryPowScalar, T>(x, y, n, c, s);
    default:
      return "unsupported unary kind";
  }
}

// ---- cast ----

template <typename From, typename To>
__device__ __forceinline__ To CastValue(From v) {
  if constexpr (std::is_same_v<To, int32_t> && !std::is_same_v<From, int32_t>) {
    // Truncation toward zero; NaN -> 0 and saturation, exactly as CastOp's reference.
    if (!(v == v)) return 0;
    if (v >= From(2147483647.0)) return INT32_MAX;
    if (v <= From(-2147483648.0)) return INT32_MIN;
    return static_cast<int32_t>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <typename From, typename To>
__global__ void CastKernel(const From* __restrict__ x, To* __restrict__ y, int64_t n) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    y[i] = CastValue<From, To>(x[i]);
  }
}

template <typename From>
const char* CastFrom(int to_dtype, const void* x, void* y, int64_t n, cudaStream_t s) {
  const From* px = static_cast<const From*>(x);
  switch (to_dtype) {
    case kDTypeF32:
      CastKernel<From, float><<<Blocks(n), kThreads, 0, s>>>(px, static_cast<float*>(y), n);
      break;
    case kDTypeF64:
      CastKernel<From, double><<<Blocks(n), kThreads, 0, s>>>(px, static_cast<double*>(y), n);
      break;
    case kDTypeI32:
      CastKernel<From, int32_t><<<Blocks(n), kThreads, 0, s>>>(px, static_cast<int32_t*>(y), n);
      break;
    default:
      return "unsupported cast target dtype";
  }
  return LastError();
}

// ---- where ----

template <typename C, typename T, typename Index>
__global__ void WhereKernel(const C* __restrict__ cond, const T* __restrict__ a, const T* __restrict__ b,
                            T* __restrict__ out, const BroadcastPlan plan, Index n) {
  const Index stride = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    Index off[3];
    PlanOffsets<3, Index>(plan, i, off);
    out[i] = cond[off[0]] != C(0) ? a[off[1]] : b[off[2]];
  }
}

template <typename C, typename T>
const char* WhereTyped(const BroadcastPlan& plan, const void* cond, const void* a, const void* b, void* out,
                       int64_t n, cudaStream_t s) {
  const C* pc = static_cast<const C*>(cond);
  const T* pa = static_cast<const T*>(a);
  const T* pb = static_cast<const T*>(b);
  T* po = static_cast<T*>(out);
  if (n <= INT32_MAX) {
    WhereKernel<C, T, uint32_t>
        <<<Blocks(n), kThreads, 0, s>>>(pc, pa, pb, po, plan, static_cast<uint32_t>(n));
  } else {
    WhereKernel<C, T, int64_t><<<Blocks(n), kThreads, 0, s>>>(pc, pa, pb, po, plan, n);
  }
  return LastError();
}

template <typename C>
const char* WhereCond(int dtype, const BroadcastPlan& plan, const void* cond, const void* a, const void* b,
                      void* out, int64_t n, cudaStream_t s) {
  switch (dtype) {
    case kDTypeF32:
      return WhereTyped<C, float>(plan, cond, a, b, out, n, s);
    case kDTypeF64:
      return WhereTyped<C, double>(plan, cond, a, b, out, n, s);
    case kDTypeI32:
      return WhereTyped<C, int32_t>(plan, cond, a, b, out, n, s);
    default:
      return "unsupported where dtype";
  }
}

}  // namespace

const char* LaunchBinary(int kind, int dtype, const BroadcastPlan& plan, const void* a, const void* b,
                         void* out, int64_t n, void* stream) {
  if (n <= 0) return nullptr;
  if (plan.ndim < 1 || plan.ndim > kMaxBroadcastDims) return "broadcast plan rank out of range";
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kDTypeF32:
      return BinaryDispatch<float>(kind, plan, a, b, out, n, s);
    case kDTypeF64:
      return BinaryDispatch<double>(kind, plan, a, b, out, n, s);
    case kDTypeI32:
      return BinaryDispatch<int32_t>(kind, plan, a, b, out, n, s);
    default:
      return "unsupported binary dtype";
  }
}

const char* LaunchUnary(int kind, int dtype, double scalar, const void* x, void* y, int64_t n, void* stream) {
  if (n <= 0) return nullptr;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kDTypeF32:
      return UnaryDispatch<float>(kind, x, y, n, scalar, s);
    case kDTypeF64:
      return UnaryDispatch<double>(kind, x, y, n, scalar, s);
    default:
      return "unsupported unary dtype";
  }
}

const char* LaunchCast(int from_dtype, int to_dtype, const void* x, void* y, int64_t n, void* stream) {
  if (n <= 0) return nullptr;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (from_dtype) {
    case kDTypeF32:
      return CastFrom<float>(to_dtype, x, y, n, s);
    case kDTypeF64:
      return CastFrom<double>(to_dtype, x, y, n, s);
    case kDTypeI32:
      return CastFrom<int32_t>(to_dtype, x, y, n, s);
    default:
      return "unsupported cast source dtype";
  }
}

const char* LaunchWhere(int cond_dtype, int dtype, const BroadcastPlan& plan, const void* cond, const void* a,
                        const void* b, void* out, int64_t n, void* stream) {
  if (n <= 0) return nullptr;
  if (plan.ndim < 1 || plan.ndim > kMaxBroadcastDims) return "broadcast plan rank out of range";
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (cond_dtype) {
    case kDTypeF32:
      return WhereCond<float>(dtype, plan, cond, a, b, out, n, s);
    case kDTypeF64:
      return WhereCond<double>(dtype, plan, cond, a, b, out, n, s);
    case kDTypeI32:
      return WhereCond<int32_t>(dtype, plan, cond, a, b, out, n, s);
    default:
      return "unsupported where condition dtype";
  }
}

}  // namespace mimetic::ops::cuda_kernels
