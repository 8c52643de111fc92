// Launchers of the selective-scan CUDA kernels (selective_scan.cu), in plain C++ types only so both
// nvcc and the host library (selective_scan_cuda.cc) include this header. Semantics are those of the
// CPU ops in selective_scan.h (mamba_ssm: selective_scan_ref, selective_scan_bwd_kernel.cuh); all pointers
// are device pointers and every launcher enqueues on `stream` (a cudaStream_t) and returns nullptr, or a
// static error string.
//
//   SelectiveScanShape s{B, L, E, N, has_z, has_delta_bias, delta_softplus, chunk_size};
//   SelectiveScanInputs<float> in{u, delta, A, Bm, Cm, D, z, delta_bias};   // z, delta_bias may be null
//   if (const char* e = LaunchSelectiveScanForward(s, in, y, last_state, stream)) return Error(e);
//
//   size_t bytes = SelectiveScanBackwardScratchBytes(s, sizeof(float));    // allocate on the device
//   if (const char* e = LaunchSelectiveScanBackward(s, in, dy, dlast, grads, scratch, bytes, stream)) ...
//
// Design (one thread per (b, d) channel, or kP lanes of a warp per channel when N is large or there
// are few channels; each lane keeps its states in registers and runs the time loop sequentially):
//   forward:  B/C rows staged in shared memory per time tile; y reduced over the lanes by shuffles.
//   backward: pass 1 stores the states at chunk boundaries (scratch), then chunks are walked last to
//     first, each recomputing its states (scratch) and running the adjoint reverse scan. Reductions
//     over d (dB, dC) go through per-(b, warp) partials summed in a fixed order by a second kernel,
//     reductions over b (dA, dD, ddelta_bias) through per-b partials: same input, same bits.
#ifndef MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_KERNELS_H_
#define MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_KERNELS_H_

#include <cstddef>
#include <cstdint>

namespace mimetic::ops::cuda {

// Largest state size the kernels support (16 lanes of 16 states).
inline constexpr int64_t kSelectiveScanMaxN = 256;

struct SelectiveScanShape {
  int64_t B = 0, L = 0, E = 0, N = 0;
  bool has_z = false;
  bool has_delta_bias = false;
  bool delta_softplus = false;
  // Steps per recomputation chunk of the backward; the kernels use min(chunk_size, their time tile),
  // which changes no result bit (the recomputation repeats the forward pass's operations).
  int64_t chunk_size = 64;
};

template <typename T>
struct SelectiveScanInputs {
  const T* u = nullptr;           // (B, L, E)
  const T* delta = nullptr;       // (B, L, E)
  const T* A = nullptr;           // (E, N)
  const T* Bm = nullptr;          // (B, L, N)
  const T* Cm = nullptr;          // (B, L, N)
  const T* D = nullptr;           // (E)
  const T* z = nullptr;           // (B, L, E), nullptr when absent
  const T* delta_bias = nullptr;  // (E), nullptr when absent
};

template <typename T>
struct SelectiveScanGradients {
  T* du = nullptr;           // (B, L, E)
  T* ddelta = nullptr;       // (B, L, E)
  T* dA = nullptr;           // (E, N)
  T* dB = nullptr;           // (B, L, N)
  T* dC = nullptr;           // (B, L, N)
  T* dD = nullptr;           // (E)
  T* dz = nullptr;           // (B, L, E), required iff has_z
  T* ddelta_bias = nullptr;  // (E), required iff has_delta_bias
};

// y (B, L, E) and last_state (B, E, N). N <= kSelectiveScanMaxN.
const char* LaunchSelectiveScanForward(const SelectiveScanShape& s, const SelectiveScanInputs<float>& in,
                                       float* y, float* last_state, void* stream);
const char* LaunchSelectiveScanForward(const SelectiveScanShape& s, const SelectiveScanInputs<double>& in,
                                       double* y, double* last_state, void* stream);

// Device scratch the backward needs for shape `s` and element size `elem_bytes` (4 or 8).
size_t SelectiveScanBackwardScratchBytes(const SelectiveScanShape& s, size_t elem_bytes);

// All cotangents given dy (B, L, E) and dlast_state (B, E, N). `scratch` holds at least
// SelectiveScanBackwardScratchBytes(s, sizeof(T)) bytes (may be null when that is 0) and must stay
// allocated until the enqueued work finishes. deterministic = false sums dB/dC with float atomics
// (faster, run-to-run bit differences); the ops always use the deterministic default.
const char* LaunchSelectiveScanBackward(const SelectiveScanShape& s, const SelectiveScanInputs<float>& in,
                                        const float* dy, const float* dlast_state,
                                        const SelectiveScanGradients<float>& grads, void* scratch,
                                        size_t scratch_bytes, void* stream, bool deterministic = true);
const char* LaunchSelectiveScanBackward(const SelectiveScanShape& s, const SelectiveScanInputs<double>& in,
                                        const double* dy, const double* dlast_state,
                                        const SelectiveScanGradients<double>& grads, void* scratch,
                                        size_t scratch_bytes, void* stream, bool deterministic = true);

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_SELECTIVE_SCAN_SELECTIVE_SCAN_KERNELS_H_
