// Causal softmax / linear attention: shape inference, VJPs, the public functions and the reference
// implementations (plain loops accumulating in double; the oracle for every other backend).
// The fast CPU path is in attention_cpu.cc.
#include "mimetic/ops/attention/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"
#include "mimetic/core/xt_view.h"
#include "xtensor/xtensor.hpp"
#include "xtensor/xview.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;
using core::XtViewOrDie;

bool IsFloat(DType dtype) { return dtype == DType::kF32 || dtype == DType::kF64; }

// q and k: rank 4, identical shapes, a float dtype.
absl::Status CheckQueryKey(const TensorMeta& q, const TensorMeta& k) {
  if (q.shape.size() != 4) {
    return absl::InvalidArgumentError(absl::StrCat("expected q of rank 4 (B, L, H, Pk), got rank ",
                                                   q.shape.size(), " ", ShapeString(q.shape)));
  }
  if (k.shape != q.shape) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected q and k of identical shape (B, L, H, Pk), got q ", ShapeString(q.shape),
                     " and k ", ShapeString(k.shape)));
  }
  if (!IsFloat(q.dtype) || k.dtype != q.dtype) {
    return absl::InvalidArgumentError(absl::StrCat("expected q and k of one float dtype (f32 or f64), got ",
                                                   core::DTypeName(q.dtype), " and ",
                                                   core::DTypeName(k.dtype)));
  }
  return absl::OkStatus();
}

// A (B, L, H, *) tensor `name` matching q's B, L, H and dtype.
absl::Status CheckValueLike(const TensorMeta& q, const TensorMeta& x, const char* name) {
  if (x.shape.size() != 4 || x.shape[0] != q.shape[0] || x.shape[1] != q.shape[1] ||
      x.shape[2] != q.shape[2]) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", name, " of shape (B, L, H, Pv) = (", q.shape[0], ", ", q.shape[1], ", ",
                     q.shape[2], ", Pv) to match q ", ShapeString(q.shape), ", got ", ShapeString(x.shape)));
  }
  if (x.dtype != q.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", name, " of q's dtype ", core::DTypeName(q.dtype), ", got ", core::DTypeName(x.dtype)));
  }
  return absl::OkStatus();
}

absl::Status CheckScale(double scale) {
  if (!std::isfinite(scale))
    return absl::InvalidArgumentError(absl::StrCat("expected a finite scale, got ", scale));
  return absl::OkStatus();
}

// ---- Reference implementation, one (b, h) head at a time, on views of the (B, L, H, P) tensors.

// The head's causal weights w(t, s): softmax_s(scale q_t·k_s) or scale q_t·k_s for s <= t, 0 above.
template <typename T>
xt::xtensor<double, 2> ReferenceWeights(AttentionKind kind, double scale, const XtView<const T, 4>& q,
                                        const XtView<const T, 4>& k, int64_t b, int64_t h) {
  const int64_t L = q.shape(1), P = q.shape(3);
  xt::xtensor<double, 2> w = xt::zeros<double>({L, L});  // (L, L)
  for (int64_t t = 0; t < L; ++t) {
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t s = 0; s <= t; ++s) {
      double dot = 0;
      for (int64_t p = 0; p < P; ++p) dot += double(q(b, t, h, p)) * double(k(b, s, h, p));
      w(t, s) = scale * dot;
      max = std::max(max, w(t, s));
    }
    if (kind == AttentionKind::kSoftmax) {
      double total = 0;
      for (int64_t s = 0; s <= t; ++s) total += (w(t, s) = std::exp(w(t, s) - max));
      for (int64_t s = 0; s <= t; ++s) w(t, s) /= total;
    }
  }
  return w;
}

