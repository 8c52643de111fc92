// A CUDA smoke test's host API: proves nvcc-compiled objects link into a Bazel cc_test and, where a
// device exists, that a kernel runs. Host-only header: no CUDA types, so plain C++ code includes it.
//
//   absl::StatusOr<int> count = CudaDeviceCount();
//   if (count.ok() && *count > 0) RETURN_IF_ERROR(Saxpy(2.0f, x, y));
#ifndef MIMETIC_THIRD_PARTY_TESTS_CUDA_SMOKE_H_
#define MIMETIC_THIRD_PARTY_TESTS_CUDA_SMOKE_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mimetic::third_party_tests {

// The number of visible CUDA devices, or the runtime's error (no driver, no device) as a Status.
absl::StatusOr<int> CudaDeviceCount();

// y <- a * x + y on device 0 (copies in, runs a kernel, copies back). x and y must have equal sizes.
absl::Status Saxpy(float a, const std::vector<float>& x, std::vector<float>& y);

}  // namespace mimetic::third_party_tests

#endif  // MIMETIC_THIRD_PARTY_TESTS_CUDA_SMOKE_H_
