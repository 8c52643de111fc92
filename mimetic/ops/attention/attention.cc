// Causal softmax / linear attention: shape inference, VJPs, the public functions and the reference
// implementations (plain loops accumulating in double; the oracle for every other backend).
// The fast CPU path is in attention_cpu.cc.
#include "mimetic/ops/attention/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "absl/strings/str_cat.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::ShapeString;
using core::TensorMeta;

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

// ---- Reference implementation, one (b, h) head at a time.

// Element (b, t, h, p) of a (B, L, H, P) tensor.
inline int64_t Index(const AttentionDims& d, int64_t b, int64_t t, int64_t h, int64_t P, int64_t p) {
  return ((b * d.length + t) * d.heads + h) * P + p;
}

// The head's causal weights w[t * L + s]: softmax_s(scale q_t·k_s) or scale q_t·k_s for s <= t, 0 above.
template <typename T>
std::vector<double> ReferenceWeights(AttentionKind kind, double scale, const AttentionDims& d, const T* q,
                                     const T* k, int64_t b, int64_t h) {
  const int64_t L = d.length, P = d.key_dim;
  std::vector<double> w(L * L, 0.0);
  for (int64_t t = 0; t < L; ++t) {
    double* row = &w[t * L];
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t s = 0; s <= t; ++s) {
      double dot = 0;
      for (int64_t p = 0; p < P; ++p)
        dot += double(q[Index(d, b, t, h, P, p)]) * double(k[Index(d, b, s, h, P, p)]);
      row[s] = scale * dot;
      max = std::max(max, row[s]);
    }
    if (kind == AttentionKind::kSoftmax) {
      double total = 0;
      for (int64_t s = 0; s <= t; ++s) total += (row[s] = std::exp(row[s] - max));
      for (int64_t s = 0; s <= t; ++s) row[s] /= total;
    }
  }
  return w;
}

// d loss / d (q_t·k_s) from dw = d loss / d w (only s <= t is read): the softmax Jacobian
// w ∘ (dw - rowsum(w ∘ dw)) or the identity, times scale.
std::vector<double> ReferenceScoreGrad(AttentionKind kind, double scale, int64_t L,
                                       const std::vector<double>& w, const std::vector<double>& dw) {
  std::vector<double> ds(L * L, 0.0);
  for (int64_t t = 0; t < L; ++t) {
    double dot = 0;
    if (kind == AttentionKind::kSoftmax) {
      for (int64_t s = 0; s <= t; ++s) dot += w[t * L + s] * dw[t * L + s];
    }
    for (int64_t s = 0; s <= t; ++s) {
      ds[t * L + s] =
          scale * (kind == AttentionKind::kSoftmax ? w[t * L + s] * (dw[t * L + s] - dot) : dw[t * L + s]);
    }
  }
  return ds;
}

// dq_t = sum_{s<=t} ds[t,s] k_s and dk_s = sum_{t>=s} ds[t,s] q_t for one head.
template <typename T>
void ReferenceQueryKeyGrads(const AttentionDims& d, const std::vector<double>& ds, const T* q, const T* k,
                            int64_t b, int64_t h, T* dq, T* dk) {
  const int64_t L = d.length, P = d.key_dim;
  for (int64_t t = 0; t < L; ++t) {
    for (int64_t p = 0; p < P; ++p) {
      double gq = 0, gk = 0;
      for (int64_t s = 0; s <= t; ++s) gq += ds[t * L + s] * double(k[Index(d, b, s, h, P, p)]);
      for (int64_t u = t; u < L; ++u) gk += ds[u * L + t] * double(q[Index(d, b, u, h, P, p)]);
      dq[Index(d, b, t, h, P, p)] = static_cast<T>(gq);
      dk[Index(d, b, t, h, P, p)] = static_cast<T>(gk);
    }
  }
}

template <typename T>
void ReferenceForward(AttentionKind kind, double scale, const AttentionDims& d, absl::Span<const Tensor> in,
                      const Tensor& out) {
  const T *q = in[0].data<T>(), *k = in[1].data<T>(), *v = in[2].data<T>();
  T* o = out.mutable_data<T>();
  const int64_t L = d.length, P = d.value_dim;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const std::vector<double> w = ReferenceWeights(kind, scale, d, q, k, b, h);
      for (int64_t t = 0; t < L; ++t) {
        for (int64_t p = 0; p < P; ++p) {
          double acc = 0;
          for (int64_t s = 0; s <= t; ++s) acc += w[t * L + s] * double(v[Index(d, b, s, h, P, p)]);
          o[Index(d, b, t, h, P, p)] = static_cast<T>(acc);
        }
      }
    }
  }
}