// d loss / d (q_t·k_s) from dw = d loss / d w (only s <= t is read): the softmax Jacobian
// w ∘ (dw - rowsum(w ∘ dw)) or the identity, times scale.
xt::xtensor<double, 2> ReferenceScoreGrad(AttentionKind kind, double scale, const xt::xtensor<double, 2>& w,
                                          const xt::xtensor<double, 2>& dw) {
  const int64_t L = w.shape(0);
  xt::xtensor<double, 2> ds = xt::zeros<double>({L, L});  // (L, L)
  for (int64_t t = 0; t < L; ++t) {
    double dot = 0;
    if (kind == AttentionKind::kSoftmax) {
      for (int64_t s = 0; s <= t; ++s) dot += w(t, s) * dw(t, s);
    }
    for (int64_t s = 0; s <= t; ++s) {
      ds(t, s) = scale * (kind == AttentionKind::kSoftmax ? w(t, s) * (dw(t, s) - dot) : dw(t, s));
    }
  }
  return ds;
}

// dq_t = sum_{s<=t} ds(t, s) k_s and dk_t = sum_{u>=t} ds(u, t) q_u for one head.
template <typename T>
void ReferenceQueryKeyGrads(const xt::xtensor<double, 2>& ds, const XtView<const T, 4>& q,
                            const XtView<const T, 4>& k, int64_t b, int64_t h, XtView<T, 4>& dq,
                            XtView<T, 4>& dk) {
  const int64_t L = q.shape(1), P = q.shape(3);
  for (int64_t t = 0; t < L; ++t) {
    for (int64_t p = 0; p < P; ++p) {
      double gq = 0, gk = 0;
      for (int64_t s = 0; s <= t; ++s) gq += ds(t, s) * double(k(b, s, h, p));
      for (int64_t u = t; u < L; ++u) gk += ds(u, t) * double(q(b, u, h, p));
      dq(b, t, h, p) = static_cast<T>(gq);
      dk(b, t, h, p) = static_cast<T>(gk);
    }
  }
}

// o_t = sum_{s<=t} w(t, s) v_s.
template <typename T>
void ReferenceForward(AttentionKind kind, double scale, absl::Span<const Tensor> in, const Tensor& out) {
  const XtView<const T, 4> q = XtViewOrDie<const T, 4>(in[0]);  // (B, L, H, Pk)
  const XtView<const T, 4> k = XtViewOrDie<const T, 4>(in[1]);  // (B, L, H, Pk)
  const XtView<const T, 4> v = XtViewOrDie<const T, 4>(in[2]);  // (B, L, H, Pv)
  XtView<T, 4> o = XtViewOrDie<T, 4>(out);                      // (B, L, H, Pv)
  const int64_t B = v.shape(0), L = v.shape(1), H = v.shape(2), P = v.shape(3);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const xt::xtensor<double, 2> w = ReferenceWeights<T>(kind, scale, q, k, b, h);  // (L, L)
      for (int64_t t = 0; t < L; ++t) {
        for (int64_t p = 0; p < P; ++p) {
          double acc = 0;
          for (int64_t s = 0; s <= t; ++s) acc += w(t, s) * double(v(b, s, h, p));
          o(b, t, h, p) = static_cast<T>(acc);
        }
      }
    }
  }
}

