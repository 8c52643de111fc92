// The fused AdamW update on the GPU: one elementwise pass over a parameter leaf reading param,
// grad, m, v and writing param, m, v (28 bytes per f32 element), with the formulas and the
// evaluation order of AdamWOp's CPU kernel (adamw.cc):
//   g = grad * grad_scale; m' = b1 m + (1 - b1) g; v' = b2 v + (1 - b2) g g
//   p' = p (1 - lr wd) - (lr / bc1) m' / (sqrt(v') / sqrt(bc2) + eps)
// The step scalars come from device memory, so a captured CUDA graph replays every step. Moves
// 16-byte vectors when all seven arrays are 16-byte aligned; grid-stride loops otherwise.
#include <cuda_runtime.h>

#include <cstdint>

#include "mimetic/ops/adamw/adamw_kernels.h"

namespace mimetic::ops::cuda_kernels {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 8192;

template <typename T, int V>
struct alignas(sizeof(T) * V) Vec {
  T v[V];
};

__device__ __forceinline__ float Sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double Sqrt(double x) { return sqrt(x); }

template <typename T>
struct Step {
  T decay, b1, b2, eps, step, inv_sqrt_bc2, scale;

  __device__ __forceinline__ void Apply(T p, T g, T m, T v, T& po, T& mo, T& vo) const {
    const T gi = g * scale;
    mo = b1 * m + (T(1) - b1) * gi;
    vo = b2 * v + (T(1) - b2) * gi * gi;
    po = p * decay - step * mo / (Sqrt(vo) * inv_sqrt_bc2 + eps);
  }
};

template <typename T>
__global__ void AdamWKernel(const T* __restrict__ p, const T* __restrict__ g, const T* __restrict__ m,
                            const T* __restrict__ v, const T* __restrict__ scalars, T* __restrict__ po,
                            T* __restrict__ mo, T* __restrict__ vo, int64_t n, T b1, T b2, T eps, T wd,
                            bool vectorize) {
  const T lr = scalars[0], bc1 = scalars[1], bc2 = scalars[2];
  Step<T> st;
  st.decay = T(1) - lr * wd;
  st.b1 = b1;
  st.b2 = b2;
  st.eps = eps;
  st.step = lr / bc1;
  st.inv_sqrt_bc2 = T(1) / Sqrt(bc2);
  st.scale = scalars[3];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t tail = 0;
  if (vectorize) {
    constexpr int V = static_cast<int>(16 / sizeof(T));
    using VT = Vec<T, V>;
    const int64_t nv = n / V;
    for (int64_t j = tid; j < nv; j += stride) {
      const VT pv = reinterpret_cast<const VT*>(p)[j];
      const VT gv = reinterpret_cast<const VT*>(g)[j];
      const VT mv = reinterpret_cast<const VT*>(m)[j];
      const VT vv = reinterpret_cast<const VT*>(v)[j];
      VT pn, mn, vn;
#pragma unroll
      for (int e = 0; e < V; ++e) st.Apply(pv.v[e], gv.v[e], mv.v[e], vv.v[e], pn.v[e], mn.v[e], vn.v[e]);
      reinterpret_cast<VT*>(po)[j] = pn;
      reinterpret_cast<VT*>(mo)[j] = mn;
      reinterpret_cast<VT*>(vo)[j] = vn;
    }
    tail = nv * V;
  }
  for (int64_t i = tail + tid; i < n; i += stride) st.Apply(p[i], g[i], m[i], v[i], po[i], mo[i], vo[i]);
}

bool Aligned16(const void* ptr) { return (reinterpret_cast<uintptr_t>(ptr) & 15u) == 0; }

template <typename T>
const char* AdamWTyped(const void* p, const void* g, const void* m, const void* v, const void* s, void* po,
                       void* mo, void* vo, int64_t n, double b1, double b2, double eps, double wd,
                       cudaStream_t stream) {
  const bool vectorize = Aligned16(p) && Aligned16(g) && Aligned16(m) && Aligned16(v) && Aligned16(po) &&
                         Aligned16(mo) && Aligned16(vo);
  const int64_t work = vectorize ? n / static_cast<int64_t>(16 / sizeof(T)) + 1 : n;
  int64_t blocks = (work + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  if (blocks < 1) blocks = 1;
  AdamWKernel<T><<<static_cast<int>(blocks), kThreads, 0, stream>>>(
      static_cast<const T*>(p), static_cast<const T*>(g), static_cast<const T*>(m), static_cast<const T*>(v),
      static_cast<const T*>(s), static_cast<T*>(po), static_cast<T*>(mo), static_cast<T*>(vo), n,
      static_cast<T>(b1), static_cast<T>(b2), static_cast<T>(eps), static_cast<T>(wd), vectorize);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

}  // namespace

const char* LaunchAdamW(int dtype, const void* param, const void* grad, const void* m, const void* v,
                        const void* scalars, void* param_out, void* m_out, void* v_out, int64_t n,
                        double beta1, double beta2, double eps, double weight_decay, void* stream) {
  if (n <= 0) return nullptr;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case kAdamWF32:
      return AdamWTyped<float>(param, grad, m, v, scalars, param_out, m_out, v_out, n, beta1, beta2, eps,
                               weight_decay, s);
    case kAdamWF64:
      return AdamWTyped<double>(param, grad, m, v, scalars, param_out, m_out, v_out, n, beta1, beta2, eps,
                                weight_decay, s);
    default:
      return "unsupported AdamW dtype";
  }
}

}  // namespace mimetic::ops::cuda_kernels
