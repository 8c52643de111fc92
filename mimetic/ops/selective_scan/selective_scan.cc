// Selective scan: shape inference, the public functions, the VJP rule and the reference
// implementations (plain loops straight from mamba_ssm: selective_scan_ref, selective_scan_bwd_kernel.cuh;
// the backward stores every state, as the oracle may). The fast CPU kernels live in selective_scan_cpu.cc.
#include "mimetic/ops/selective_scan/selective_scan.h"

#include <cmath>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/ops/softplus.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::ShapeString;
using core::TensorMeta;

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

template <typename T>
struct View {
  int64_t B, L, E, N;
  const T *u, *delta, *A, *Bm, *Cm, *D, *z, *bias;
  // dt at (b, t, d) and the pre-softplus value.
  T Raw(int64_t i, int64_t d) const { return delta[i * E + d] + (bias ? bias[d] : T(0)); }
};

template <typename T>
View<T> MakeView(const SelectiveScanAttrs& a, absl::Span<const Tensor> in) {
  View<T> v;
  v.B = in[0].dim(0);
  v.L = in[0].dim(1);
  v.E = in[0].dim(2);
  v.N = in[2].dim(1);
  v.u = in[0].data<T>();
  v.delta = in[1].data<T>();
  v.A = in[2].data<T>();
  v.Bm = in[3].data<T>();
  v.Cm = in[4].data<T>();
  v.D = in[5].data<T>();
  v.z = a.has_z ? in[a.z_index()].data<T>() : nullptr;
  v.bias = a.has_delta_bias ? in[a.delta_bias_index()].data<T>() : nullptr;
  return v;
}

template <typename T>
void ReferenceForward(const SelectiveScanAttrs& a, absl::Span<const Tensor> in,
                      absl::Span<const Tensor> out) {
  const View<T> v = MakeView<T>(a, in);
  const int64_t B = v.B, L = v.L, E = v.E, N = v.N;
  T* y = out[0].mutable_data<T>();     // (B, L, E)
  T* last = out[1].mutable_data<T>();  // (B, E, N)
  std::vector<T> h(N);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t d = 0; d < E; ++d) {
      std::fill(h.begin(), h.end(), T(0));
      for (int64_t t = 0; t < L; ++t) {
        const int64_t i = b * L + t;  // (b, t) row
        const T dt = TimeStep(v.Raw(i, d), a.delta_softplus);
        const T x = v.u[i * E + d];
        T acc = 0;
        for (int64_t n = 0; n < N; ++n) {
          h[n] = std::exp(dt * v.A[d * N + n]) * h[n] + dt * v.Bm[i * N + n] * x;
          acc += v.Cm[i * N + n] * h[n];
        }
        T out_v = acc + v.D[d] * x;
        if (v.z) {
          const T zz = v.z[i * E + d];
          out_v *= zz * Sigmoid(zz);
        }
        y[i * E + d] = out_v;
      }
      for (int64_t n = 0; n < N; ++n) last[(b * E + d) * N + n] = h[n];
    }
  }
}

