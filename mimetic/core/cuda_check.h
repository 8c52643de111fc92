// CUDA runtime error handling: turns a cudaError_t into an absl::Status at library boundaries, or
// aborts with file and line for internal invariants. Host code only; nvcc can compile it too, so a
// .cu file's host launcher may use it (list it in the cuda_library's cu_hdrs).
//
//   absl::Status CopyToDevice(const float* host, float* device, size_t n) {
//     CUDA_RETURN_IF_ERROR(cudaMemcpy(device, host, n * sizeof(float), cudaMemcpyHostToDevice));
//     return absl::OkStatus();
//   }
//   MIMETIC_CUDA_CHECK(cudaStreamSynchronize(stream));  // a failure here is a bug: abort
#ifndef MIMETIC_CORE_CUDA_CHECK_H_
#define MIMETIC_CORE_CUDA_CHECK_H_

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/status/status.h"

namespace mimetic::core::internal {

// "file:line: expr: cudaErrorName (message)".
inline std::string CudaErrorMessage(cudaError_t error, const char* expr, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " + cudaGetErrorName(error) +
         " (" + cudaGetErrorString(error) + ")";
}

[[noreturn]] inline void CudaCheckFailure(cudaError_t error, const char* expr, const char* file, int line) {
  std::fprintf(stderr, "%s\n", CudaErrorMessage(error, expr, file, line).c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace mimetic::core::internal

// Returns absl::InternalError("file:line: expr: cudaErrorX (message)") from the enclosing function
// when the CUDA runtime call `expr` does not return cudaSuccess.
#define CUDA_RETURN_IF_ERROR(expr)                                                                      \
  do {                                                                                                  \
    const cudaError_t mimetic_cuda_error_ = (expr);                                                     \
    if (mimetic_cuda_error_ != cudaSuccess) {                                                           \
      return ::absl::InternalError(                                                                     \
          ::mimetic::core::internal::CudaErrorMessage(mimetic_cuda_error_, #expr, __FILE__, __LINE__)); \
    }                                                                                                   \
  } while (false)

// Aborts with "file:line: expr: cudaErrorX (message)" when `expr` does not return cudaSuccess.
#define MIMETIC_CUDA_CHECK(expr)                                                                   \
  do {                                                                                             \
    const cudaError_t mimetic_cuda_error_ = (expr);                                                \
    if (mimetic_cuda_error_ != cudaSuccess) {                                                      \
      ::mimetic::core::internal::CudaCheckFailure(mimetic_cuda_error_, #expr, __FILE__, __LINE__); \
    }                                                                                              \
  } while (false)

#endif  // MIMETIC_CORE_CUDA_CHECK_H_
