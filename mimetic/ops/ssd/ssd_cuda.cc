// CUDA backend of the SSD ops: the CudaKernelFns below, registered at static
// initialisation, calling the launchers of ssd.cu (ssd_kernels.h) on the op's stream. Each call
// allocates its device scratch (chunk-boundary states, CB blocks, per-position partial sums; see
// ssd.cu) with core::Storage::Allocate and releases it on return.

#include <cstddef>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/op.h"
#include "mimetic/core/status.h"
#include "mimetic/core/tensor.h"
#include "mimetic/ops/cuda/cuda_glue.h"
#include "mimetic/ops/ssd/ssd.h"
#include "mimetic/ops/ssd/ssd_kernels.h"

namespace mimetic::ops {
namespace {

using core::DType;

SsdKernelDims ToKernelDims(const SsdDims& d) {
  SsdKernelDims k;
  k.batch = d.batch;
  k.length = d.length;
  k.heads = d.heads;
  k.head_dim = d.head_dim;
  k.groups = d.groups;
  k.state = d.state;
  k.chunk_size = d.chunk_size;
  return k;
}

// Device pointer of a CUDA tensor (Tensor::data<T>() is for host tensors only).

absl::Status CheckDtype(DType dtype, const char* what) {
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": dtype ", core::DTypeName(dtype), " is not supported (f32 or f64)"));
  }
  return absl::OkStatus();
}

// Device scratch of `bytes` bytes, alive until the returned Storage is released.
absl::StatusOr<std::shared_ptr<core::Storage>> Workspace(size_t bytes) {
  return core::Storage::Allocate(bytes, core::Device::kCuda);
}

// Device pointers of dtype `dtype` (f32 or f64), layouts as in ssd.h:
//   x (B, L, H, P), dt (B, L, H), a/d/dt_bias (H), bm/cm (B, L, G, N) -> y (B, L, H, P), last_state (B, H, P,
//   N).
absl::Status LaunchSsdForward(const SsdDims& dims, core::DType dtype, const void* x, const void* dt,
                              const void* a, const void* bm, const void* cm, const void* d,
                              const void* dt_bias, void* y, void* last_state, void* stream) {
  RETURN_IF_ERROR(CheckDtype(dtype, "ssd"));
  const SsdKernelDims kd = ToKernelDims(dims);
  const bool f64 = dtype == DType::kF64;
  ASSIGN_OR_RETURN(std::shared_ptr<core::Storage> ws,
                   Workspace(SsdForwardWorkspaceBytes(kd, f64 ? sizeof(double) : sizeof(float))));
  const char* error;
  if (f64) {
    using T = double;
    error = LaunchSsdForwardF64(
        kd, static_cast<const T*>(x), static_cast<const T*>(dt), static_cast<const T*>(a),
        static_cast<const T*>(bm), static_cast<const T*>(cm), static_cast<const T*>(d),
        static_cast<const T*>(dt_bias), static_cast<T*>(y), static_cast<T*>(last_state), ws->data(), stream);
  } else {
    using T = float;
    error = LaunchSsdForwardF32(
        kd, static_cast<const T*>(x), static_cast<const T*>(dt), static_cast<const T*>(a),
        static_cast<const T*>(bm), static_cast<const T*>(cm), static_cast<const T*>(d),
        static_cast<const T*>(dt_bias), static_cast<T*>(y), static_cast<T*>(last_state), ws->data(), stream);
  }
  return cuda::LaunchStatus("ssd", error);
}

