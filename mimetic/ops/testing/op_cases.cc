#include "mimetic/ops/testing/op_cases.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/op.h"
#include "mimetic/core/random.h"

namespace mimetic::ops::testing {
namespace {

std::vector<OpCase>& Registry() {
  static auto* cases = new std::vector<OpCase>();
  return *cases;
}

absl::StatusOr<std::vector<double>> AsDoubles(const Tensor& t) {
  RETURN_IF_ERROR(t.status());
  std::vector<double> out;
  switch (t.dtype()) {
    case core::DType::kF32: {
      ASSIGN_OR_RETURN(std::vector<float> v, t.ToVector<float>());
      out.assign(v.begin(), v.end());
      break;
    }
    case core::DType::kF64: {
      ASSIGN_OR_RETURN(out, t.ToVector<double>());
      break;
    }
    case core::DType::kI32: {
      ASSIGN_OR_RETURN(std::vector<int32_t> v, t.ToVector<int32_t>());
      out.assign(v.begin(), v.end());
      break;
    }
  }
  return out;
}

// Sum over outputs of <seed, output> in f64, computed on the host.
absl::StatusOr<double> Project(const std::vector<Tensor>& outs,
                               const std::vector<std::vector<double>>& seeds) {
  double total = 0;
  for (size_t k = 0; k < outs.size(); ++k) {
    ASSIGN_OR_RETURN(std::vector<double> v, AsDoubles(outs[k]));
    for (size_t i = 0; i < v.size(); ++i) total += seeds[k][i] * v[i];
  }
  return total;
}

}  // namespace

void RegisterOpCases(std::vector<OpCase> cases) {
  for (OpCase& c : cases) Registry().push_back(std::move(c));
}

const std::vector<OpCase>& RegisteredOpCases() { return Registry(); }

absl::StatusOr<std::vector<Tensor>> MakeInputs(const OpCase& c, core::Key key, core::DType dtype) {
  std::vector<Tensor> inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Input& in = c.inputs[i];
    core::Key k = core::FoldIn(key, static_cast<uint32_t>(i));
    switch (in.kind) {
      case Input::kNormal: {
        ASSIGN_OR_RETURN(Tensor t, core::Normal(k, in.shape, core::DType::kF64));
        ASSIGN_OR_RETURN(std::vector<double> v, t.ToVector<double>());
        for (double& x : v) x *= in.scale;
        if (dtype == core::DType::kF64) {
          ASSIGN_OR_RETURN(t, Tensor::FromHost<double>(in.shape, v));
        } else {
          std::vector<float> f(v.begin(), v.end());
          ASSIGN_OR_RETURN(t, Tensor::FromHost<float>(in.shape, f));
        }
        inputs.push_back(t);
        break;
      }
      case Input::kUniform: {
        ASSIGN_OR_RETURN(Tensor t, core::Uniform(k, in.shape, in.lo, in.hi, core::DType::kF64));
        ASSIGN_OR_RETURN(std::vector<double> v, t.ToVector<double>());
        if (dtype == core::DType::kF64) {
          ASSIGN_OR_RETURN(t, Tensor::FromHost<double>(in.shape, v));
        } else {
          std::vector<float> f(v.begin(), v.end());
          ASSIGN_OR_RETURN(t, Tensor::FromHost<float>(in.shape, f));
        }
        inputs.push_back(t);
        break;
      }
      case Input::kIndex: {
        ASSIGN_OR_RETURN(
            Tensor t, core::RandInt(k, in.shape, static_cast<int32_t>(in.lo), static_cast<int32_t>(in.hi)));
        inputs.push_back(t);
        break;
      }
    }
  }
  return inputs;
}

Tensor OnDeviceOf(const Tensor& like, absl::StatusOr<Tensor> host) {
  if (!host.ok()) return Tensor::Error(host.status());
  absl::StatusOr<Tensor> moved = host->ToDevice(like.device());
  return moved.ok() ? *moved : Tensor::Error(moved.status());
}

Tensor Unwatched(const Tensor& ids) {
  absl::StatusOr<std::vector<int32_t>> v = ids.ToVector<int32_t>();  // fails on float tensors: ids only
  if (!v.ok()) return Tensor::Error(v.status());
  return OnDeviceOf(ids, Tensor::FromHost<int32_t>(ids.shape(), *v));
}

