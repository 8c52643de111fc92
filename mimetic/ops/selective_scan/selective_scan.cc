// Selective scan: shape inference, the public functions, the VJP rule and the reference
// implementations (plain loops straight from mamba_ssm: selective_scan_ref, selective_scan_bwd_kernel.cuh;
// the backward stores every state, as the oracle may). The fast CPU kernels live in selective_scan_cpu.cc.
#include "mimetic/ops/selective_scan/selective_scan.h"

#include <cmath>
#include <memory>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/xt_view.h"
#include "mimetic/ops/softplus.h"
#include "xtensor/xtensor.hpp"
#include "xtensor/xview.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;
using core::XtViewOrDie;

const char* const kForwardNames[] = {"u", "delta", "A", "Bm", "Cm", "D"};

std::vector<std::string> InputNames(const SelectiveScanAttrs& a) {
  std::vector<std::string> names(std::begin(kForwardNames), std::end(kForwardNames));
  if (a.has_z) names.push_back("z");
  if (a.has_delta_bias) names.push_back("delta_bias");
  return names;
}

absl::Status ExpectShape(const char* what, const TensorMeta& m, const Shape& expected, const char* dims,
                         const Shape& u_shape) {
  if (m.shape == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " is ", ShapeString(m.shape), "; expected ", dims, " = ", ShapeString(expected),
                   " (u is (B, L, E) = ", ShapeString(u_shape), ", A is (E, N))"));
}

// Checks the forward inputs in[0 .. attrs.num_forward_inputs()) and returns (B, L, E, N).
absl::StatusOr<std::vector<int64_t>> CheckForwardInputs(const SelectiveScanAttrs& a,
                                                        absl::Span<const TensorMeta> in, int extra,
                                                        const char* extra_names) {
  const std::vector<std::string> names = InputNames(a);
  const size_t expected = names.size() + extra;
  if (in.size() != expected) {
    return absl::InvalidArgumentError(absl::StrCat("got ", in.size(), " inputs; expected ", expected, " (",
                                                   absl::StrJoin(names, ", "), extra_names, ") for ",
                                                   a.ToString()));
  }
  if (a.chunk_size < 1) {
    return absl::InvalidArgumentError(absl::StrCat("chunk_size is ", a.chunk_size, "; expected >= 1"));
  }
  const DType dtype = in[0].dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64) {
    return absl::InvalidArgumentError(absl::StrCat("u is ", in[0].DebugString(), "; expected f32 or f64"));
  }
  for (size_t i = 1; i < in.size(); ++i) {
    if (in[i].dtype != dtype) {
      return absl::InvalidArgumentError(absl::StrCat("input ", i, " is ", in[i].DebugString(),
                                                     "; expected dtype ", core::DTypeName(dtype),
                                                     " like u (all inputs share one float dtype)"));
    }
  }
  if (in[0].shape.size() != 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("u is ", ShapeString(in[0].shape), "; expected rank 3 (B, L, E)"));
  }
  if (in[2].shape.size() != 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("A is ", ShapeString(in[2].shape), "; expected rank 2 (E, N)"));
  }
  const Shape& us = in[0].shape;
  const int64_t B = us[0], L = us[1], E = us[2], N = in[2].shape[1];
  RETURN_IF_ERROR(ExpectShape("delta", in[1], {B, L, E}, "(B, L, E)", us));
  RETURN_IF_ERROR(ExpectShape("A", in[2], {E, N}, "(E, N)", us));
  RETURN_IF_ERROR(ExpectShape("Bm", in[3], {B, L, N}, "(B, L, N)", us));
  RETURN_IF_ERROR(ExpectShape("Cm", in[4], {B, L, N}, "(B, L, N)", us));
  RETURN_IF_ERROR(ExpectShape("D", in[5], {E}, "(E)", us));
  if (a.has_z) RETURN_IF_ERROR(ExpectShape("z", in[a.z_index()], {B, L, E}, "(B, L, E)", us));
  if (a.has_delta_bias) {
    RETURN_IF_ERROR(ExpectShape("delta_bias", in[a.delta_bias_index()], {E}, "(E)", us));
  }
  return std::vector<int64_t>{B, L, E, N};
}

