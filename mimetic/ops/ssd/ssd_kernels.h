// Host-callable launchers of the CUDA SSD kernels (ssd.cu). Plain C++: builtin types and pointers only,
// so that ssd.cu includes nothing from the project but this header, and ssd_cuda.cc needs no CUDA
// headers. Every pointer is a device pointer; layouts are those of ssd.h:
//   x (B, L, H, P), dt (B, L, H), a / dskip / dt_bias (H), bm / cm (B, L, G, N),
//   y (B, L, H, P), last_state (B, H, P, N); cotangents share their primal's layout.
//
//   SsdKernelDims d{batch, length, heads, head_dim, groups, state, chunk_size};
//   void* ws = ...;  // SsdForwardWorkspaceBytes(d, sizeof(float)) bytes of device memory
//   const char* error = LaunchSsdForwardF32(d, x, dt, a, bm, cm, dskip, dt_bias, y, last_state, ws, stream);
//   if (error != nullptr) ...;  // a static string (the CUDA error's description)
//
// Everything is enqueued on `stream` (a cudaStream_t); nothing synchronises. The workspace must stay
// allocated until the enqueued work has finished. Results are deterministic: every reduction runs in
// a fixed order (no floating-point atomics).
#ifndef MIMETIC_OPS_SSD_SSD_KERNELS_H_
#define MIMETIC_OPS_SSD_SSD_KERNELS_H_

#include <cstddef>
#include <cstdint>

namespace mimetic::ops {

// Sizes of a validated call (SsdDims of ssd.h without the project dependency). chunk_size is the
// clamped chunk length Q: 1 <= Q, and Q <= L when L >= 1.
struct SsdKernelDims {
  int64_t batch = 0;       // B
  int64_t length = 0;      // L
  int64_t heads = 0;       // H (>= 1)
  int64_t head_dim = 0;    // P (>= 1)
  int64_t groups = 0;      // G (>= 1, divides H)
  int64_t state = 0;       // N (>= 1)
  int64_t chunk_size = 0;  // Q (>= 1)
};

// Device scratch bytes each launcher needs, for elements of `elem_bytes` bytes (4: f32, 8: f64).
size_t SsdForwardWorkspaceBytes(const SsdKernelDims& dims, int elem_bytes);
size_t SsdBackwardWorkspaceBytes(const SsdKernelDims& dims, int elem_bytes);

// Forward: y and last_state. Returns nullptr on success, else a static error string.
const char* LaunchSsdForwardF32(const SsdKernelDims& dims, const float* x, const float* dt, const float* a,
                                const float* bm, const float* cm, const float* dskip, const float* dt_bias,
                                float* y, float* last_state, void* workspace, void* stream);
const char* LaunchSsdForwardF64(const SsdKernelDims& dims, const double* x, const double* dt, const double* a,
                                const double* bm, const double* cm, const double* dskip,
                                const double* dt_bias, double* y, double* last_state, void* workspace,
                                void* stream);

// Backward (SsdBackwardOp): from dy (B, L, H, P) and dlast_state (B, H, P, N), every cotangent
// dx, ddt, da, dbm, dcm, dd, ddt_bias. Returns nullptr on success, else a static error string.
const char* LaunchSsdBackwardF32(const SsdKernelDims& dims, const float* x, const float* dt, const float* a,
                                 const float* bm, const float* cm, const float* dskip, const float* dt_bias,
                                 const float* dy, const float* dlast_state, float* dx, float* ddt, float* da,
                                 float* dbm, float* dcm, float* dd, float* ddt_bias, void* workspace,
                                 void* stream);
const char* LaunchSsdBackwardF64(const SsdKernelDims& dims, const double* x, const double* dt,
                                 const double* a, const double* bm, const double* cm, const double* dskip,
                                 const double* dt_bias, const double* dy, const double* dlast_state,
                                 double* dx, double* ddt, double* da, double* dbm, double* dcm, double* dd,
                                 double* ddt_bias, void* workspace, void* stream);

}  // namespace mimetic::ops

#endif  // MIMETIC_OPS_SSD_SSD_KERNELS_H_