// dy (B, L, H, P), dlast_state (B, H, P, N) -> dx, ddt, da, dbm, dcm, dd, ddt_bias (the inputs' layouts).
// dA, dD, ddt_bias and dB/dC (summed over the heads of a group) must be reduced deterministically
// (fixed partition, no floating-point atomics), as on the CPU.
absl::Status LaunchSsdBackward(const SsdDims& dims, core::DType dtype, const void* x, const void* dt,
                               const void* a, const void* bm, const void* cm, const void* d,
                               const void* dt_bias, const void* dy, const void* dlast_state, void* dx,
                               void* ddt, void* da, void* dbm, void* dcm, void* dd, void* ddt_bias,
                               void* stream) {
  RETURN_IF_ERROR(CheckDtype(dtype, "ssd_backward"));
  const SsdKernelDims kd = ToKernelDims(dims);
  const bool f64 = dtype == DType::kF64;
  ASSIGN_OR_RETURN(std::shared_ptr<core::Storage> ws,
                   Workspace(SsdBackwardWorkspaceBytes(kd, f64 ? sizeof(double) : sizeof(float))));
  const char* error;
  if (f64) {
    using T = double;
    error = LaunchSsdBackwardF64(
        kd, static_cast<const T*>(x), static_cast<const T*>(dt), static_cast<const T*>(a),
        static_cast<const T*>(bm), static_cast<const T*>(cm), static_cast<const T*>(d),
        static_cast<const T*>(dt_bias), static_cast<const T*>(dy), static_cast<const T*>(dlast_state),
        static_cast<T*>(dx), static_cast<T*>(ddt), static_cast<T*>(da), static_cast<T*>(dbm),
        static_cast<T*>(dcm), static_cast<T*>(dd), static_cast<T*>(ddt_bias), ws->data(), stream);
  } else {
    using T = float;
    error = LaunchSsdBackwardF32(
        kd, static_cast<const T*>(x), static_cast<const T*>(dt), static_cast<const T*>(a),
        static_cast<const T*>(bm), static_cast<const T*>(cm), static_cast<const T*>(d),
        static_cast<const T*>(dt_bias), static_cast<const T*>(dy), static_cast<const T*>(dlast_state),
        static_cast<T*>(dx), static_cast<T*>(ddt), static_cast<T*>(da), static_cast<T*>(dbm),
        static_cast<T*>(dcm), static_cast<T*>(dd), static_cast<T*>(ddt_bias), ws->data(), stream);
  }
  return cuda::LaunchStatus("ssd_backward", error);
}

// The core::CudaKernelFn for SsdOp: downcasts `op` to SsdOp for chunk_size, reads the dims with
// GetSsdDims(in, chunk_size) and calls LaunchSsdForward on ctx.cuda_stream.
absl::Status SsdCuda(const core::Op& op, const core::ExecContext& ctx, absl::Span<const core::Tensor> in,
                     absl::Span<const core::Tensor> out) {
  const auto& ssd = static_cast<const SsdOp&>(op);
  const SsdDims d = GetSsdDims(in, ssd.chunk_size());
  return LaunchSsdForward(d, in[0].dtype(), cuda::DevicePtr(in[0]), cuda::DevicePtr(in[1]),
                          cuda::DevicePtr(in[2]), cuda::DevicePtr(in[3]), cuda::DevicePtr(in[4]),
                          cuda::DevicePtr(in[5]), cuda::DevicePtr(in[6]), cuda::DevicePtr(out[0]),
                          cuda::DevicePtr(out[1]), ctx.cuda_stream);
}

// The core::CudaKernelFn for SsdBackwardOp (inputs x, dt, A, Bm, Cm, D, dt_bias, dy, dlast_state;
// outputs dx, ddt, dA, dB, dC, dD, ddt_bias).
absl::Status SsdBackwardCuda(const core::Op& op, const core::ExecContext& ctx,
                             absl::Span<const core::Tensor> in, absl::Span<const core::Tensor> out) {
  const auto& ssd = static_cast<const SsdBackwardOp&>(op);
  const SsdDims d = GetSsdDims(in, ssd.chunk_size());
  return LaunchSsdBackward(d, in[0].dtype(), cuda::DevicePtr(in[0]), cuda::DevicePtr(in[1]),
                           cuda::DevicePtr(in[2]), cuda::DevicePtr(in[3]), cuda::DevicePtr(in[4]),
                           cuda::DevicePtr(in[5]), cuda::DevicePtr(in[6]), cuda::DevicePtr(in[7]),
                           cuda::DevicePtr(in[8]), cuda::DevicePtr(out[0]), cuda::DevicePtr(out[1]),
                           cuda::DevicePtr(out[2]), cuda::DevicePtr(out[3]), cuda::DevicePtr(out[4]),
                           cuda::DevicePtr(out[5]), cuda::DevicePtr(out[6]), ctx.cuda_stream);
}

[[maybe_unused]] const bool registered = [] {
  core::RegisterCudaKernel("ssd", &SsdCuda);
  core::RegisterCudaKernel("ssd_backward", &SsdBackwardCuda);
  return true;
}();

}  // namespace

}  // namespace mimetic::ops