template <typename T>
T Sigmoid(T x) {
  return T(1) / (T(1) + std::exp(-x));
}

// The time step and d dt / d (delta + bias), as the CUDA kernels compute them (softplus.h).
template <typename T>
T TimeStep(T v, bool softplus) {
  return !softplus ? v : Softplus(v);
}
template <typename T>
T TimeStepGrad(T v, bool softplus) {
  return !softplus ? T(1) : SoftplusGrad(v);
}

// Named views of the forward inputs; z and delta_bias only when present.
template <typename T>
struct Inputs {
  XtView<const T, 3> u;                    // (B, L, E)
  XtView<const T, 3> delta;                // (B, L, E)
  XtView<const T, 2> A;                    // (E, N)
  XtView<const T, 3> Bm;                   // (B, L, N)
  XtView<const T, 3> Cm;                   // (B, L, N)
  XtView<const T, 1> D;                    // (E)
  std::optional<XtView<const T, 3>> z;     // (B, L, E)
  std::optional<XtView<const T, 1>> bias;  // (E)
  // dt at (b, t, d) before the softplus: delta + delta_bias.
  T Raw(int64_t b, int64_t t, int64_t d) const { return delta(b, t, d) + (bias ? (*bias)(d) : T(0)); }
};

template <typename T>
Inputs<T> MakeInputs(const SelectiveScanAttrs& a, absl::Span<const Tensor> in) {
  Inputs<T> v{XtViewOrDie<const T, 3>(in[0]),
              XtViewOrDie<const T, 3>(in[1]),
              XtViewOrDie<const T, 2>(in[2]),
              XtViewOrDie<const T, 3>(in[3]),
              XtViewOrDie<const T, 3>(in[4]),
              XtViewOrDie<const T, 1>(in[5]),
              std::nullopt,
              std::nullopt};
  if (a.has_z) v.z = XtViewOrDie<const T, 3>(in[a.z_index()]);
  if (a.has_delta_bias) v.bias = XtViewOrDie<const T, 1>(in[a.delta_bias_index()]);
  return v;
}

// h[t] = exp(Δ[t] A) h[t-1] + Δ[t] B[t] x[t] per channel d, y[t] = (C[t] h[t] + D x[t]) silu(z[t]).
template <typename T>
void ReferenceForward(const SelectiveScanAttrs& a, absl::Span<const Tensor> in,
                      absl::Span<const Tensor> out) {
  const Inputs<T> v = MakeInputs<T>(a, in);
  const int64_t B = v.u.shape(0), L = v.u.shape(1), E = v.u.shape(2), N = v.A.shape(1);
  XtView<T, 3> y = XtViewOrDie<T, 3>(out[0]);     // (B, L, E)
  XtView<T, 3> last = XtViewOrDie<T, 3>(out[1]);  // (B, E, N)
  xt::xtensor<T, 1> h = xt::zeros<T>({N});        // (N): the state of one (batch, channel)
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t d = 0; d < E; ++d) {
      h.fill(T(0));
      for (int64_t t = 0; t < L; ++t) {
        const T dt = TimeStep(v.Raw(b, t, d), a.delta_softplus);
        const T x = v.u(b, t, d);
        T acc = 0;
        for (int64_t n = 0; n < N; ++n) {
          h(n) = std::exp(dt * v.A(d, n)) * h(n) + dt * v.Bm(b, t, n) * x;
          acc += v.Cm(b, t, n) * h(n);
        }
        T out_v = acc + v.D(d) * x;
        if (v.z) {
          const T zz = (*v.z)(b, t, d);
          out_v *= zz * Sigmoid(zz);
        }
        y(b, t, d) = out_v;
      }
      xt::view(last, b, d) = h;
    }
  }
}

// The backward's scratch: every step's time step, state and decay, and the cotangents.
template <typename T>
struct Scratch {
  xt::xtensor<T, 3> dt;      // (B, L, E): Δ
  xt::xtensor<T, 4> h;       // (B, L, E, N): the state after each step
  xt::xtensor<T, 4> deltaA;  // (B, L, E, N): exp(Δ A)
  xt::xtensor<T, 4> g;       // (B, L, E, N): dL/dh
  xt::xtensor<T, 3> gy;      // (B, L, E): dL/d(y before the gate)
  xt::xtensor<T, 3> ypre;    // (B, L, E): y before the gate
};