// dv_s = sum_{t>=s} w(t, s) dout_t; dq, dk through dw(t, s) = dout_t · v_s.
template <typename T>
void ReferenceBackward(AttentionKind kind, double scale, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const XtView<const T, 4> q = XtViewOrDie<const T, 4>(in[0]);     // (B, L, H, Pk)
  const XtView<const T, 4> k = XtViewOrDie<const T, 4>(in[1]);     // (B, L, H, Pk)
  const XtView<const T, 4> v = XtViewOrDie<const T, 4>(in[2]);     // (B, L, H, Pv)
  const XtView<const T, 4> dout = XtViewOrDie<const T, 4>(in[3]);  // (B, L, H, Pv)
  XtView<T, 4> dq = XtViewOrDie<T, 4>(out[0]);                     // (B, L, H, Pk)
  XtView<T, 4> dk = XtViewOrDie<T, 4>(out[1]);                     // (B, L, H, Pk)
  XtView<T, 4> dv = XtViewOrDie<T, 4>(out[2]);                     // (B, L, H, Pv)
  const int64_t B = v.shape(0), L = v.shape(1), H = v.shape(2), P = v.shape(3);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const xt::xtensor<double, 2> w = ReferenceWeights<T>(kind, scale, q, k, b, h);  // (L, L)
      xt::xtensor<double, 2> dw = xt::zeros<double>({L, L});                          // (L, L)
      for (int64_t t = 0; t < L; ++t) {
        for (int64_t s = 0; s <= t; ++s) {
          double dot = 0;
          for (int64_t p = 0; p < P; ++p) dot += double(dout(b, t, h, p)) * double(v(b, s, h, p));
          dw(t, s) = dot;
        }
      }
      for (int64_t s = 0; s < L; ++s) {
        for (int64_t p = 0; p < P; ++p) {
          double acc = 0;
          for (int64_t t = s; t < L; ++t) acc += w(t, s) * double(dout(b, t, h, p));
          dv(b, s, h, p) = static_cast<T>(acc);
        }
      }
      ReferenceQueryKeyGrads<T>(ReferenceScoreGrad(kind, scale, w, dw), q, k, b, h, dq, dk);
    }
  }
}

// The (B, H, L, L) weights, head by head.
template <typename T>
void ReferenceWeightsForward(AttentionKind kind, double scale, absl::Span<const Tensor> in,
                             const Tensor& out) {
  const XtView<const T, 4> q = XtViewOrDie<const T, 4>(in[0]);  // (B, L, H, Pk)
  const XtView<const T, 4> k = XtViewOrDie<const T, 4>(in[1]);  // (B, L, H, Pk)
  XtView<T, 4> weights = XtViewOrDie<T, 4>(out);                // (B, H, L, L)
  const int64_t B = q.shape(0), H = q.shape(2);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      xt::view(weights, b, h) = xt::cast<T>(ReferenceWeights<T>(kind, scale, q, k, b, h));
    }
  }
}

// dq, dk from the cotangent of the (B, H, L, L) weights.
template <typename T>
void ReferenceWeightsBackward(AttentionKind kind, double scale, absl::Span<const Tensor> in,
                              absl::Span<const Tensor> out) {
  const XtView<const T, 4> q = XtViewOrDie<const T, 4>(in[0]);         // (B, L, H, Pk)
  const XtView<const T, 4> k = XtViewOrDie<const T, 4>(in[1]);         // (B, L, H, Pk)
  const XtView<const T, 4> dweights = XtViewOrDie<const T, 4>(in[2]);  // (B, H, L, L)
  XtView<T, 4> dq = XtViewOrDie<T, 4>(out[0]);                         // (B, L, H, Pk)
  XtView<T, 4> dk = XtViewOrDie<T, 4>(out[1]);                         // (B, L, H, Pk)
  const int64_t B = q.shape(0), H = q.shape(2);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const xt::xtensor<double, 2> w = ReferenceWeights<T>(kind, scale, q, k, b, h);  // (L, L)
      const xt::xtensor<double, 2> dw = xt::cast<double>(xt::view(dweights, b, h));   // (L, L)
      ReferenceQueryKeyGrads<T>(ReferenceScoreGrad(kind, scale, w, dw), q, k, b, h, dq, dk);
    }
  }
}

const char* KindName(AttentionKind kind, const char* softmax_name, const char* linear_name) {
  return kind == AttentionKind::kSoftmax ? softmax_name : linear_name;
}

}  // namespace

AttentionDims GetAttentionDims(const TensorMeta& q, const TensorMeta* v) {
  AttentionDims d;
  d.batch = q.shape[0];
  d.length = q.shape[1];
  d.heads = q.shape[2];
  d.key_dim = q.shape[3];
  d.value_dim = v != nullptr ? v->shape[3] : 0;
  return d;
}

