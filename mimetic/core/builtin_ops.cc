#include "mimetic/core/builtin_ops.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace mimetic::core {
namespace {

template <typename T>
void FillTyped(const Tensor& out, double value) {
  T* p = out.mutable_data<T>();
  std::fill(p, p + out.numel(), static_cast<T>(value));
}

template <typename T>
void AddTyped(const Tensor& a, const Tensor& b, const Tensor& out) {
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = out.mutable_data<T>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}

// Below this many elements a parallel region costs more than the sum.
constexpr int64_t kParallelAccumulate = 1 << 15;

// The same sums over OpenMP threads: each element is one addition, so the bits never depend on the
// thread count.
template <typename T>
void AddTypedParallel(const Tensor& a, const Tensor& b, const Tensor& out) {
  const T* __restrict x = a.data<T>();
  const T* __restrict y = b.data<T>();
  T* __restrict z = out.mutable_data<T>();
  const int64_t n = out.numel();
#pragma omp parallel for simd schedule(static) if (n >= kParallelAccumulate)
  for (int64_t i = 0; i < n; ++i) z[i] = x[i] + y[i];
}

}  // namespace

std::string FillOp::AttrString() const {
  return absl::StrCat("meta=", meta_.DebugString(), " value=", value_);
}

absl::StatusOr<std::vector<TensorMeta>> FillOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (!in.empty()) return absl::InvalidArgumentError("expected no inputs");
  for (int64_t d : meta_.shape) {
    if (d < 0) return absl::InvalidArgumentError("negative dimension in the requested shape");
  }
  return std::vector<TensorMeta>{meta_};
}

absl::Status FillOp::ComputeReference(absl::Span<const Tensor>, absl::Span<const Tensor> out) const {
  switch (meta_.dtype) {
    case DType::kF32:
      FillTyped<float>(out[0], value_);
      break;
    case DType::kF64:
      FillTyped<double>(out[0], value_);
      break;
    case DType::kI32:
      FillTyped<int32_t>(out[0], value_);
      break;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<TensorMeta>> AccumulateOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 2 || in[0] != in[1]) {
    return absl::InvalidArgumentError("expected two inputs of identical shape, dtype and device");
  }
  return std::vector<TensorMeta>{in[0]};
}

absl::Status AccumulateOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  switch (in[0].dtype()) {
    case DType::kF32:
      AddTyped<float>(in[0], in[1], out[0]);
      break;
    case DType::kF64:
      AddTyped<double>(in[0], in[1], out[0]);
      break;
    case DType::kI32:
      AddTyped<int32_t>(in[0], in[1], out[0]);
      break;
  }
  return absl::OkStatus();
}

absl::Status AccumulateOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  switch (in[0].dtype()) {
    case DType::kF32:
      AddTypedParallel<float>(in[0], in[1], out[0]);
      return absl::OkStatus();
    case DType::kF64:
      AddTypedParallel<double>(in[0], in[1], out[0]);
      return absl::OkStatus();
    default:
      return ComputeReference(in, out);
  }
}

std::vector<Tensor> AccumulateOp::Vjp(absl::Span<const Tensor>, absl::Span<const Tensor>,
                                      absl::Span<const Tensor> out_grads) const {
  return {out_grads[0], out_grads[0]};
}

Tensor Fill(const TensorMeta& meta, double value) {
  return Call(std::make_shared<FillOp>(meta, value), {})[0];
}

Tensor Accumulate(const Tensor& a, const Tensor& b) {
  return Call(std::make_shared<AccumulateOp>(), {a, b})[0];
}

}  // namespace mimetic::core