// Spec §1.5, first half: the forward with all states h[b,t,d,n] stored, the gate and the adjoint scan.
template <typename T>
Scratch<T> ReferenceBackwardScan(const SelectiveScanAttrs& a, const Inputs<T>& v, absl::Span<const Tensor> in,
                                 absl::Span<const Tensor> out) {
  const int64_t B = v.u.shape(0), L = v.u.shape(1), E = v.u.shape(2), N = v.A.shape(1);
  const int nf = a.num_forward_inputs();
  const XtView<const T, 3> dy = XtViewOrDie<const T, 3>(in[nf]);         // (B, L, E)
  const XtView<const T, 3> dlast = XtViewOrDie<const T, 3>(in[nf + 1]);  // (B, E, N)
  Scratch<T> s{xt::zeros<T>({B, L, E}),    xt::zeros<T>({B, L, E, N}), xt::zeros<T>({B, L, E, N}),
               xt::zeros<T>({B, L, E, N}), xt::zeros<T>({B, L, E}),    xt::zeros<T>({B, L, E})};
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t d = 0; d < E; ++d) {
      for (int64_t t = 0; t < L; ++t) {
        s.dt(b, t, d) = TimeStep(v.Raw(b, t, d), a.delta_softplus);
        T acc = v.D(d) * v.u(b, t, d);
        for (int64_t n = 0; n < N; ++n) {
          const T prev = t > 0 ? s.h(b, t - 1, d, n) : T(0);
          s.deltaA(b, t, d, n) = std::exp(s.dt(b, t, d) * v.A(d, n));
          s.h(b, t, d, n) = s.deltaA(b, t, d, n) * prev + s.dt(b, t, d) * v.Bm(b, t, n) * v.u(b, t, d);
          acc += v.Cm(b, t, n) * s.h(b, t, d, n);
        }
        s.ypre(b, t, d) = acc;
      }
    }
  }
  // Gate: gy = dout * silu(z), dz = dout * ypre * silu'(z).
  if (!v.z) {
    s.gy = dy;
  } else {
    const XtView<const T, 3>& z = *v.z;
    XtView<T, 3> dz = XtViewOrDie<T, 3>(out[a.z_index()]);  // (B, L, E)
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t t = 0; t < L; ++t) {
        for (int64_t d = 0; d < E; ++d) {
          const T sg = Sigmoid(z(b, t, d));
          s.gy(b, t, d) = dy(b, t, d) * z(b, t, d) * sg;
          dz(b, t, d) = dy(b, t, d) * s.ypre(b, t, d) * sg * (T(1) + z(b, t, d) * (T(1) - sg));
        }
      }
    }
  }
  // Adjoint reverse scan: g[t] = C[t] gy[t] + deltaA[t+1] g[t+1], seeded by the last state's cotangent.
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t d = 0; d < E; ++d) {
      for (int64_t n = 0; n < N; ++n) {
        T next = dlast(b, d, n);  // deltaA[t+1] g[t+1], and dL/dh[L-1] from last_state
        for (int64_t t = L - 1; t >= 0; --t) {
          const T gv = v.Cm(b, t, n) * s.gy(b, t, d) + next;
          s.g(b, t, d, n) = gv;
          next = s.deltaA(b, t, d, n) * gv;
        }
      }
    }
  }
  return s;
}