absl::Status CompareTensors(const Tensor& actual, const Tensor& expected, double atol, double rtol) {
  RETURN_IF_ERROR(actual.status());
  RETURN_IF_ERROR(expected.status());
  if (actual.shape() != expected.shape() || actual.dtype() != expected.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat("metadata differs: ", actual.meta().DebugString(), " vs ",
                                                   expected.meta().DebugString()));
  }
  ASSIGN_OR_RETURN(std::vector<double> a, AsDoubles(actual));
  ASSIGN_OR_RETURN(std::vector<double> b, AsDoubles(expected));
  for (size_t i = 0; i < a.size(); ++i) {
    const double err = std::abs(a[i] - b[i]);
    if (!(err <= atol + rtol * std::abs(b[i]))) {
      return absl::InvalidArgumentError(absl::StrCat("element ", i, " of ", actual.meta().DebugString(),
                                                     ": got ", a[i], ", expected ", b[i], " (|diff| ", err,
                                                     " > ", atol, " + ", rtol, " * |expected|)"));
    }
  }
  return absl::OkStatus();
}

std::vector<Tensor> RunOn(const CaseFn& fn, absl::Span<const Tensor> inputs, int backend) {
  core::ScopedCpuBackend scope(static_cast<core::Backend>(backend));
  return fn(inputs);
}

absl::StatusOr<CaseVjp> ReferenceVjp(const OpCase& c, absl::Span<const Tensor> inputs, core::Key key) {
  core::ScopedCpuBackend scope(core::Backend::kReference);
  CaseVjp r;
  r.outputs = c.fn(inputs);
  std::vector<Tensor> seed_tensors;
  for (size_t k = 0; k < r.outputs.size(); ++k) {
    const Tensor& out = r.outputs[k];
    RETURN_IF_ERROR(out.status());
    if (out.dtype() == core::DType::kI32) {
      r.seeds.emplace_back(out.numel(), 0.0);  // integer outputs carry no gradient
      ASSIGN_OR_RETURN(Tensor z, Tensor::Zeros(out.shape(), out.dtype()));
      seed_tensors.push_back(z);
      continue;
    }
    ASSIGN_OR_RETURN(Tensor s, core::Normal(core::FoldIn(key, 1000 + k), out.shape(), out.dtype()));
    ASSIGN_OR_RETURN(std::vector<double> v, AsDoubles(s));
    r.seeds.push_back(v);
    seed_tensors.push_back(s);
  }
  // Differentiate only with respect to the differentiable inputs; the others (ids, masks) enter
  // as constants, so ops may return no cotangent for them.
  const std::vector<Tensor> all(inputs.begin(), inputs.end());
  std::vector<size_t> diff;
  std::vector<Tensor> diff_inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (c.inputs[i].differentiable) {
      diff.push_back(i);
      diff_inputs.push_back(inputs[i]);
    }
  }
  auto partial = [&](absl::Span<const Tensor> x) {
    std::vector<Tensor> with = all;
    for (size_t k = 0; k < diff.size(); ++k) with[diff[k]] = x[k];
    return c.fn(with);
  };
  ASSIGN_OR_RETURN(std::vector<Tensor> diff_grads, core::Vjp(partial, diff_inputs, seed_tensors));
  r.grads.resize(inputs.size());
  for (size_t k = 0; k < diff.size(); ++k) r.grads[diff[k]] = diff_grads[k];
  return r;
}

absl::Status CheckGradients(const OpCase& c, absl::Span<const Tensor> inputs, core::Key key) {
  ASSIGN_OR_RETURN(CaseVjp vjp, ReferenceVjp(c, inputs, key));
  core::ScopedCpuBackend scope(core::Backend::kReference);
  const std::vector<Tensor> wrt(inputs.begin(), inputs.end());
  const std::vector<std::vector<double>>& seeds = vjp.seeds;
  const std::vector<Tensor>& grads = vjp.grads;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!c.inputs[i].differentiable) continue;
    ASSIGN_OR_RETURN(std::vector<double> analytic, AsDoubles(grads[i]));
    ASSIGN_OR_RETURN(std::vector<double> x, inputs[i].ToVector<double>());
    for (size_t e = 0; e < x.size(); ++e) {
      std::vector<Tensor> plus = wrt, minus = wrt;
      std::vector<double> xp = x, xm = x;
      xp[e] += c.fd_eps;
      xm[e] -= c.fd_eps;
      ASSIGN_OR_RETURN(plus[i], Tensor::FromHost<double>(inputs[i].shape(), xp));
      ASSIGN_OR_RETURN(minus[i], Tensor::FromHost<double>(inputs[i].shape(), xm));
      ASSIGN_OR_RETURN(double lp, Project(c.fn(plus), seeds));
      ASSIGN_OR_RETURN(double lm, Project(c.fn(minus), seeds));
      const double numeric = (lp - lm) / (2 * c.fd_eps);
      const double err = std::abs(analytic[e] - numeric);
      if (!(err <= c.grad_atol + c.grad_rtol * std::abs(numeric))) {
        return absl::InvalidArgumentError(absl::StrCat("gradient of input ", i, " element ", e, ": VJP ",
                                                       analytic[e], ", finite difference ", numeric,
                                                       " (|diff| ", err, ")"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace mimetic::ops::testing
