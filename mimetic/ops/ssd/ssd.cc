// SSD: shape inference, the reference (sequential recurrence) forward and backward, and the VJP.
// The fast chunked CPU kernels live in ssd_cpu.cc.
#include "mimetic/ops/ssd/ssd.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/xt_view.h"
#include "mimetic/ops/softplus.h"
#include "xtensor/xtensor.hpp"
#include "xtensor/xview.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;
using core::XtViewOrDie;

constexpr int kNumForwardInputs = 7;
const char* const kInputNames[kNumForwardInputs] = {"x", "dt", "A", "Bm", "Cm", "D", "dt_bias"};

// Checks the 7 forward inputs; returns the forward output metadata {y, last_state}.
absl::StatusOr<std::vector<TensorMeta>> InferForward(absl::Span<const TensorMeta> in, int64_t chunk_size) {
  if (in.size() < kNumForwardInputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected 7 inputs (x, dt, A, Bm, Cm, D, dt_bias), got ", in.size()));
  }
  if (chunk_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("chunk_size must be >= 1, got ", chunk_size));
  }
  const DType dtype = in[0].dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return absl::InvalidArgumentError(
        absl::StrCat("x has dtype ", core::DTypeName(dtype), "; expected f32 or f64"));
  }
  for (int i = 1; i < kNumForwardInputs; ++i) {
    if (in[i].dtype != dtype) {
      return absl::InvalidArgumentError(absl::StrCat(kInputNames[i], " has dtype ",
                                                     core::DTypeName(in[i].dtype), "; expected x's dtype ",
                                                     core::DTypeName(dtype)));
    }
  }
  const TensorMeta& x = in[0];
  if (x.shape.size() != 4) {
    return absl::InvalidArgumentError(
        absl::StrCat("x must be (B, L, H, P), got rank ", x.shape.size(), " shape ", ShapeString(x.shape)));
  }
  const int64_t b = x.shape[0], l = x.shape[1], h = x.shape[2], p = x.shape[3];
  if (h < 1 || p < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("x ", ShapeString(x.shape), " must have H >= 1 and P >= 1"));
  }
  if (in[1].shape != core::Shape{b, l, h}) {
    return absl::InvalidArgumentError(absl::StrCat("dt has shape ", ShapeString(in[1].shape),
                                                   "; expected (B, L, H) = ", ShapeString({b, l, h})));
  }
  for (int i : {2, 5, 6}) {
    if (in[i].shape != core::Shape{h}) {
      return absl::InvalidArgumentError(absl::StrCat(kInputNames[i], " has shape ", ShapeString(in[i].shape),
                                                     "; expected (H) = ", ShapeString({h})));
    }
  }
  const TensorMeta& bm = in[3];
  if (bm.shape.size() != 4 || bm.shape[0] != b || bm.shape[1] != l) {
    return absl::InvalidArgumentError(absl::StrCat("Bm has shape ", ShapeString(bm.shape),
                                                   "; expected (B, L, G, N) with B = ", b, ", L = ", l));
  }
  const int64_t g = bm.shape[2], n = bm.shape[3];
  if (g < 1 || n < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Bm ", ShapeString(bm.shape), " must have G >= 1 and N >= 1"));
  }
  if (h % g != 0) {
    return absl::InvalidArgumentError(absl::StrCat("H = ", h, " heads (x ", ShapeString(x.shape),
                                                   ") is not divisible by G = ", g, " groups (Bm ",
                                                   ShapeString(bm.shape), "); expected H % G == 0"));
  }
  if (in[4].shape != bm.shape) {
    return absl::InvalidArgumentError(absl::StrCat("Cm has shape ", ShapeString(in[4].shape),
                                                   "; expected Bm's shape ", ShapeString(bm.shape)));
  }
  return std::vector<TensorMeta>{TensorMeta{{b, l, h, p}, dtype, x.device},
                                 TensorMeta{{b, h, p, n}, dtype, x.device}};
}

