// Tensor: an immutable value with a shape, a dtype, a device and shared, 64-byte-aligned storage.
//
//   ASSIGN_OR_RETURN(Tensor x, Tensor::FromHost<float>({2, 3}, {1, 2, 3, 4, 5, 6}));
//   x.shape();                      // {2, 3}
//   ASSIGN_OR_RETURN(std::vector<float> v, x.ToVector<float>());
//
// A Tensor may also hold an error instead of a value: ops given bad input return such a tensor,
// every later op passes the error along without computing, and the boundaries (ValueAndGrad, Jit,
// ToVector, model Apply) turn it back into an absl::Status. Model code stays free of
// StatusOr plumbing, yet bad input ends in a Status naming the first op that failed.
//
// Copies are cheap (shared storage) and never alias writable memory: storage is written only by
// the dispatcher's kernels into buffers nobody else has seen yet (or, under Jit replay, into
// buffers the plan owns).
#ifndef MIMETIC_CORE_TENSOR_H_
#define MIMETIC_CORE_TENSOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "mimetic/core/status.h"

namespace mimetic::core {

enum class DType : uint8_t { kF32, kF64, kI32 };
enum class Device : uint8_t { kCpu, kCuda };

using Shape = std::vector<int64_t>;

size_t DTypeSize(DType dtype);
const char* DTypeName(DType dtype);
const char* DeviceName(Device device);
std::string ShapeString(const Shape& shape);  // "(2, 3)"
int64_t NumElements(const Shape& shape);

template <typename T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<float>() { return DType::kF32; }
template <>
constexpr DType DTypeOf<double>() { return DType::kF64; }
template <>
constexpr DType DTypeOf<int32_t>() { return DType::kI32; }

// What shape inference needs to know about a tensor.
struct TensorMeta {
  Shape shape;
  DType dtype = DType::kF32;
  Device device = Device::kCpu;

  int64_t numel() const { return NumElements(shape); }
  size_t bytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype); }
  bool operator==(const TensorMeta& other) const {
    return shape == other.shape && dtype == other.dtype && device == other.device;
  }
  bool operator!=(const TensorMeta& other) const { return !(*this == other); }
  std::string DebugString() const;  // "f32(2, 3)@cpu"
};

// A block of device memory. CPU storage is 64-byte aligned; CUDA storage comes from the allocator
// the CUDA backend registers (see SetCudaAllocator), so the CPU-only build has no CUDA dependency.
class Storage {
 public:
  static absl::StatusOr<std::shared_ptr<Storage>> Allocate(size_t bytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }

  // Process-wide number of Allocate calls so far; Jit's tests use it to show replay allocates nothing.
  static int64_t allocation_count();

 private:
  Storage(void* data, size_t bytes, Device device) : data_(data), bytes_(bytes), device_(device) {}
  void* data_;
  size_t bytes_;
  Device device_;
};

// Hooks the CUDA backend installs when it is linked in and a GPU is present.
struct CudaMemoryHooks {
  absl::StatusOr<void*> (*allocate)(size_t bytes) = nullptr;
  void (*free)(void* ptr) = nullptr;
  absl::Status (*copy)(void* dst, Device dst_device, const void* src, Device src_device,
                       size_t bytes) = nullptr;
};
void SetCudaMemoryHooks(const CudaMemoryHooks& hooks);
const CudaMemoryHooks& GetCudaMemoryHooks();

class Tensor {
 public:
  // An absent tensor: no value. Stands for an optional input that was not given (a gate, a bias),
  // a zero cotangent (dlast_state) and a Vjp's answer for a non-differentiable input. Tell it apart
  // with absent(), never by its status text. It is not ok(): used as a value, it fails with the
  // error "empty tensor" (FailedPrecondition), so a forgotten input still gives a clear error.
  Tensor();
  static Tensor Absent() { return Tensor(); }

  // Zero-filled tensor. Fails on a negative dimension or an unavailable device.
  static absl::StatusOr<Tensor> Zeros(const Shape& shape, DType dtype = DType::kF32,
                                      Device device = Device::kCpu);
  // Copies `values` (row-major) into a new CPU tensor; the count must match the shape.
  template <typename T>
  static absl::StatusOr<Tensor> FromHost(const Shape& shape, absl::Span<const T> values);
  template <typename T>
  static absl::StatusOr<Tensor> FromHost(const Shape& shape, std::initializer_list<T> values) {
    return FromHost<T>(shape, absl::Span<const T>(values.begin(), values.size()));
  }
  // A rank-0 tensor.
  template <typename T>
  static Tensor Scalar(T value);
  // A tensor that carries `status` instead of a value (must not be OK).
  static Tensor Error(absl::Status status);
  // Uninitialised storage with `meta`; for the dispatcher and kernels, which write every element.
  static absl::StatusOr<Tensor> Uninitialized(const TensorMeta& meta);
  // Wraps existing storage (must be large enough); for Jit's planned buffers and views.
  static Tensor Wrap(std::shared_ptr<Storage> storage, const TensorMeta& meta);

  bool ok() const { return error_ == nullptr; }
  // True only for a default-constructed (or Absent()) tensor and its copies; false for values and for
  // error tensors, even one whose message is "empty tensor".
  bool absent() const;
  absl::Status status() const;

  const TensorMeta& meta() const { return meta_; }
  const Shape& shape() const { return meta_.shape; }
  int rank() const { return static_cast<int>(meta_.shape.size()); }
  // Size of dimension `axis`; negative axes count from the end.
  int64_t dim(int axis) const;
  int64_t numel() const { return meta_.numel(); }
  DType dtype() const { return meta_.dtype; }
  Device device() const { return meta_.device; }
  size_t bytes() const { return meta_.bytes(); }
  // Identity of this value for tracing: copies share it, every newly made tensor gets a new one.
  uint64_t id() const { return id_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Read-only host pointer. Checks (internal invariant) CPU device and matching dtype.
  template <typename T>
  const T* data() const;
  // Writable pointer, for kernels filling outputs the dispatcher just allocated. Never use on a
  // tensor that has been handed to anyone else.
  template <typename T>
  T* mutable_data() const;

  // Copies the values to the host. Fails on an error tensor, a dtype other than T, or when read
  // inside a Jit trace (a value-dependent branch cannot be captured by the trace).
  template <typename T>
  absl::StatusOr<std::vector<T>> ToVector() const;
  // The single value of a one-element tensor.
  template <typename T>
  absl::StatusOr<T> Item() const;

  // A copy on `device` (the same tensor if already there).
  absl::StatusOr<Tensor> ToDevice(Device device) const;

  std::string DebugString() const;  // "f32(2, 3)@cpu" or "error: ..."

 private:
  TensorMeta meta_;
  std::shared_ptr<Storage> storage_;
  std::shared_ptr<const absl::Status> error_;
  uint64_t id_ = 0;
};

// Fresh identity for a newly made tensor value.
uint64_t NewTensorId();

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_TENSOR_H_
