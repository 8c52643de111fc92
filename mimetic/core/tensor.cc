#include "mimetic/core/tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/trace.h"

namespace mimetic::core {
namespace {

std::atomic<int64_t> g_allocations{0};
std::atomic<uint64_t> g_next_id{1};
CudaMemoryHooks g_cuda_hooks;

constexpr size_t kAlignment = 64;

}  // namespace

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return 4;
    case DType::kF64:
      return 8;
    case DType::kI32:
      return 4;
  }
  return 0;
}

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kI32:
      return "i32";
  }
  return "?";
}

const char* DeviceName(Device device) { return device == Device::kCpu ? "cpu" : "cuda"; }

std::string ShapeString(const Shape& shape) { return absl::StrCat("(", absl::StrJoin(shape, ", "), ")"); }

int64_t NumElements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorMeta::DebugString() const {
  return absl::StrCat(DTypeName(dtype), ShapeString(shape), "@", DeviceName(device));
}

uint64_t NewTensorId() { return g_next_id.fetch_add(1, std::memory_order_relaxed); }

void SetCudaMemoryHooks(const CudaMemoryHooks& hooks) { g_cuda_hooks = hooks; }
const CudaMemoryHooks& GetCudaMemoryHooks() { return g_cuda_hooks; }

absl::StatusOr<std::shared_ptr<Storage>> Storage::Allocate(size_t bytes, Device device) {
  // Zero-byte tensors still get a distinct, valid pointer.
  const size_t padded = ((bytes + kAlignment - 1) / kAlignment) * kAlignment + kAlignment;
  void* data = nullptr;
  if (device == Device::kCpu) {
    data = std::aligned_alloc(kAlignment, padded);
    if (data == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("out of host memory allocating ", bytes, " bytes"));
    }
  } else {
    if (g_cuda_hooks.allocate == nullptr) {
      return absl::FailedPreconditionError(
          "a CUDA tensor was requested but no CUDA backend is available (not linked in, or no GPU "
          "found)");
    }
    ASSIGN_OR_RETURN(data, g_cuda_hooks.allocate(padded));
  }
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::shared_ptr<Storage>(new Storage(data, bytes, device));
}

Storage::~Storage() {
  if (device_ == Device::kCpu) {
    std::free(data_);
  } else if (g_cuda_hooks.free != nullptr) {
    g_cuda_hooks.free(data_);
  }
}

int64_t Storage::allocation_count() { return g_allocations.load(std::memory_order_relaxed); }

namespace {
// The error object of every absent tensor: one shared instance, so default construction stays
// allocation-free and absent() is a pointer comparison.
const std::shared_ptr<const absl::Status>& AbsentError() {
  static const auto* const kAbsent = new std::shared_ptr<const absl::Status>(
      std::make_shared<const absl::Status>(absl::FailedPreconditionError("empty tensor")));
  return *kAbsent;
}
}  // namespace

Tensor::Tensor() : error_(AbsentError()) {}

bool Tensor::absent() const { return error_ == AbsentError(); }

absl::StatusOr<Tensor> Tensor::Uninitialized(const TensorMeta& meta) {
  for (int64_t d : meta.shape) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("tensor shape ", ShapeString(meta.shape),
                                                     " has a negative dimension; expected sizes >= 0"));
    }
  }
  ASSIGN_OR_RETURN(std::shared_ptr<Storage> storage, Storage::Allocate(meta.bytes(), meta.device));
  return Wrap(std::move(storage), meta);
}

Tensor Tensor::Wrap(std::shared_ptr<Storage> storage, const TensorMeta& meta) {
  MIMETIC_CHECK(storage != nullptr && storage->bytes() >= meta.bytes() && storage->device() == meta.device)
      << "storage does not fit " << meta.DebugString();
  Tensor t;
  t.error_ = nullptr;
  t.meta_ = meta;
  t.storage_ = std::move(storage);
  t.id_ = NewTensorId();
  return t;
}

absl::StatusOr<Tensor> Tensor::Zeros(const Shape& shape, DType dtype, Device device) {
  ASSIGN_OR_RETURN(Tensor t, Uninitialized(TensorMeta{shape, dtype, device}));
  if (device == Device::kCpu) {
    std::memset(t.storage_->data(), 0, t.bytes());
  } else {
    std::vector<char> zeros(t.bytes(), 0);
    RETURN_IF_ERROR(g_cuda_hooks.copy(t.storage_->data(), Device::kCuda, zeros.data(), Device::kCpu, t.bytes()));
  }
  return t;
}

template <typename T>
absl::StatusOr<Tensor> Tensor::FromHost(const Shape& shape, absl::Span<const T> values) {
  ASSIGN_OR_RETURN(Tensor t, Uninitialized(TensorMeta{shape, DTypeOf<T>(), Device::kCpu}));
  if (static_cast<int64_t>(values.size()) != t.numel()) {
    return absl::InvalidArgumentError(absl::StrCat("Tensor::FromHost: shape ", ShapeString(shape), " needs ",
                                                   t.numel(), " values but got ", values.size()));
  }
  if (!values.empty()) std::memcpy(t.storage_->data(), values.data(), t.bytes());
  return t;
}