// The op's seven inputs as named views, in the op's order; the references bind them by name.
template <typename T>
struct SsdInputs {
  explicit SsdInputs(absl::Span<const Tensor> in)
      : x(XtViewOrDie<const T, 4>(in[0])),
        dt(XtViewOrDie<const T, 3>(in[1])),
        a(XtViewOrDie<const T, 1>(in[2])),
        bm(XtViewOrDie<const T, 4>(in[3])),
        cm(XtViewOrDie<const T, 4>(in[4])),
        dskip(XtViewOrDie<const T, 1>(in[5])),
        dt_bias(XtViewOrDie<const T, 1>(in[6])) {}
  XtView<const T, 4> x;        // (B, L, H, P)
  XtView<const T, 3> dt;       // (B, L, H)
  XtView<const T, 1> a;        // (H)
  XtView<const T, 4> bm;       // (B, L, G, N)
  XtView<const T, 4> cm;       // (B, L, G, N)
  XtView<const T, 1> dskip;    // (H)
  XtView<const T, 1> dt_bias;  // (H)
};

// Reference forward: the recurrence step by step, state s (P x N) per (batch, head), with
// Δ[t] = softplus(dt[t] + dt_bias):
//   s = exp(Δ[t] A) s + Δ[t] x[t] ⊗ B[t],   y[t] = s C[t] + D x[t],   last_state = s after t = L-1.
template <typename T>
void ReferenceForward(const SsdDims& d, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const auto& [x, dt, a, bm, cm, dskip, dt_bias] = SsdInputs<T>(in);
  XtView<T, 4> y = XtViewOrDie<T, 4>(out[0]);     // (B, L, H, P)
  XtView<T, 4> last = XtViewOrDie<T, 4>(out[1]);  // (B, H, P, N)
  const int64_t L = d.length, H = d.heads, P = d.head_dim, N = d.state;
  xt::xtensor<T, 2> s = xt::zeros<T>({P, N});  // (P, N): the state of one (batch, head)
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      const int64_t g = h / d.heads_per_group();
      s.fill(T(0));
      for (int64_t t = 0; t < L; ++t) {
        const T delta = Softplus<T>(dt(b, t, h) + dt_bias(h));
        const T decay = std::exp(delta * a(h));
        for (int64_t p = 0; p < P; ++p) {
          T acc = 0;
          for (int64_t n = 0; n < N; ++n) {
            s(p, n) = decay * s(p, n) + delta * x(b, t, h, p) * bm(b, t, g, n);
            acc += s(p, n) * cm(b, t, g, n);
          }
          y(b, t, h, p) = acc + dskip(h) * x(b, t, h, p);
        }
      }
      xt::view(last, b, h) = s;
    }
  }
}

// The states of one (batch b, head h), recomputed as ReferenceForward does: states(t + 1) = state[t]
// after step t, states(0) = 0.
template <typename T>
void ReferenceStates(const SsdDims& d, absl::Span<const Tensor> in, int64_t b, int64_t h,
                     xt::xtensor<T, 3>& states) {
  const auto& [x, dt, a, bm, cm, dskip, dt_bias] = SsdInputs<T>(in);
  const int64_t g = h / d.heads_per_group();
  xt::view(states, 0).fill(T(0));
  for (int64_t t = 0; t < d.length; ++t) {
    const T delta = Softplus<T>(dt(b, t, h) + dt_bias(h));
    const T decay = std::exp(delta * a(h));
    for (int64_t p = 0; p < d.head_dim; ++p) {
      for (int64_t n = 0; n < d.state; ++n) {
        states(t + 1, p, n) = decay * states(t, p, n) + delta * x(b, t, h, p) * bm(b, t, g, n);
      }
    }
  }
}