// Spec §1.5, second half: the input cotangents from the stored states and the adjoint g.
template <typename T>
void ReferenceBackward(const SelectiveScanAttrs& a, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const Inputs<T> v = MakeInputs<T>(a, in);
  const int64_t B = v.u.shape(0), L = v.u.shape(1), E = v.u.shape(2), N = v.A.shape(1);
  const Scratch<T> s = ReferenceBackwardScan<T>(a, v, in, out);
  XtView<T, 3> du = XtViewOrDie<T, 3>(out[0]);      // (B, L, E)
  XtView<T, 3> ddelta = XtViewOrDie<T, 3>(out[1]);  // (B, L, E)
  XtView<T, 2> dA = XtViewOrDie<T, 2>(out[2]);      // (E, N)
  XtView<T, 3> dB = XtViewOrDie<T, 3>(out[3]);      // (B, L, N)
  XtView<T, 3> dC = XtViewOrDie<T, 3>(out[4]);      // (B, L, N)
  XtView<T, 1> dD = XtViewOrDie<T, 1>(out[5]);      // (E)
  std::optional<XtView<T, 1>> dbias;                // (E)
  if (a.has_delta_bias) dbias = XtViewOrDie<T, 1>(out[a.delta_bias_index()]);
  dA.fill(T(0));
  dD.fill(T(0));
  if (dbias) dbias->fill(T(0));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      // The (E) rows of gy, Δ and x at (b, t) as plain pointers: with their unit stride known, GCC
      // vectorizes the sums over d as it did before the views (an in-order reduction with unfused
      // products); through the views' runtime strides it picks another width and dB, dC change bits.
      const T* gy_bt = &s.gy(b, t, 0);
      const T* dt_bt = &s.dt(b, t, 0);
      const T* u_bt = &v.u(b, t, 0);
      for (int64_t n = 0; n < N; ++n) {
        T sc = 0, sb = 0;
        for (int64_t d = 0; d < E; ++d) {
          sc += gy_bt[d] * s.h(b, t, d, n);            // dC = Σ_d gy h
          sb += s.g(b, t, d, n) * dt_bt[d] * u_bt[d];  // dB = Σ_d g Δ x
        }
        dC(b, t, n) = sc;
        dB(b, t, n) = sb;
      }
      for (int64_t d = 0; d < E; ++d) {
        const T x = v.u(b, t, d), delta_t = s.dt(b, t, d);
        T sx = 0, sd = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T gv = s.g(b, t, d, n);
          const T prev = t > 0 ? s.h(b, t - 1, d, n) : T(0);
          sx += gv * delta_t * v.Bm(b, t, n);
          sd += gv * (v.Bm(b, t, n) * x + v.A(d, n) * s.deltaA(b, t, d, n) * prev);
          dA(d, n) += gv * delta_t * s.deltaA(b, t, d, n) * prev;
        }
        du(b, t, d) = v.D(d) * s.gy(b, t, d) + sx;
        const T dd = sd * TimeStepGrad(v.Raw(b, t, d), a.delta_softplus);
        ddelta(b, t, d) = dd;
        dD(d) += s.gy(b, t, d) * x;
        if (dbias) (*dbias)(d) += dd;
      }
    }
  }
}

}  // namespace

std::string SelectiveScanAttrs::ToString() const {
  return absl::StrCat("has_z=", has_z ? 1 : 0, " has_delta_bias=", has_delta_bias ? 1 : 0,
                      " delta_softplus=", delta_softplus ? 1 : 0, " chunk_size=", chunk_size);
}

absl::StatusOr<std::vector<TensorMeta>> SelectiveScanOp::InferMeta(absl::Span<const TensorMeta> in) const {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, CheckForwardInputs(attrs_, in, 0, ""));
  const TensorMeta& u = in[0];
  return std::vector<TensorMeta>{u, TensorMeta{{dims[0], dims[2], dims[3]}, u.dtype, u.device}};
}

absl::Status SelectiveScanOp::ComputeReference(absl::Span<const Tensor> in,
                                               absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceForward<double>(attrs_, in, out);
  } else {
    ReferenceForward<float>(attrs_, in, out);
  }
  return absl::OkStatus();
}

std::vector<Tensor> SelectiveScanOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                         absl::Span<const Tensor> out_grads) const {
  std::vector<Tensor> args(in.begin(), in.end());
  args.push_back(out_grads[0]);
  args.push_back(out_grads[1]);
  return core::Call(std::make_shared<SelectiveScanBackwardOp>(attrs_), std::move(args));
}

absl::StatusOr<std::vector<TensorMeta>> SelectiveScanBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, CheckForwardInputs(attrs_, in, 2, ", dy, dlast_state"));
  const int nf = attrs_.num_forward_inputs();
  const Shape& us = in[0].shape;
  RETURN_IF_ERROR(ExpectShape("dy", in[nf], us, "(B, L, E)", us));
  RETURN_IF_ERROR(ExpectShape("dlast_state", in[nf + 1], {dims[0], dims[2], dims[3]}, "(B, E, N)", us));
  return std::vector<TensorMeta>(in.begin(), in.begin() + nf);
}

