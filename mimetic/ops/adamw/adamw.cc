#include "mimetic/ops/adamw/adamw.h"

#include <cmath>

#include "absl/strings/str_cat.h"

namespace mimetic::ops {
namespace {

template <typename T>
void Update(const AdamWHyper& h, absl::Span<const Tensor> in, absl::Span<const Tensor> out, bool parallel) {
  const T* p = in[0].data<T>();
  const T* g = in[1].data<T>();
  const T* m = in[2].data<T>();
  const T* v = in[3].data<T>();
  const T* s = in[4].data<T>();
  T* po = out[0].mutable_data<T>();
  T* mo = out[1].mutable_data<T>();
  T* vo = out[2].mutable_data<T>();
  const T lr = s[0], bc1 = s[1], bc2 = s[2], scale = s[3];
  const T decay = T(1) - lr * T(h.weight_decay);
  const T b1 = T(h.beta1), b2 = T(h.beta2), eps = T(h.eps);
  const T step = lr / bc1;
  const T inv_sqrt_bc2 = T(1) / std::sqrt(bc2);
  const int64_t n = in[0].numel();
#pragma omp parallel for schedule(static) if (parallel && n > (1 << 15))
  for (int64_t i = 0; i < n; ++i) {
    const T gi = g[i] * scale;
    const T mi = b1 * m[i] + (T(1) - b1) * gi;
    const T vi = b2 * v[i] + (T(1) - b2) * gi * gi;
    mo[i] = mi;
    vo[i] = vi;
    po[i] = p[i] * decay - step * mi / (std::sqrt(vi) * inv_sqrt_bc2 + eps);
  }
}

}  // namespace

std::string AdamWOp::AttrString() const {
  return absl::StrCat("beta1=", hyper_.beta1, " beta2=", hyper_.beta2, " eps=", hyper_.eps,
                      " weight_decay=", hyper_.weight_decay);
}

absl::StatusOr<std::vector<core::TensorMeta>> AdamWOp::InferMeta(
    absl::Span<const core::TensorMeta> in) const {
  if (in.size() != 5) return absl::InvalidArgumentError("expected (param, grad, m, v, scalars)");
  for (int i = 1; i < 4; ++i) {
    if (in[i] != in[0]) {
      return absl::InvalidArgumentError(
          absl::StrCat("input ", i, " must match the parameter's shape and dtype"));
    }
  }
  if (in[0].dtype != core::DType::kF32 && in[0].dtype != core::DType::kF64) {
    return absl::InvalidArgumentError("expected f32 or f64 parameters");
  }
  if (in[4].shape != core::Shape{4} || in[4].dtype != in[0].dtype) {
    return absl::InvalidArgumentError(
        "scalars must be (4) [lr, bc1, bc2, grad_scale] of the parameter's dtype");
  }
  return std::vector<core::TensorMeta>{in[0], in[0], in[0]};
}

absl::Status AdamWOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  if (in[0].dtype() == core::DType::kF64) {
    Update<double>(hyper_, in, out, false);
  } else {
    Update<float>(hyper_, in, out, false);
  }
  return absl::OkStatus();
}

absl::Status AdamWOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  if (in[0].dtype() == core::DType::kF64) {
    Update<double>(hyper_, in, out, true);
  } else {
    Update<float>(hyper_, in, out, true);
  }
  return absl::OkStatus();
}

AdamWResult AdamWUpdate(const Tensor& param, const Tensor& grad, const Tensor& m, const Tensor& v,
                        const Tensor& scalars, const AdamWHyper& hyper) {
  std::vector<Tensor> out = core::Call(std::make_shared<AdamWOp>(hyper), {param, grad, m, v, scalars});
  return AdamWResult{out[0], out[1], out[2]};
}

}  // namespace mimetic::ops
