// Causal depthwise conv1d: shape inference, the reference kernels (plain loops accumulating in
// double) and the VJP. The fast CPU kernels are in conv1d_cpu.cc.
#include "mimetic/ops/conv1d/conv1d.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/ops/elementwise/silu.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::ShapeString;
using core::TensorMeta;

absl::Status CheckFloat(const TensorMeta& m, const char* name, const TensorMeta& x) {
  if (m.dtype != x.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(name, " has dtype ", core::DTypeName(m.dtype),
                                                   " but x has ", core::DTypeName(x.dtype),
                                                   "; expected one float dtype for all inputs"));
  }
  return absl::OkStatus();
}

// x: (B, L, C) f32|f64; weight: (C, K), K >= 1, x's dtype.
absl::Status CheckXAndWeight(const TensorMeta& x, const TensorMeta& w) {
  if (x.dtype != DType::kF32 && x.dtype != DType::kF64) {
    return absl::InvalidArgumentError(
        absl::StrCat("x has dtype ", core::DTypeName(x.dtype), "; expected f32 or f64"));
  }
  if (x.shape.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("x has shape ", ShapeString(x.shape), "; expected rank 3 (B, L, C)"));
  }
  const int64_t c = x.shape[2];
  if (w.shape.size() != 2 || w.shape[0] != c || w.shape[1] < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("weight has shape ", ShapeString(w.shape), "; expected (C, K) = (", c,
                     ", K) with K >= 1, C the last dimension of x ", ShapeString(x.shape)));
  }
  return CheckFloat(w, "weight", x);
}

// ---- Reference ----

template <typename T>
void ConvRef(const T* x, const T* w, const T* bias, T* out, int64_t nb, int64_t l, int64_t c, int64_t k) {
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t t = 0; t < l; ++t) {
      for (int64_t ch = 0; ch < c; ++ch) {
        double acc = bias[ch];
        for (int64_t j = 0; j < k; ++j) {
          const int64_t s = t - (k - 1) + j;
          if (s >= 0) acc += double(w[ch * k + j]) * x[(b * l + s) * c + ch];
        }
        out[(b * l + t) * c + ch] = static_cast<T>(acc);
      }
    }
  }
}

// dx[b,s,c] = sum_j w[c,j] dout[b, s+(K-1)-j, c] (inside the sequence);
// dw[c,j] = sum_{b,t} dout[b,t,c] x[b, t-(K-1)+j, c];  dbias[c] = sum_{b,t} dout[b,t,c].
template <typename T>
void ConvBackwardRef(const T* x, const T* w, const T* dout, T* dx, T* dw, T* db, int64_t nb, int64_t l,
                     int64_t c, int64_t k) {
  std::vector<double> dw_acc(c * k, 0.0), db_acc(c, 0.0);
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t t = 0; t < l; ++t) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const double g = dout[(b * l + t) * c + ch];
        db_acc[ch] += g;
        double acc = 0;
        for (int64_t j = 0; j < k; ++j) {
          const int64_t s = t - (k - 1) + j;
          if (s >= 0) dw_acc[ch * k + j] += g * x[(b * l + s) * c + ch];
          const int64_t u = t + (k - 1) - j;
          if (u < l) acc += double(w[ch * k + j]) * dout[(b * l + u) * c + ch];
        }
        dx[(b * l + t) * c + ch] = static_cast<T>(acc);
      }
    }
  }
  for (int64_t i = 0; i < c * k; ++i) dw[i] = static_cast<T>(dw_acc[i]);
  for (int64_t i = 0; i < c; ++i) db[i] = static_cast<T>(db_acc[i]);
}

template <typename T>
void ForwardRef(bool silu, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t n = x.numel();
  T* conv = out[silu ? 1 : 0].mutable_data<T>();
  ConvRef<T>(x.data<T>(), in[1].data<T>(), in[2].data<T>(), conv, x.dim(0), x.dim(1), x.dim(2), in[1].dim(1));
  if (silu) {
    T* act = out[0].mutable_data<T>();
    for (int64_t i = 0; i < n; ++i) act[i] = silu::Reference(conv[i]);
  }
}

