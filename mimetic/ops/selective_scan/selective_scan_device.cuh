// Device code and host helpers shared by the selective-scan CUDA launchers: selective_scan.cu (forward)
// and selective_scan_backward.cu (backward). Private to those two files: everything is in an unnamed
// namespace, so each includes its own copy. The algorithm:
//
// Selective scan (Mamba 1, mamba_ssm: selective_scan_ref, selective_scan_bwd_kernel.cuh) on the GPU: forward
// and chunk-recomputing backward, f32 and f64. See selective_scan_kernels.h for the launchers' contract.
//
// Work decomposition. A block of kThreads threads serves one batch row b and kThreads / kP channels;
// each channel d is served by kP consecutive lanes of one warp, lane q owning the kNPT states
// n = j·kP + q (j < kNPT) in registers (states n >= N are inert padding: A = B = C = 0). The time loop
// runs sequentially in every lane. Per-(t, d) inputs (u, delta, z, dy) are read straight from global
// memory, coalesced across the channels of a warp; the rows B[b, t, :] and C[b, t, :], shared by all
// channels, are staged in shared memory one time tile of kTT steps at a time (lanes of a channel read
// consecutive words: no bank conflicts). Sums over n (y, and du/ddelta in the backward) add the
// lane's states in order, then the kP lanes by a shuffle butterfly.
//
// Forward: tiles of kTT steps; y = (Σ_n C h + D u)·silu(z); last_state = h[L-1].
//
// Backward (as mamba_ssm's selective_scan_bwd_kernel.cuh), per lane:
//   pass 1: the forward recurrence over all chunks but the last, storing the state after each chunk
//           (hbound, (B, n_chunks - 1, kNPT, ep) with ep = threads along the channel axis: coalesced);
//   pass 2: chunks last to first: recompute the chunk's states from its start state (hchunk,
//           (B, K, kNPT, ep)), then the adjoint reverse scan
//             g[t] = C[t]·gy[t] + exp(dt[t+1]A)·g[t+1]   (carried in registers, seeded with dlast_state)
//           producing du, ddelta, dz per (t, d), dA/dD/ddelta_bias accumulated over t in registers, and
//           the dB/dC terms g·dt·u and gy·h, which sum over d: first over the channels of the warp by a
//           recursive-halving shuffle reduction (each lane ends with distinct finished sums), written
//           as per-(b, warp) partials (B, W, L, 2, N); then ReduceBcKernel sums the W warps in order.
//           dA, dD, ddelta_bias are written as per-b partials and summed over b in order. No float
//           atomics (unless the launcher is asked for them): same input, same bits.
// The chunk length on the GPU is K = min(chunk_size, kTT, L), so a chunk is one shared-memory tile.
// The recomputation repeats pass 1's operations exactly (same inline code, explicit fma), so K
// changes no result bit.
#ifndef MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_DEVICE_CUH_
#define MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_DEVICE_CUH_

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/selective_scan/selective_scan_kernels.h"
#include "mimetic/ops/softplus.h"

