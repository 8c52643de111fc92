// Causal depthwise conv1d: shape inference, the reference kernels (plain loops accumulating in
// double) and the VJP. The fast CPU kernels are in conv1d_cpu.cc.
#include "mimetic/ops/conv1d/conv1d.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/core/xt_view.h"
#include "mimetic/ops/elementwise/silu.h"
#include "xtensor/xbuilder.hpp"
#include "xtensor/xtensor.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;
using core::XtViewOrDie;

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

// out[b,t,c] = bias[c] + sum_j w[c,j] x[b, t-(K-1)+j, c] (taps inside the sequence).
template <typename T>
void ConvRef(const XtView<const T, 3>& x, const XtView<const T, 2>& w, const XtView<const T, 1>& bias,
             XtView<T, 3>& out) {
  const int64_t B = x.shape(0), L = x.shape(1), C = x.shape(2), K = w.shape(1);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      for (int64_t c = 0; c < C; ++c) {
        double acc = bias(c);
        for (int64_t j = 0; j < K; ++j) {
          const int64_t s = t - (K - 1) + j;
          if (s >= 0) acc += double(w(c, j)) * x(b, s, c);
        }
        out(b, t, c) = static_cast<T>(acc);
      }
    }
  }
}

// dx[b,s,c] = sum_j w[c,j] dout[b, s+(K-1)-j, c] (inside the sequence);
// dw[c,j] = sum_{b,t} dout[b,t,c] x[b, t-(K-1)+j, c];  dbias[c] = sum_{b,t} dout[b,t,c].
// Dout: a (B, L, C) view or array of T.
template <typename T, typename Dout>
void ConvBackwardRef(const XtView<const T, 3>& x, const XtView<const T, 2>& w, const Dout& dout,
                     XtView<T, 3>& dx, XtView<T, 2>& dw, XtView<T, 1>& db) {
  const int64_t B = x.shape(0), L = x.shape(1), C = x.shape(2), K = w.shape(1);
  xt::xtensor<double, 2> dw_acc = xt::zeros<double>({C, K});  // (C, K)
  xt::xtensor<double, 1> db_acc = xt::zeros<double>({C});     // (C)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      for (int64_t c = 0; c < C; ++c) {
        const double g = dout(b, t, c);
        db_acc(c) += g;
        double acc = 0;
        for (int64_t j = 0; j < K; ++j) {
          const int64_t s = t - (K - 1) + j;
          if (s >= 0) dw_acc(c, j) += g * x(b, s, c);
          const int64_t u = t + (K - 1) - j;
          if (u < L) acc += double(w(c, j)) * dout(b, u, c);
        }
        dx(b, t, c) = static_cast<T>(acc);
      }
    }
  }
  dw = xt::cast<T>(dw_acc);
  db = xt::cast<T>(db_acc);
}

// out: (conv) or, with silu, (SiLU(conv), conv).
template <typename T>
void ForwardRef(bool silu, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const XtView<const T, 3> x = XtViewOrDie<const T, 3>(in[0]);     // (B, L, C)
  const XtView<const T, 2> w = XtViewOrDie<const T, 2>(in[1]);     // (C, K)
  const XtView<const T, 1> bias = XtViewOrDie<const T, 1>(in[2]);  // (C)
  XtView<T, 3> conv = XtViewOrDie<T, 3>(out[silu ? 1 : 0]);        // (B, L, C)
  ConvRef<T>(x, w, bias, conv);
  if (!silu) return;
  XtView<T, 3> act = XtViewOrDie<T, 3>(out[0]);  // (B, L, C)
  const int64_t B = x.shape(0), L = x.shape(1), C = x.shape(2);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      for (int64_t c = 0; c < C; ++c) act(b, t, c) = silu::Reference(conv(b, t, c));
    }
  }
}

// in: (x, weight, dout), or (x, weight, conv, dout) with silu.
template <typename T>
void BackwardRef(bool silu, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const XtView<const T, 3> x = XtViewOrDie<const T, 3>(in[0]);                // (B, L, C)
  const XtView<const T, 2> w = XtViewOrDie<const T, 2>(in[1]);                // (C, K)
  const XtView<const T, 3> dout = XtViewOrDie<const T, 3>(in[silu ? 3 : 2]);  // (B, L, C)
  XtView<T, 3> dx = XtViewOrDie<T, 3>(out[0]);                                // (B, L, C)
  XtView<T, 2> dw = XtViewOrDie<T, 2>(out[1]);                                // (C, K)
  XtView<T, 1> db = XtViewOrDie<T, 1>(out[2]);                                // (C)
  if (!silu) return ConvBackwardRef<T>(x, w, dout, dx, dw, db);
  // The cotangent of the conv: g = dout · SiLU'(conv).
  const XtView<const T, 3> conv = XtViewOrDie<const T, 3>(in[2]);  // (B, L, C)
  xt::xtensor<T, 3> g = xt::empty<T>(x.shape());                   // (B, L, C)
  const int64_t B = x.shape(0), L = x.shape(1), C = x.shape(2);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      for (int64_t c = 0; c < C; ++c) g(b, t, c) = dout(b, t, c) * silu::ReferenceGrad(conv(b, t, c));
    }
  }
  ConvBackwardRef<T>(x, w, g, dx, dw, db);
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