template <typename T>
void BackwardRef(bool silu, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const Tensor& x = in[0];
  const int64_t n = x.numel();
  const T* dout = in[silu ? 3 : 2].data<T>();
  std::vector<T> g;  // with silu: dout · SiLU'(conv), the cotangent of the conv
  if (silu) {
    const T* conv = in[2].data<T>();
    g.resize(n);
    for (int64_t i = 0; i < n; ++i) g[i] = dout[i] * silu::ReferenceGrad(conv[i]);
    dout = g.data();
  }
  ConvBackwardRef<T>(x.data<T>(), in[1].data<T>(), dout, out[0].mutable_data<T>(), out[1].mutable_data<T>(),
                     out[2].mutable_data<T>(), x.dim(0), x.dim(1), x.dim(2), in[1].dim(1));
}

}  // namespace

absl::StatusOr<std::vector<TensorMeta>> CausalConv1dOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 3) return absl::InvalidArgumentError(absl::StrCat("expected 3 inputs; got ", in.size()));
  RETURN_IF_ERROR(CheckXAndWeight(in[0], in[1]));
  const int64_t c = in[0].shape[2];
  if (in[2].shape != core::Shape{c}) {
    return absl::InvalidArgumentError(absl::StrCat("bias has shape ", ShapeString(in[2].shape),
                                                   "; expected (", c, ") to match the last dimension of x ",
                                                   ShapeString(in[0].shape)));
  }
  RETURN_IF_ERROR(CheckFloat(in[2], "bias", in[0]));
  if (silu_) return std::vector<TensorMeta>{in[0], in[0]};
  return std::vector<TensorMeta>{in[0]};
}

absl::Status CausalConv1dOp::ComputeReference(absl::Span<const Tensor> in,
                                              absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ForwardRef<double>(silu_, in, out);
  } else {
    ForwardRef<float>(silu_, in, out);
  }
  return absl::OkStatus();
}

std::vector<Tensor> CausalConv1dOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                                        absl::Span<const Tensor> out_grads) const {
  // Output 1 (the conv) only feeds this backward: CausalConv1dSilu returns output 0 alone.
  if (silu_) return CausalConv1dSiluBackward(in[0], in[1], out[1], out_grads[0]);
  return CausalConv1dBackward(in[0], in[1], out_grads[0]);
}

absl::StatusOr<std::vector<TensorMeta>> CausalConv1dBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  const size_t want = silu_ ? 4 : 3;
  if (in.size() != want) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", want, " inputs (x, weight, ",
                                                   silu_ ? "conv, " : "", "dout); got ", in.size()));
  }
  RETURN_IF_ERROR(CheckXAndWeight(in[0], in[1]));
  TensorMeta bias = in[0];
  bias.shape = {in[0].shape[2]};
  if (silu_ && in[2] != in[0]) {
    return absl::InvalidArgumentError(absl::StrCat("conv is ", in[2].DebugString(), "; expected ",
                                                   in[0].DebugString(), " (the same as x)"));
  }
  const TensorMeta& dout = in[want - 1];
  if (dout != in[0]) {
    return absl::InvalidArgumentError(
        absl::StrCat("dout is ", dout.DebugString(), "; expected ", in[0].DebugString(), " (the same as x)"));
  }
  return std::vector<TensorMeta>{in[0], in[1], bias};
}

absl::Status CausalConv1dBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                      absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    BackwardRef<double>(silu_, in, out);
  } else {
    BackwardRef<float>(silu_, in, out);
  }
  return absl::OkStatus();
}

Tensor CausalConv1d(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return core::Call(std::make_shared<CausalConv1dOp>(), {x, weight, bias})[0];
}

std::vector<Tensor> CausalConv1dBackward(const Tensor& x, const Tensor& weight, const Tensor& dout) {
  return core::Call(std::make_shared<CausalConv1dBackwardOp>(), {x, weight, dout});
}

Tensor CausalConv1dSilu(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return core::Call(std::make_shared<CausalConv1dOp>(/*silu=*/true), {x, weight, bias})[0];
}

std::vector<Tensor> CausalConv1dSiluBackward(const Tensor& x, const Tensor& weight, const Tensor& conv,
                                             const Tensor& dout) {
  return core::Call(std::make_shared<CausalConv1dBackwardOp>(/*silu=*/true), {x, weight, conv, dout});
}

}  // namespace mimetic::ops