bool LinearAttentionUsesChunkedForm(const AttentionDims& d) {
  const int64_t L = d.length, C = kAttentionRowBlock, width = d.key_dim + d.value_dim;
  if (L <= C) return false;  // one block: the two forms are the same
  double quadratic = 0, chunked = 0;
  for (int64_t i0 = 0; i0 < L; i0 += C) {
    const int64_t n = std::min(L, i0 + C) - i0;
    quadratic += double(n) * double(i0 + n) * width;
    chunked += double(n) * double(n) * width;
  }
  const int64_t first = C, last = L - (L - 1) / C * C;
  chunked += 2.0 * double(L) * d.key_dim * d.value_dim - double(first + last) * d.key_dim * d.value_dim;
  return chunked < quadratic;
}

std::string CausalAttentionOpBase::AttrString() const { return absl::StrCat("scale=", scale_); }

// ---- CausalAttentionOp

const char* CausalAttentionOp::name() const {
  return KindName(kind(), "causal_softmax_attention", "causal_linear_attention");
}

absl::StatusOr<std::vector<TensorMeta>> CausalAttentionOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 3) return absl::InvalidArgumentError("expected 3 inputs (q, k, v)");
  RETURN_IF_ERROR(CheckScale(scale()));
  RETURN_IF_ERROR(CheckQueryKey(in[0], in[1]));
  RETURN_IF_ERROR(CheckValueLike(in[0], in[2], "v"));
  return std::vector<TensorMeta>{in[2]};
}

absl::Status CausalAttentionOp::ComputeReference(absl::Span<const Tensor> in,
                                                 absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceForward<double>(kind(), scale(), in, out[0]);
  } else {
    ReferenceForward<float>(kind(), scale(), in, out[0]);
  }
  return absl::OkStatus();
}

std::vector<Tensor> CausalAttentionOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                           absl::Span<const Tensor> out_grads) const {
  return core::Call(std::make_shared<CausalAttentionBackwardOp>(kind(), scale()),
                    {in[0], in[1], in[2], out_grads[0]});
}

// ---- CausalAttentionBackwardOp

const char* CausalAttentionBackwardOp::name() const {
  return KindName(kind(), "causal_softmax_attention_backward", "causal_linear_attention_backward");
}

absl::StatusOr<std::vector<TensorMeta>> CausalAttentionBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  if (in.size() != 4) return absl::InvalidArgumentError("expected 4 inputs (q, k, v, dout)");
  RETURN_IF_ERROR(CheckScale(scale()));
  RETURN_IF_ERROR(CheckQueryKey(in[0], in[1]));
  RETURN_IF_ERROR(CheckValueLike(in[0], in[2], "v"));
  if (in[3] != in[2]) {
    return absl::InvalidArgumentError(absl::StrCat("expected dout of v's shape ", ShapeString(in[2].shape),
                                                   " and dtype, got ", in[3].DebugString()));
  }
  return std::vector<TensorMeta>{in[0], in[1], in[2]};
}

absl::Status CausalAttentionBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                         absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceBackward<double>(kind(), scale(), in, out);
  } else {
    ReferenceBackward<float>(kind(), scale(), in, out);
  }
  return absl::OkStatus();
}

// ---- CausalAttentionWeightsOp

const char* CausalAttentionWeightsOp::name() const {
  return KindName(kind(), "causal_softmax_attention_weights", "causal_linear_attention_weights");
}

absl::StatusOr<std::vector<TensorMeta>> CausalAttentionWeightsOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  if (in.size() != 2) return absl::InvalidArgumentError("expected 2 inputs (q, k)");
  RETURN_IF_ERROR(CheckScale(scale()));
  RETURN_IF_ERROR(CheckQueryKey(in[0], in[1]));
  const core::Shape& s = in[0].shape;
  return std::vector<TensorMeta>{TensorMeta{{s[0], s[2], s[1], s[1]}, in[0].dtype, in[0].device}};
}

absl::Status CausalAttentionWeightsOp::ComputeReference(absl::Span<const Tensor> in,
                                                        absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceWeightsForward<double>(kind(), scale(), in, out[0]);
  } else {
    ReferenceWeightsForward<float>(kind(), scale(), in, out[0]);
  }
  return absl::OkStatus();
}

