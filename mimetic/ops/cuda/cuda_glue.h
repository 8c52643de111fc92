// Shared glue for the CUDA kernel entry points (*_cuda.cc): device pointers of tensors, the device
// guard and the launcher-error conversion. Host-only; needs no CUDA headers.
#ifndef MIMETIC_OPS_CUDA_CUDA_GLUE_H_
#define MIMETIC_OPS_CUDA_CUDA_GLUE_H_

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "mimetic/core/op.h"
#include "mimetic/core/tensor.h"

namespace mimetic::ops::cuda {

using core::Tensor;

// Device pointers (Tensor::data<T> checks for the CPU): In<T> read-only, Out<T> writable, and
// DevicePtr untyped for launchers taking void* (nullptr for a tensor without storage).
template <typename T>
inline const T* In(const Tensor& t) {
  return static_cast<const T*>(t.storage()->data());
}
template <typename T>
inline T* Out(const Tensor& t) {
  return static_cast<T*>(t.storage()->data());
}
inline void* DevicePtr(const Tensor& t) { return t.storage() ? t.storage()->data() : nullptr; }

// The dispatcher has validated shapes and dtypes with InferMeta; this guards the device only.
inline absl::Status CheckDevice(const core::Op& op, absl::Span<const Tensor> in,
                                absl::Span<const Tensor> out) {
  for (const Tensor& t : in) {
    if (t.device() != core::Device::kCuda) {
      return absl::InvalidArgumentError(
          absl::StrCat(op.name(), " CUDA kernel: input ", t.DebugString(), " is not on the GPU"));
    }
  }
  for (const Tensor& t : out) {
    if (t.device() != core::Device::kCuda) {
      return absl::InternalError(
          absl::StrCat(op.name(), " CUDA kernel: output ", t.DebugString(), " is not on the GPU"));
    }
  }
  return absl::OkStatus();
}

// A launcher's result (nullptr: launched; else the CUDA error's text) as a status naming the op.
inline absl::Status LaunchStatus(absl::string_view what, const char* error) {
  if (error == nullptr) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(what, " CUDA kernel: ", error));
}
inline absl::Status LaunchStatus(const core::Op& op, const char* error) {
  return LaunchStatus(op.name(), error);
}

}  // namespace mimetic::ops::cuda

#endif  // MIMETIC_OPS_CUDA_CUDA_GLUE_H_