// Reference backward: reruns the recurrence keeping every state of one (batch, head), then walks
// back in time with ds[t] = dy[t] C[t]ᵀ + exp(Δ[t+1] A) ds[t+1] (ds[L-1] starts at dlast_state):
//   dx[t]  = D dy[t] + Δ[t] ds[t] B[t],          dB[t] += Δ[t] ds[t]ᵀ x[t],   dC[t] += state[t]ᵀ dy[t]
//   dΔ[t]  = <ds[t], x[t] ⊗ B[t] + A exp(Δ[t] A) state[t-1]>,   dA += <ds[t], Δ[t] exp(Δ[t] A) state[t-1]>
//   ddt[t] = dΔ[t] softplus'(dt[t] + dt_bias),   ddt_bias = Σ ddt,   dD = Σ <dy[t], x[t]>
template <typename T>
void ReferenceBackward(const SsdDims& d, absl::Span<const Tensor> in, absl::Span<const Tensor> out) {
  const auto& [x, dt, a, bm, cm, dskip, dt_bias] = SsdInputs<T>(in);
  const XtView<const T, 4> dy = XtViewOrDie<const T, 4>(in[7]);     // (B, L, H, P)
  const XtView<const T, 4> dlast = XtViewOrDie<const T, 4>(in[8]);  // (B, H, P, N)
  XtView<T, 4> dx = XtViewOrDie<T, 4>(out[0]);                      // (B, L, H, P)
  XtView<T, 3> ddt = XtViewOrDie<T, 3>(out[1]);                     // (B, L, H)
  XtView<T, 1> da = XtViewOrDie<T, 1>(out[2]);                      // (H)
  XtView<T, 4> db = XtViewOrDie<T, 4>(out[3]);                      // (B, L, G, N)
  XtView<T, 4> dc = XtViewOrDie<T, 4>(out[4]);                      // (B, L, G, N)
  XtView<T, 1> dd = XtViewOrDie<T, 1>(out[5]);                      // (H)
  XtView<T, 1> ddt_bias = XtViewOrDie<T, 1>(out[6]);                // (H)
  const int64_t L = d.length, P = d.head_dim, N = d.state;
  da.fill(T(0));
  db.fill(T(0));
  dc.fill(T(0));
  dd.fill(T(0));
  ddt_bias.fill(T(0));
  xt::xtensor<T, 3> states = xt::zeros<T>({L + 1, P, N});  // (L + 1, P, N): states(t + 1) = state[t]
  xt::xtensor<T, 2> ds = xt::zeros<T>({P, N});             // (P, N): dL/dstate[t]
  for (int64_t b = 0; b < d.batch; ++b) {
    for (int64_t h = 0; h < d.heads; ++h) {
      const int64_t g = h / d.heads_per_group();
      ReferenceStates<T>(d, in, b, h, states);
      ds = xt::view(dlast, b, h);
      T next_decay = 0;  // exp(Δ[t+1] A); the dlast_state term already sits in ds
      for (int64_t t = L - 1; t >= 0; --t) {
        const T z = dt(b, t, h) + dt_bias(h);
        const T delta = Softplus<T>(z);
        const T decay = std::exp(delta * a(h));
        T ddelta = 0, ddecay = 0;
        for (int64_t p = 0; p < P; ++p) {
          T dxp = 0;
          for (int64_t n = 0; n < N; ++n) {
            T& v = ds(p, n);
            if (t < L - 1) v *= next_decay;
            v += dy(b, t, h, p) * cm(b, t, g, n);
            dc(b, t, g, n) += states(t + 1, p, n) * dy(b, t, h, p);
            dxp += v * bm(b, t, g, n);
            db(b, t, g, n) += delta * v * x(b, t, h, p);
            ddelta += v * x(b, t, h, p) * bm(b, t, g, n);
            ddecay += v * states(t, p, n);
          }
          dx(b, t, h, p) = dskip(h) * dy(b, t, h, p) + delta * dxp;
          dd(h) += dy(b, t, h, p) * x(b, t, h, p);
        }
        ddelta += ddecay * decay * a(h);
        da(h) += ddecay * decay * delta;
        const T dz = ddelta * SoftplusGrad<T>(z);
        ddt(b, t, h) = dz;
        ddt_bias(h) += dz;
        next_decay = decay;
      }
    }
  }
  // With L == 0 nothing above wrote dx or ddt (both empty), and dx/ddt elements are all written.
}

}  // namespace