// Spec §1.5, formula by formula, with all states h[b,t,d,n] stored.
template <typename T>
void ReferenceBackward(const SelectiveScanAttrs& a, absl::Span<const Tensor> in,
                       absl::Span<const Tensor> out) {
  const View<T> v = MakeView<T>(a, in);
  const int64_t B = v.B, L = v.L, E = v.E, N = v.N;
  const int nf = a.num_forward_inputs();
  const T* dy = in[nf].data<T>();         // (B, L, E)
  const T* dlast = in[nf + 1].data<T>();  // (B, E, N)
  auto st = [&](int64_t b, int64_t t, int64_t d, int64_t n) { return ((b * L + t) * E + d) * N + n; };
  std::vector<T> dt(B * L * E), h(B * L * E * N), dA(B * L * E * N), g(B * L * E * N), gy(B * L * E),
      ypre(B * L * E);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t d = 0; d < E; ++d) {
      for (int64_t t = 0; t < L; ++t) {
        const int64_t i = b * L + t;
        dt[i * E + d] = TimeStep(v.Raw(i, d), a.delta_softplus);
        T acc = v.D[d] * v.u[i * E + d];
        for (int64_t n = 0; n < N; ++n) {
          const T prev = t > 0 ? h[st(b, t - 1, d, n)] : T(0);
          dA[st(b, t, d, n)] = std::exp(dt[i * E + d] * v.A[d * N + n]);
          h[st(b, t, d, n)] = dA[st(b, t, d, n)] * prev + dt[i * E + d] * v.Bm[i * N + n] * v.u[i * E + d];
          acc += v.Cm[i * N + n] * h[st(b, t, d, n)];
        }
        ypre[i * E + d] = acc;
      }
    }
  }
  // Gate: gy = dout * silu(z), dz = dout * ypre * silu'(z).
  T* dz = a.has_z ? out[a.z_index()].mutable_data<T>() : nullptr;
  for (int64_t i = 0; i < B * L * E; ++i) {
    if (!v.z) {
      gy[i] = dy[i];
      continue;
    }
    const T s = Sigmoid(v.z[i]);
    gy[i] = dy[i] * v.z[i] * s;
    dz[i] = dy[i] * ypre[i] * s * (T(1) + v.z[i] * (T(1) - s));
  }
  // Adjoint reverse scan: g[t] = C[t] gy[t] + dA[t+1] g[t+1], seeded by the last state's cotangent.
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t d = 0; d < E; ++d) {
      for (int64_t n = 0; n < N; ++n) {
        T next = dlast[(b * E + d) * N + n];  // dA[t+1] g[t+1], and dL/dh[L-1] from last_state
        for (int64_t t = L - 1; t >= 0; --t) {
          const T gv = v.Cm[(b * L + t) * N + n] * gy[(b * L + t) * E + d] + next;
          g[st(b, t, d, n)] = gv;
          next = dA[st(b, t, d, n)] * gv;
        }
      }
    }
  }
  T* du = out[0].mutable_data<T>();
  T* ddelta = out[1].mutable_data<T>();
  T* dAp = out[2].mutable_data<T>();
  T* dB = out[3].mutable_data<T>();
  T* dC = out[4].mutable_data<T>();
  T* dD = out[5].mutable_data<T>();
  T* dbias = a.has_delta_bias ? out[a.delta_bias_index()].mutable_data<T>() : nullptr;
  std::fill(dAp, dAp + E * N, T(0));
  std::fill(dD, dD + E, T(0));
  if (dbias) std::fill(dbias, dbias + E, T(0));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < L; ++t) {
      const int64_t i = b * L + t;
      for (int64_t n = 0; n < N; ++n) {
        T sc = 0, sb = 0;
        for (int64_t d = 0; d < E; ++d) {
          sc += gy[i * E + d] * h[st(b, t, d, n)];                   // dC = Σ_d gy h
          sb += g[st(b, t, d, n)] * dt[i * E + d] * v.u[i * E + d];  // dB = Σ_d g Δ x
        }
        dC[i * N + n] = sc;
        dB[i * N + n] = sb;
      }
      for (int64_t d = 0; d < E; ++d) {
        const T x = v.u[i * E + d], delta_t = dt[i * E + d];
        T sx = 0, sd = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T gv = g[st(b, t, d, n)];
          const T prev = t > 0 ? h[st(b, t - 1, d, n)] : T(0);
          sx += gv * delta_t * v.Bm[i * N + n];
          sd += gv * (v.Bm[i * N + n] * x + v.A[d * N + n] * dA[st(b, t, d, n)] * prev);
          dAp[d * N + n] += gv * delta_t * dA[st(b, t, d, n)] * prev;
        }
        du[i * E + d] = v.D[d] * gy[i * E + d] + sx;
        const T dd = sd * TimeStepGrad(v.Raw(i, d), a.delta_softplus);
        ddelta[i * E + d] = dd;
        dD[d] += gy[i * E + d] * x;
        if (dbias) dbias[d] += dd;
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