template <typename T>
void ReferenceBackward(AttentionKind kind, double scale, const AttentionDims& d, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const T *q = in[0].data<T>(), *k = in[1].data<T>(), *v = in[2].data<T>(), *dout = in[3].data<T>();
  T *dq = out[0].mutable_data<T>(), *dk = out[1].mutable_data<T>(), *dv = out[2].mutable_data<T>();
  const int64_t L = d.length, P = d.value_dim;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const std::vector<double> w = ReferenceWeights(kind, scale, d, q, k, b, h);
      std::vector<double> dw(L * L, 0.0);  // dw[t,s] = dout_t · v_s
      for (int64_t t = 0; t < L; ++t) {
        for (int64_t s = 0; s <= t; ++s) {
          double dot = 0;
          for (int64_t p = 0; p < P; ++p)
            dot += double(dout[Index(d, b, t, h, P, p)]) * double(v[Index(d, b, s, h, P, p)]);
          dw[t * L + s] = dot;
        }
      }
      for (int64_t s = 0; s < L; ++s) {  // dv_s = sum_{t>=s} w[t,s] dout_t
        for (int64_t p = 0; p < P; ++p) {
          double acc = 0;
          for (int64_t t = s; t < L; ++t) acc += w[t * L + s] * double(dout[Index(d, b, t, h, P, p)]);
          dv[Index(d, b, s, h, P, p)] = static_cast<T>(acc);
        }
      }
      ReferenceQueryKeyGrads(d, ReferenceScoreGrad(kind, scale, L, w, dw), q, k, b, h, dq, dk);
    }
  }
}

template <typename T>
void ReferenceWeightsForward(AttentionKind kind, double scale, const AttentionDims& d,
                             absl::Span<const Tensor> in, const Tensor& out) {
  const T *q = in[0].data<T>(), *k = in[1].data<T>();
  T* o = out.mutable_data<T>();
  const int64_t LL = d.length * d.length;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const std::vector<double> w = ReferenceWeights(kind, scale, d, q, k, b, h);
      T* dst = o + (b * d.heads + h) * LL;
      for (int64_t i = 0; i < LL; ++i) dst[i] = static_cast<T>(w[i]);
    }
  }
}

template <typename T>
void ReferenceWeightsBackward(AttentionKind kind, double scale, const AttentionDims& d,
                              absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const T *q = in[0].data<T>(), *k = in[1].data<T>(), *dweights = in[2].data<T>();
  T *dq = out[0].mutable_data<T>(), *dk = out[1].mutable_data<T>();
  const int64_t LL = d.length * d.length;
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const std::vector<double> w = ReferenceWeights(kind, scale, d, q, k, b, h);
      const T* src = dweights + (b * d.heads + h) * LL;
      const std::vector<double> dw(src, src + LL);
      ReferenceQueryKeyGrads(d, ReferenceScoreGrad(kind, scale, d.length, w, dw), q, k, b, h, dq, dk);
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
  const AttentionDims d = GetAttentionDims(in[0].meta(), &in[2].meta());
  if (in[0].dtype() == DType::kF64) {
    ReferenceForward<double>(kind(), scale(), d, in, out[0]);
  } else {
    ReferenceForward<float>(kind(), scale(), d, in, out[0]);
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
  const AttentionDims d = GetAttentionDims(in[0].meta(), &in[2].meta());
  if (in[0].dtype() == DType::kF64) {
    ReferenceBackward<double>(kind(), scale(), d, in, out);
  } else {
    ReferenceBackward<float>(kind(), scale(), d, in, out);
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
  const AttentionDims d = GetAttentionDims(in[0].meta(), nullptr);
  if (in[0].dtype() == DType::kF64) {
    ReferenceWeightsForward<double>(kind(), scale(), d, in, out[0]);
  } else {
    ReferenceWeightsForward<float>(kind(), scale(), d, in, out[0]);
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
  const AttentionDims d = GetAttentionDims(in[0].meta(), nullptr);
  if (in[0].dtype() == DType::kF64) {
    ReferenceWeightsBackward<double>(kind(), scale(), d, in, out);
  } else {
    ReferenceWeightsBackward<float>(kind(), scale(), d, in, out);
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