SsdDims GetSsdDims(absl::Span<const Tensor> in, int64_t chunk_size) {
  SsdDims d;
  d.batch = in[0].dim(0);
  d.length = in[0].dim(1);
  d.heads = in[0].dim(2);
  d.head_dim = in[0].dim(3);
  d.groups = in[3].dim(2);
  d.state = in[3].dim(3);
  // A chunk longer than the sequence computes the same thing with larger scratch: clamp it.
  d.chunk_size = std::min(chunk_size, std::max<int64_t>(d.length, 1));
  return d;
}

std::string SsdOp::AttrString() const { return absl::StrCat("chunk_size=", chunk_size_); }
std::string SsdBackwardOp::AttrString() const { return absl::StrCat("chunk_size=", chunk_size_); }

absl::StatusOr<std::vector<TensorMeta>> SsdOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != kNumForwardInputs) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected 7 inputs (x, dt, A, Bm, Cm, D, dt_bias), got ", in.size()));
  }
  return InferForward(in, chunk_size_);
}

absl::StatusOr<std::vector<TensorMeta>> SsdBackwardOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != kNumForwardInputs + 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected 9 inputs (x, dt, A, Bm, Cm, D, dt_bias, dy, dlast_state), got ", in.size()));
  }
  ASSIGN_OR_RETURN(std::vector<TensorMeta> fwd, InferForward(in, chunk_size_));
  if (in[7] != fwd[0]) {
    return absl::InvalidArgumentError(
        absl::StrCat("dy is ", in[7].DebugString(), "; expected y's metadata ", fwd[0].DebugString()));
  }
  if (in[8] != fwd[1]) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dlast_state is ", in[8].DebugString(), "; expected last_state's metadata ", fwd[1].DebugString()));
  }
  return std::vector<TensorMeta>(in.begin(), in.begin() + kNumForwardInputs);
}

absl::Status SsdOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const SsdDims d = GetSsdDims(in, chunk_size_);
  if (in[0].dtype() == DType::kF64) {
    ReferenceForward<double>(d, in, out);
  } else {
    ReferenceForward<float>(d, in, out);
  }
  return absl::OkStatus();
}

absl::Status SsdBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                             absl::Span<const Tensor> out) const {
  const SsdDims d = GetSsdDims(in, chunk_size_);
  if (in[0].dtype() == DType::kF64) {
    ReferenceBackward<double>(d, in, out);
  } else {
    ReferenceBackward<float>(d, in, out);
  }
  return absl::OkStatus();
}

std::vector<Tensor> SsdOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                               absl::Span<const Tensor> out_grads) const {
  SsdGrads g =
      SsdBackward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], out_grads[0], out_grads[1], chunk_size_);
  return {g.dx, g.ddt, g.dA, g.dB, g.dC, g.dD, g.ddt_bias};
}

SsdResult Ssd(const Tensor& x, const Tensor& dt, const Tensor& A, const Tensor& Bm, const Tensor& Cm,
              const Tensor& D, const Tensor& dt_bias, int64_t chunk_size) {
  std::vector<Tensor> out = core::Call(std::make_shared<SsdOp>(chunk_size), {x, dt, A, Bm, Cm, D, dt_bias});
  return SsdResult{out[0], out[1]};
}

SsdGrads SsdBackward(const Tensor& x, const Tensor& dt, const Tensor& A, const Tensor& Bm, const Tensor& Cm,
                     const Tensor& D, const Tensor& dt_bias, const Tensor& dy, const Tensor& dlast_state,
                     int64_t chunk_size) {
  Tensor dlast = dlast_state;
  if (dlast.absent() && x.ok() && Bm.ok() && x.rank() == 4 && Bm.rank() == 4) {
    dlast = core::Fill(TensorMeta{{x.dim(0), x.dim(2), x.dim(3), Bm.dim(3)}, x.dtype(), x.device()}, 0.0);
  }
  std::vector<Tensor> out =
      core::Call(std::make_shared<SsdBackwardOp>(chunk_size), {x, dt, A, Bm, Cm, D, dt_bias, dy, dlast});
  return SsdGrads{out[0], out[1], out[2], out[3], out[4], out[5], out[6]};
}

}  // namespace mimetic::ops