std::vector<Tensor> CausalAttentionWeightsOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                                  absl::Span<const Tensor> out_grads) const {
  return core::Call(std::make_shared<CausalAttentionWeightsBackwardOp>(kind(), scale()),
                    {in[0], in[1], out_grads[0]});
}

// ---- CausalAttentionWeightsBackwardOp

const char* CausalAttentionWeightsBackwardOp::name() const {
  return KindName(kind(), "causal_softmax_attention_weights_backward",
                  "causal_linear_attention_weights_backward");
}

absl::StatusOr<std::vector<TensorMeta>> CausalAttentionWeightsBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  if (in.size() != 3) return absl::InvalidArgumentError("expected 3 inputs (q, k, dweights)");
  RETURN_IF_ERROR(CheckScale(scale()));
  RETURN_IF_ERROR(CheckQueryKey(in[0], in[1]));
  const core::Shape& s = in[0].shape;
  const TensorMeta expected{{s[0], s[2], s[1], s[1]}, in[0].dtype, in[0].device};
  if (in[2] != expected) {
    return absl::InvalidArgumentError(absl::StrCat("expected dweights ", expected.DebugString(),
                                                   " (B, H, L, L), got ", in[2].DebugString()));
  }
  return std::vector<TensorMeta>{in[0], in[1]};
}

absl::Status CausalAttentionWeightsBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                                absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceWeightsBackward<double>(kind(), scale(), in, out);
  } else {
    ReferenceWeightsBackward<float>(kind(), scale(), in, out);
  }
  return absl::OkStatus();
}

// ---- Public functions

Tensor CausalSoftmaxAttention(const Tensor& q, const Tensor& k, const Tensor& v, double scale) {
  return core::Call(std::make_shared<CausalAttentionOp>(AttentionKind::kSoftmax, scale), {q, k, v})[0];
}

Tensor CausalSoftmaxAttentionWeights(const Tensor& q, const Tensor& k, double scale) {
  return core::Call(std::make_shared<CausalAttentionWeightsOp>(AttentionKind::kSoftmax, scale), {q, k})[0];
}

std::vector<Tensor> CausalSoftmaxAttentionBackward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                   const Tensor& dout, double scale) {
  return core::Call(std::make_shared<CausalAttentionBackwardOp>(AttentionKind::kSoftmax, scale),
                    {q, k, v, dout});
}

std::vector<Tensor> CausalSoftmaxAttentionWeightsBackward(const Tensor& q, const Tensor& k,
                                                          const Tensor& dweights, double scale) {
  return core::Call(std::make_shared<CausalAttentionWeightsBackwardOp>(AttentionKind::kSoftmax, scale),
                    {q, k, dweights});
}

Tensor CausalLinearAttention(const Tensor& q, const Tensor& k, const Tensor& v) {
  return core::Call(std::make_shared<CausalAttentionOp>(AttentionKind::kLinear, 1.0), {q, k, v})[0];
}

Tensor CausalLinearAttentionWeights(const Tensor& q, const Tensor& k) {
  return core::Call(std::make_shared<CausalAttentionWeightsOp>(AttentionKind::kLinear, 1.0), {q, k})[0];
}

std::vector<Tensor> CausalLinearAttentionBackward(const Tensor& q, const Tensor& k, const Tensor& v,
                                                  const Tensor& dout) {
  return core::Call(std::make_shared<CausalAttentionBackwardOp>(AttentionKind::kLinear, 1.0),
                    {q, k, v, dout});
}

std::vector<Tensor> CausalLinearAttentionWeightsBackward(const Tensor& q, const Tensor& k,
                                                         const Tensor& dweights) {
  return core::Call(std::make_shared<CausalAttentionWeightsBackwardOp>(AttentionKind::kLinear, 1.0),
                    {q, k, dweights});
}

}  // namespace mimetic::ops
