// CUDA SSD forward (SsdOp): kernels 1-4 (RecomputeStates) and 5 (ChunkScan) of ssd_device.cuh, and
// the workspace sizes of both directions. The algorithm and the kernel list: ssd_device.cuh.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "mimetic/ops/ssd/ssd_device.cuh"
#include "mimetic/ops/ssd/ssd_kernels.h"

namespace mimetic::ops {
namespace {

template <typename T>
const char* Forward(const SsdKernelDims& kd, const T* x, const T* dt, const T* a, const T* bm, const T* cm,
                    const T* dskip, const T* dt_bias, T* y, T* last_state, void* workspace,
                    void* stream_ptr) {
  const Dims d = MakeDims(kd);
  const cudaStream_t stream = static_cast<cudaStream_t>(stream_ptr);
  Carver<T> carver(workspace);
  const ForwardScratch<T> s(d, carver);
  if (const char* e = RecomputeStates<T>(d, x, dt, a, bm, cm, dt_bias, s, last_state, stream)) return e;
  SSD_LAUNCH(ChunkScanKernel<T>, d.B * d.nc * d.H * d.ntq * d.ntp, stream, d, x, cm, dskip,
             static_cast<const T*>(s.delta), static_cast<const T*>(s.acum), static_cast<const T*>(s.eacum),
             static_cast<const T*>(s.cb), static_cast<const T*>(s.states), y);
  return nullptr;
}

#undef SSD_LAUNCH

}  // namespace

size_t SsdForwardWorkspaceBytes(const SsdKernelDims& dims, int elem_bytes) {
  return elem_bytes == 8 ? ForwardBytes<double>(dims) : ForwardBytes<float>(dims);
}

size_t SsdBackwardWorkspaceBytes(const SsdKernelDims& dims, int elem_bytes) {
  return elem_bytes == 8 ? BackwardBytes<double>(dims) : BackwardBytes<float>(dims);
}

const char* LaunchSsdForwardF32(const SsdKernelDims& dims, const float* x, const float* dt, const float* a,
                                const float* bm, const float* cm, const float* dskip, const float* dt_bias,
                                float* y, float* last_state, void* workspace, void* stream) {
  return Forward<float>(dims, x, dt, a, bm, cm, dskip, dt_bias, y, last_state, workspace, stream);
}

const char* LaunchSsdForwardF64(const SsdKernelDims& dims, const double* x, const double* dt, const double* a,
                                const double* bm, const double* cm, const double* dskip,
                                const double* dt_bias, double* y, double* last_state, void* workspace,
                                void* stream) {
  return Forward<double>(dims, x, dt, a, bm, cm, dskip, dt_bias, y, last_state, workspace, stream);
}

}  // namespace mimetic::ops