namespace mimetic::ops::cuda {
namespace {

constexpr int kThreads = 128;  // per block; a multiple of 32
constexpr unsigned kFullMask = 0xffffffffu;
// From this many (b, d) channels on, one thread per channel (kP = 1) gives enough parallelism for
// N <= 16; below it, N is split over several lanes.
constexpr int64_t kManyChannels = 32768;

// Time steps per shared-memory tile of B and C: 2 · kTT · kNPad elements, at most 16 KiB (f32) or
// 32 KiB (f64).
__host__ __device__ constexpr int TileSteps(int n_pad) {
  return 2048 / n_pad < 8 ? 8 : (2048 / n_pad > 128 ? 128 : 2048 / n_pad);
}

// ---- Math shared by the f32 and f64 kernels (same formulas as the CPU ops) ----
__device__ __forceinline__ float Exp(float x) { return expf(x); }
__device__ __forceinline__ double Exp(double x) { return exp(x); }
__device__ __forceinline__ float Fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double Fma(double a, double b, double c) { return fma(a, b, c); }

template <typename T>
__device__ __forceinline__ T Sigmoid(T x) {
  return T(1) / (T(1) + Exp(-x));
}
// dt = softplus(v) (identity above 20, as the reference kernels: softplus.h) or v.
template <typename T>
__device__ __forceinline__ T TimeStep(T v, bool softplus) {
  return !softplus ? v : ::mimetic::ops::Softplus(v);
}
template <typename T>
__device__ __forceinline__ T TimeStepGrad(T v, bool softplus) {
  return !softplus ? T(1) : ::mimetic::ops::SoftplusGrad(v);
}
// exp(dt·A): in f32 as 2^(dt · A log2 e) with A log2 e rounded once (the reference kernels' exp2f and
// the CPU fast path's scaling); in f64 plainly.
__device__ __forceinline__ float ScaleA(float a) { return a * 1.44269504088896341f; }
__device__ __forceinline__ double ScaleA(double a) { return a; }
__device__ __forceinline__ float Decay(float dt, float a_scaled) { return exp2f(dt * a_scaled); }
__device__ __forceinline__ double Decay(double dt, double a_scaled) { return exp(dt * a_scaled); }

// One state update h <- exp(dt A) h + dt·u·B, the single definition used by the forward, pass 1 and
// the recomputation (explicit fma: no contraction choice can differ between the three).
template <typename T>
__device__ __forceinline__ T StepState(T h, T dt, T a_scaled, T dtx, T b) {
  return Fma(Decay(dt, a_scaled), h, dtx * b);
}

// Sum over the kP lanes of a channel (butterfly; every lane gets the same bits, IEEE + commutes).
template <int kP, typename T>
__device__ __forceinline__ T SumLanes(T v) {
#pragma unroll
  for (int o = kP / 2; o > 0; o /= 2) v += __shfl_xor_sync(kFullMask, v, o);
  return v;
}

// Sums the kV values of every lane over the channels of a warp (the lane bits >= kP): recursive
// halving while a lane holds more than one value (the lane with the offset bit set keeps the upper
// half, its partner the lower; both add what the other sent), then butterflies. Afterwards the lane
// holds the finished sums of value indices [base, base + FinalCount) of its state group; `writer`
// is false on the lanes that hold a duplicate of another lane's sums.
template <int kCnt, int kOffset, int kP, int kV, typename T>
__device__ __forceinline__ void ReduceChannels(T (&v)[kV], int lane, int& base, bool& writer) {
  if constexpr (kOffset >= kP && kOffset >= 1) {
    if constexpr (kCnt > 1) {
      constexpr int kHalf = kCnt / 2;
      const bool upper = (lane & kOffset) != 0;
#pragma unroll
      for (int i = 0; i < kHalf; ++i) {
        const T send = upper ? v[i] : v[i + kHalf];
        const T keep = upper ? v[i + kHalf] : v[i];
        v[i] = keep + __shfl_xor_sync(kFullMask, send, kOffset);
      }
      if (upper) base += kHalf;
      ReduceChannels<kHalf, kOffset / 2, kP>(v, lane, base, writer);
    } else {
      v[0] += __shfl_xor_sync(kFullMask, v[0], kOffset);
      if (lane & kOffset) writer = false;
      ReduceChannels<1, kOffset / 2, kP>(v, lane, base, writer);
    }
  }
}

// Values per lane left by ReduceChannels<kV, 16, kP>.
__host__ __device__ constexpr int FinalCount(int v, int p) {
  int cnt = v;
  for (int o = 16; o >= p && o >= 1; o /= 2) cnt = cnt > 1 ? cnt / 2 : 1;
  return cnt;
}

template <typename T>
struct Params {
  int64_t B, L, E, N;
  bool softplus;
  const T *u, *delta, *A, *Bm, *Cm, *D, *z, *bias;  // forward inputs; z, bias may be null
  T *y, *last;                                      // forward outputs
  const T *dy, *dlast;                              // backward cotangents
  T *du, *ddelta, *dz;                              // backward per-(t, d) outputs
  T *dB, *dC;                                       // for the atomic dB/dC path
  bool atomic_bc;
  int64_t nbx;            // blocks per batch row
  int64_t ep;             // threads along the channel axis per batch row (nbx · kThreads)
  int64_t W;              // warps per batch row (ep / 32)
  int64_t K, n_chunks;    // backward chunk length and count
  T *hbound, *hchunk;     // scratch: (B, n_chunks - 1, kNPT, ep) and (B, K, kNPT, ep)
  T* part_bc;             // (B, W, L, 2, N)
  T* part_a;              // (B, E, N)
  T *part_d, *part_bias;  // (B, E)
};

// Where a thread sits: batch row b, channel d (active when d < E), state group q, and its index gx
// along the channel axis of its batch row.
template <int kP>
struct Seat {
  int64_t b, d, gx;
  int q;
  bool active;
};

template <int kP>
__device__ __forceinline__ Seat<kP> TakeSeat(int64_t nbx, int64_t E) {
  Seat<kP> s;
  s.b = blockIdx.x / nbx;
  s.gx = (blockIdx.x % nbx) * kThreads + threadIdx.x;
  s.d = s.gx / kP;
  s.q = threadIdx.x % kP;
  s.active = s.d < E;
  return s;
}

// Rows t0 .. t0 + len of B[b] (and C[b] when sC is non-null) into (len, kNPad) tiles, zero-padded
// past N. Called by the whole block between __syncthreads.
template <int kNPad, typename T>
__device__ __forceinline__ void LoadTile(const T* Bm, const T* Cm, int64_t b, int64_t L, int64_t N,
                                         int64_t t0, int len, T* sB, T* sC) {
  for (int i = threadIdx.x; i < len * kNPad; i += kThreads) {
    const int tt = i / kNPad, n = i % kNPad;
    const int64_t row = (b * L + t0 + tt) * N;
    sB[i] = n < N ? Bm[row + n] : T(0);
    if (sC) sC[i] = n < N ? Cm[row + n] : T(0);
  }
}

// ---- Host side ----

struct Config {
  int npt, p;  // states per lane, lanes per channel
};

inline Config ChooseConfig(const SelectiveScanShape& s) {
  if (s.N > 16) {
    int p = 2;
    while (16 * p < s.N) p *= 2;
    return {16, p};
  }
  if (s.N <= 4) return {4, 1};
  if (s.B * s.E >= kManyChannels) return {s.N <= 8 ? 8 : 16, 1};
  return {4, s.N <= 8 ? 2 : 4};
}

// Every (kNPT, kP) instantiated; ChooseConfig returns only these.
#define MIMETIC_SELECTIVE_SCAN_CONFIGS(X) \
  X(4, 1) X(8, 1) X(16, 1) X(4, 2) X(4, 4) X(16, 2) X(16, 4) X(16, 8) X(16, 16)

constexpr size_t kAlign = 256;
inline size_t AlignUp(size_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

// Launch geometry and scratch layout of the backward (offsets in bytes into one scratch block).
struct Plan {
  Config config;
  int64_t nbx, ep, W, K, n_chunks;
  size_t hbound, hchunk, part_bc, part_a, part_d, part_bias, total;
};

inline Plan MakePlan(const SelectiveScanShape& s, size_t elem) {
  Plan pl;
  pl.config = ChooseConfig(s);
  const int64_t channels_per_block = kThreads / pl.config.p;
  pl.nbx = (s.E + channels_per_block - 1) / channels_per_block;
  pl.ep = pl.nbx * kThreads;
  pl.W = pl.ep / 32;
  const int64_t tile = TileSteps(pl.config.npt * pl.config.p);
  pl.K = std::max<int64_t>(1, std::min<int64_t>({s.chunk_size, tile, s.L}));
  pl.n_chunks = (s.L + pl.K - 1) / pl.K;
  const int64_t npt = pl.config.npt;
  size_t off = 0;
  auto take = [&off, elem](int64_t elems) {
    const size_t at = off;
    off += AlignUp(static_cast<size_t>(std::max<int64_t>(elems, 0)) * elem);
    return at;
  };
  pl.hbound = take(s.B * std::max<int64_t>(pl.n_chunks - 1, 0) * npt * pl.ep);
  pl.hchunk = take(s.L > 0 ? s.B * pl.K * npt * pl.ep : 0);
  pl.part_bc = take(s.B * pl.W * s.L * 2 * s.N);
  pl.part_a = take(s.B * s.E * s.N);
  pl.part_d = take(s.B * s.E);
  pl.part_bias = take(s.has_delta_bias ? s.B * s.E : 0);
  pl.total = off;
  return pl;
}

inline const char* CheckShape(const SelectiveScanShape& s) {
  if (s.B < 0 || s.L < 0 || s.E < 0 || s.N < 0) return "selective_scan: negative dimension";
  if (s.N > kSelectiveScanMaxN) return "selective_scan: N > 256 is not supported by the CUDA kernels";
  if (s.chunk_size < 1) return "selective_scan: chunk_size < 1";
  return nullptr;
}

inline const char* LastError() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// Grid-stride kernels: enough blocks to cover `n` elements, capped (the loops cover the rest).
inline unsigned ReduceBlocks(int64_t n) {
  return static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>((n + 255) / 256, int64_t{1} << 16)));
}

template <typename T>
Params<T> MakeParams(const SelectiveScanShape& s, const SelectiveScanInputs<T>& in) {
  Params<T> p{};
  p.B = s.B;
  p.L = s.L;
  p.E = s.E;
  p.N = s.N;
  p.softplus = s.delta_softplus;
  p.u = in.u;
  p.delta = in.delta;
  p.A = in.A;
  p.Bm = in.Bm;
  p.Cm = in.Cm;
  p.D = in.D;
  p.z = s.has_z ? in.z : nullptr;
  p.bias = s.has_delta_bias ? in.delta_bias : nullptr;
  return p;
}

}  // namespace
}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_DEVICE_CUH_
