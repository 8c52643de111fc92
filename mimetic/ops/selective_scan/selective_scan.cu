// Selective scan forward on the GPU: ForwardKernel and its launcher. The algorithm, the work
// decomposition and the shared helpers: selective_scan_device.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/selective_scan/selective_scan_device.cuh"
#include "mimetic/ops/selective_scan/selective_scan_kernels.h"

namespace mimetic::ops::cuda {
namespace {

template <typename T, int kNPT, int kP>
__global__ void __launch_bounds__(kThreads) ForwardKernel(Params<T> p) {
  constexpr int kNPad = kNPT * kP;
  constexpr int kTT = TileSteps(kNPad);
  __shared__ T sB[kTT * kNPad];
  __shared__ T sC[kTT * kNPad];
  const Seat<kP> s = TakeSeat<kP>(p.nbx, p.E);
  const int64_t L = p.L, E = p.E, N = p.N, b = s.b, d = s.d;
  const int q = s.q;

  T a2[kNPT], h[kNPT];
#pragma unroll
  for (int j = 0; j < kNPT; ++j) {
    const int64_t n = j * kP + q;
    a2[j] = s.active && n < N ? ScaleA(p.A[d * N + n]) : T(0);
    h[j] = T(0);
  }
  const T bias = s.active && p.bias ? p.bias[d] : T(0);
  const T Dd = s.active ? p.D[d] : T(0);

  for (int64_t t0 = 0; t0 < L; t0 += kTT) {
    const int len = static_cast<int>(min(static_cast<int64_t>(kTT), L - t0));
    __syncthreads();  // the previous tile is no longer read
    LoadTile<kNPad>(p.Bm, p.Cm, b, L, N, t0, len, sB, sC);
    __syncthreads();
    for (int tt = 0; tt < len; ++tt) {
      const int64_t i = (b * L + t0 + tt) * E + d;
      T x = T(0), dt = T(0);
      if (s.active) {
        x = p.u[i];
        dt = TimeStep(p.delta[i] + bias, p.softplus);
      }
      const T dtx = dt * x;
      T acc = T(0);
#pragma unroll
      for (int j = 0; j < kNPT; ++j) {
        const int o = tt * kNPad + j * kP + q;
        h[j] = StepState(h[j], dt, a2[j], dtx, sB[o]);
        acc = Fma(sC[o], h[j], acc);
      }
      acc = SumLanes<kP>(acc);
      if (s.active && q == 0) {
        T out = acc + Dd * x;
        if (p.z) {
          const T zz = p.z[i];
          out *= zz * Sigmoid(zz);
        }
        p.y[i] = out;
      }
    }
  }
#pragma unroll
  for (int j = 0; j < kNPT; ++j) {
    const int64_t n = j * kP + q;
    if (s.active && n < N) p.last[(b * E + d) * N + n] = h[j];
  }
}

template <typename T>
const char* Forward(const SelectiveScanShape& s, const SelectiveScanInputs<T>& in, T* y, T* last,
                    void* stream_ptr) {
  if (const char* e = CheckShape(s)) return e;
  if (s.B == 0 || s.E == 0) return nullptr;  // y and last_state are empty
  if (s.has_z && !in.z && s.L > 0) return "selective_scan: has_z without z";
  if (s.has_delta_bias && !in.delta_bias) return "selective_scan: has_delta_bias without delta_bias";
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  const Plan pl = MakePlan(s, sizeof(T));
  Params<T> p = MakeParams(s, in);
  p.y = y;
  p.last = last;
  p.nbx = pl.nbx;
  p.ep = pl.ep;
  const int64_t blocks = pl.nbx * s.B;
  if (blocks > 0x7fffffff) return "selective_scan: too many blocks (B·E too large)";
  bool launched = false;
#define MIMETIC_SS_FORWARD(NPT_, P_)                                                       \
  if (!launched && pl.config.npt == NPT_ && pl.config.p == P_) {                           \
    ForwardKernel<T, NPT_, P_><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(p); \
    launched = true;                                                                       \
  }
  MIMETIC_SELECTIVE_SCAN_CONFIGS(MIMETIC_SS_FORWARD)
#undef MIMETIC_SS_FORWARD
  if (!launched) return "selective_scan: no kernel for this state size";
  return LastError();
}

}  // namespace


const char* LaunchSelectiveScanForward(const SelectiveScanShape& s, const SelectiveScanInputs<float>& in,
                                       float* y, float* last_state, void* stream) {
  return Forward<float>(s, in, y, last_state, stream);
}
const char* LaunchSelectiveScanForward(const SelectiveScanShape& s, const SelectiveScanInputs<double>& in,
                                       double* y, double* last_state, void* stream) {
  return Forward<double>(s, in, y, last_state, stream);
}

}  // namespace mimetic::ops::cuda