absl::Status SelectiveScanBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                       absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    ReferenceBackward<double>(attrs_, in, out);
  } else {
    ReferenceBackward<float>(attrs_, in, out);
  }
  return absl::OkStatus();
}

namespace {

// Builds the op's input list from the present inputs; an absent required input is an error.
absl::StatusOr<std::vector<Tensor>> GatherInputs(const char* op, std::vector<const Tensor*> required,
                                                 std::vector<const char*> names, const Tensor& z,
                                                 const Tensor& delta_bias, SelectiveScanAttrs& attrs) {
  std::vector<Tensor> args;
  for (size_t i = 0; i < required.size(); ++i) {
    if (required[i]->absent()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op, ": required input ", names[i], " is an empty Tensor()"));
    }
    args.push_back(*required[i]);
  }
  attrs.has_z = !z.absent();
  attrs.has_delta_bias = !delta_bias.absent();
  if (attrs.has_z) args.insert(args.begin() + 6, z);
  if (attrs.has_delta_bias) args.insert(args.begin() + 6 + (attrs.has_z ? 1 : 0), delta_bias);
  return args;
}

}  // namespace

SelectiveScanResult SelectiveScan(const Tensor& u, const Tensor& delta, const Tensor& A, const Tensor& Bm,
                                  const Tensor& Cm, const Tensor& D, const Tensor& z,
                                  const Tensor& delta_bias, bool delta_softplus, int64_t chunk_size) {
  SelectiveScanAttrs attrs;
  attrs.delta_softplus = delta_softplus;
  attrs.chunk_size = chunk_size;
  absl::StatusOr<std::vector<Tensor>> args =
      GatherInputs("selective_scan", {&u, &delta, &A, &Bm, &Cm, &D}, {"u", "delta", "A", "Bm", "Cm", "D"}, z,
                   delta_bias, attrs);
  if (!args.ok()) return {Tensor::Error(args.status()), Tensor::Error(args.status())};
  std::vector<Tensor> outs = core::Call(std::make_shared<SelectiveScanOp>(attrs), *std::move(args));
  return {outs[0], outs[1]};
}

SelectiveScanGrads SelectiveScanBackward(const Tensor& u, const Tensor& delta, const Tensor& A,
                                         const Tensor& Bm, const Tensor& Cm, const Tensor& D, const Tensor& z,
                                         const Tensor& delta_bias, const Tensor& dy,
                                         const Tensor& dlast_state, bool delta_softplus, int64_t chunk_size) {
  SelectiveScanAttrs attrs;
  attrs.delta_softplus = delta_softplus;
  attrs.chunk_size = chunk_size;
  absl::StatusOr<std::vector<Tensor>> args =
      GatherInputs("selective_scan_backward", {&u, &delta, &A, &Bm, &Cm, &D, &dy},
                   {"u", "delta", "A", "Bm", "Cm", "D", "dy"}, z, delta_bias, attrs);
  std::vector<Tensor> outs;
  if (!args.ok()) {
    // One error per cotangent the op would have returned (dz / ddelta_bias stay absent without z / bias).
    outs.assign(attrs.num_forward_inputs(), Tensor::Error(args.status()));
  } else {
    // dy stays last: the optional inputs were inserted before it, at index 6.
    Tensor dlast = dlast_state;
    if (dlast.absent() && u.ok() && A.ok() && u.rank() == 3 && A.rank() == 2) {
      dlast = core::Fill(TensorMeta{{u.dim(0), u.dim(2), A.dim(1)}, u.dtype(), u.device()}, 0.0);
    }
    args->push_back(dlast);
    outs = core::Call(std::make_shared<SelectiveScanBackwardOp>(attrs), *std::move(args));
  }
  SelectiveScanGrads g{outs[0], outs[1], outs[2], outs[3], outs[4], outs[5], Tensor(), Tensor()};
  if (attrs.has_z) g.dz = outs[attrs.z_index()];
  if (attrs.has_delta_bias) g.ddelta_bias = outs[attrs.delta_bias_index()];
  return g;
}

}  // namespace mimetic::ops