template <typename T>
Tensor Tensor::Scalar(T value) {
  return FromHost<T>({}, absl::Span<const T>(&value, 1)).value();
}

Tensor Tensor::Error(absl::Status status) {
  MIMETIC_CHECK(!status.ok()) << "Tensor::Error needs a non-OK status";
  Tensor t;
  t.error_ = std::make_shared<const absl::Status>(std::move(status));
  return t;
}

absl::Status Tensor::status() const { return error_ == nullptr ? absl::OkStatus() : *error_; }

int64_t Tensor::dim(int axis) const {
  const int r = rank();
  const int a = axis < 0 ? axis + r : axis;
  MIMETIC_CHECK(a >= 0 && a < r) << "axis " << axis << " out of range for shape " << ShapeString(shape());
  return meta_.shape[a];
}

template <typename T>
const T* Tensor::data() const {
  MIMETIC_CHECK(ok()) << status();
  MIMETIC_CHECK(device() == Device::kCpu) << "host pointer of a " << DebugString() << " tensor";
  MIMETIC_CHECK(dtype() == DTypeOf<T>()) << "data<" << DTypeName(DTypeOf<T>()) << "> of " << DebugString();
  return static_cast<const T*>(storage_->data());
}

template <typename T>
T* Tensor::mutable_data() const {
  MIMETIC_CHECK(ok()) << status();
  MIMETIC_CHECK(dtype() == DTypeOf<T>()) << "mutable_data<" << DTypeName(DTypeOf<T>()) << "> of " << DebugString();
  return static_cast<T*>(storage_->data());
}

template <typename T>
absl::StatusOr<std::vector<T>> Tensor::ToVector() const {
  RETURN_IF_ERROR(status());
  if (dtype() != DTypeOf<T>()) {
    return absl::InvalidArgumentError(absl::StrCat("ToVector<", DTypeName(DTypeOf<T>()), "> of a ",
                                                   DebugString(), " tensor; expected matching dtype"));
  }
  for (const Tracer* tracer : ActiveTracers()) {
    if (tracer->ForbidsHostRead(*this)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "reading the value of traced tensor ", DebugString(),
          " inside Jit: the traced function must not depend on tensor values (data-dependent control "
          "flow cannot be captured); pass such values as static arguments instead"));
    }
  }
  std::vector<T> out(numel());
  if (out.empty()) return out;
  if (device() == Device::kCpu) {
    std::memcpy(out.data(), storage_->data(), bytes());
  } else {
    RETURN_IF_ERROR(g_cuda_hooks.copy(out.data(), Device::kCpu, storage_->data(), Device::kCuda, bytes()));
  }
  return out;
}

template <typename T>
absl::StatusOr<T> Tensor::Item() const {
  if (ok() && numel() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Item() of a ", DebugString(), " tensor; expected exactly one element"));
  }
  ASSIGN_OR_RETURN(std::vector<T> v, ToVector<T>());
  return v[0];
}

absl::StatusOr<Tensor> Tensor::ToDevice(Device device) const {
  RETURN_IF_ERROR(status());
  if (device == this->device()) return *this;
  if (g_cuda_hooks.copy == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("copying a ", DebugString(), " tensor to ",
                                                      DeviceName(device), ": no CUDA backend is available"));
  }
  TensorMeta meta = meta_;
  meta.device = device;
  ASSIGN_OR_RETURN(Tensor t, Uninitialized(meta));
  RETURN_IF_ERROR(g_cuda_hooks.copy(t.storage_->data(), device, storage_->data(), this->device(), bytes()));
  return t;
}

std::string Tensor::DebugString() const {
  if (!ok()) return absl::StrCat("error: ", error_->message());
  return meta_.DebugString();
}

#define MIMETIC_INSTANTIATE_TENSOR(T)                                                          \
  template absl::StatusOr<Tensor> Tensor::FromHost<T>(const Shape&, absl::Span<const T>);     \
  template Tensor Tensor::Scalar<T>(T);                                                        \
  template const T* Tensor::data<T>() const;                                                   \
  template T* Tensor::mutable_data<T>() const;                                                 \
  template absl::StatusOr<std::vector<T>> Tensor::ToVector<T>() const;                        \
  template absl::StatusOr<T> Tensor::Item<T>() const;

MIMETIC_INSTANTIATE_TENSOR(float)
MIMETIC_INSTANTIATE_TENSOR(double)
MIMETIC_INSTANTIATE_TENSOR(int32_t)

// ---- trace stack (kept here so Tensor::ToVector can consult it without a dependency cycle) ----

namespace {
std::vector<Tracer*>& TracerStack() {
  thread_local std::vector<Tracer*> stack;
  return stack;
}
}  // namespace

const std::vector<Tracer*>& ActiveTracers() { return TracerStack(); }

TraceScope::TraceScope(Tracer* tracer) : tracer_(tracer) { TracerStack().push_back(tracer); }

TraceScope::~TraceScope() {
  MIMETIC_CHECK(!TracerStack().empty() && TracerStack().back() == tracer_) << "trace scopes must nest";
  TracerStack().pop_back();
}

PauseTracing::PauseTracing() { saved_.swap(TracerStack()); }
PauseTracing::~PauseTracing() { saved_.swap(TracerStack()); }

}  // namespace mimetic::core
