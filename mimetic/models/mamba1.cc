#include "mimetic/models/mamba1.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/models/param_access.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/conv1d/conv1d.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/matmul/matmul.h"
#include "mimetic/ops/selective_scan/selective_scan.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::models {

absl::Status ValidateMamba1(const Mamba1Spec& s, const std::string& at, int64_t /*d_model*/) {
  if (s.d_state() < 1) return BadSpecField(at + "mamba1.d_state", absl::StrCat(s.d_state()), ">= 1");
  if (s.d_conv() < 1) return BadSpecField(at + "mamba1.d_conv", absl::StrCat(s.d_conv()), ">= 1");
  if (s.expand() < 1) return BadSpecField(at + "mamba1.expand", absl::StrCat(s.expand()), ">= 1");
  if (s.dt_rank() < 0)
    return BadSpecField(at + "mamba1.dt_rank", absl::StrCat(s.dt_rank()), ">= 0 (0 = auto)");
  if (!(s.dt_min() > 0 && s.dt_min() <= s.dt_max())) {
    return BadSpecField(at + "mamba1.dt_min/dt_max", absl::StrCat(s.dt_min(), "/", s.dt_max()),
                        "0 < dt_min <= dt_max");
  }
  if (s.scan_chunk() < 1) return BadSpecField(at + "mamba1.scan_chunk", absl::StrCat(s.scan_chunk()), ">= 1");
  return absl::OkStatus();
}

absl::Status InitMamba1(Key key, const Mamba1Spec& s, int64_t d_model, int64_t out_proj_divisor_sq,
                        const std::string& prefix, NamedTensors* out) {
  const Mamba1Dims d = Mamba1DimsOf(s, d_model);
  auto path = [&prefix](const char* name) { return prefix + name; };
  ASSIGN_OR_RETURN(Tensor in_proj, LinearWeight(ParamKey(key, path("in_proj/weight")), 2 * d.E, d.D));
  out->emplace_back(path("in_proj/weight"), in_proj);
  if (s.bias()) {
    ASSIGN_OR_RETURN(Tensor b, ConstantTensor({2 * d.E}, 0.f));  // _init_weights zeroes Linear biases
    out->emplace_back(path("in_proj/bias"), b);
  }
  // nn.Conv1d(groups=E): fan_in = K, so weight and bias ~ U(±1/sqrt(K)); the bias is not re-zeroed.
  const double conv_bound = 1.0 / std::sqrt(static_cast<double>(d.K));
  ASSIGN_OR_RETURN(Tensor conv_w, UniformTensor(ParamKey(key, path("conv1d/weight")), {d.E, 1, d.K},
                                                -conv_bound, conv_bound));
  out->emplace_back(path("conv1d/weight"), conv_w);
  if (s.conv_bias()) {
    ASSIGN_OR_RETURN(Tensor conv_b,
                     UniformTensor(ParamKey(key, path("conv1d/bias")), {d.E}, -conv_bound, conv_bound));
    out->emplace_back(path("conv1d/bias"), conv_b);
  }
  ASSIGN_OR_RETURN(Tensor x_proj, LinearWeight(ParamKey(key, path("x_proj/weight")), d.R + 2 * d.N, d.E));
  out->emplace_back(path("x_proj/weight"), x_proj);
  // dt_proj.weight: dt_init_std = R^-1/2 * dt_scale; "random" U(±std), "constant" all std.
  const double dt_std = std::pow(static_cast<double>(d.R), -0.5) * s.dt_scale();
  Tensor dt_w;
  if (s.dt_init_random()) {
    ASSIGN_OR_RETURN(dt_w, UniformTensor(ParamKey(key, path("dt_proj/weight")), {d.E, d.R}, -dt_std, dt_std));
  } else {
    ASSIGN_OR_RETURN(dt_w, ConstantTensor({d.E, d.R}, static_cast<float>(dt_std)));
  }
  out->emplace_back(path("dt_proj/weight"), dt_w);
  ASSIGN_OR_RETURN(Tensor dt_b, DtBias(ParamKey(key, path("dt_proj/bias")), d.E, s.dt_min(), s.dt_max(),
                                       s.dt_init_floor()));
  out->emplace_back(path("dt_proj/bias"), dt_b);
  // S4D-real: A_log[d, n] = ln(n + 1), the same for every channel.
  std::vector<float> a_log(d.E * d.N);
  for (int64_t e = 0; e < d.E; ++e) {
    for (int64_t n = 0; n < d.N; ++n)
      a_log[e * d.N + n] = static_cast<float>(std::log(static_cast<double>(n + 1)));
  }
  ASSIGN_OR_RETURN(Tensor a, Tensor::FromHost<float>({d.E, d.N}, a_log));
  out->emplace_back(path("A_log"), a);
  ASSIGN_OR_RETURN(Tensor dskip, ConstantTensor({d.E}, 1.f));
  out->emplace_back(path("D"), dskip);
  // _init_weights: out_proj.weight re-drawn kaiming_uniform then divided by sqrt(n_residuals * n_layer).
  ASSIGN_OR_RETURN(Tensor out_w, LinearWeight(ParamKey(key, path("out_proj/weight")), d.D, d.E));
  if (out_proj_divisor_sq > 0)
    out_w = ops::MulScalar(out_w, 1.0 / std::sqrt(static_cast<double>(out_proj_divisor_sq)));
  RETURN_IF_ERROR(out_w.status());
  out->emplace_back(path("out_proj/weight"), out_w);
  if (s.bias()) {
    ASSIGN_OR_RETURN(Tensor b, ConstantTensor({d.D}, 0.f));
    out->emplace_back(path("out_proj/bias"), b);
  }
  return absl::OkStatus();
}

Tensor Mamba1Forward(const core::ParamTree& params, const std::string& prefix, const Mamba1Spec& s,
                     int64_t d_model, const Tensor& u, Mamba1Internals* internals) {
  const Mamba1Dims d = Mamba1DimsOf(s, d_model);
  ParamAccess p(params, prefix);
  // in_proj (B, L, 2E) = u @ in_proj^T = [x | z], computed in its two parts.
  std::vector<Tensor> parts = p.LinearParts(u, "in_proj", {d.E, d.E});
  Tensor x = parts[0];  // (B, L, E)
  Tensor z = parts[1];  // (B, L, E)
  Tensor conv_w = ops::Reshape(p.Get("conv1d/weight"), {d.E, d.K});
  Tensor conv_b = s.conv_bias() ? p.Get("conv1d/bias") : ops::ZerosLike(p.Get("D"));
  Tensor xc = ops::CausalConv1dSilu(x, conv_w, conv_b);  // (B, L, E) = SiLU(conv(x)), one pass
  // x_proj (B, L, R + 2N) = [dt_low | B | C], in its three parts (no split, no concatenation).
  std::vector<Tensor> dbc = p.LinearParts(xc, "x_proj", {d.R, d.N, d.N});
  Tensor dt = ops::MatMul(dbc[0], p.Get("dt_proj/weight"), false, true);  // (B, L, E), bias in the scan
  // A = -exp(s * A_log); s = 1 (mamba_ssm) or -c (mimetic A≈1, paper §3).
  Tensor A = ops::Neg(ops::Exp(ops::MulScalar(p.Get("A_log"), s.a_log_scale())));  // (E, N)
  // The backward's recomputation chunk: on the CPU one chunk for rows up to 256 steps (its scratch,
  // 4 x chunk x N x 16 floats per thread, is small there; no pass to the chunk starts, ~10% faster),
  // which never changes a bit; the GPU keeps the default (its workspace is sized by it).
  const int64_t len = u.ok() ? u.dim(1) : 0;
  const int64_t chunk = u.ok() && u.device() == core::Device::kCpu
                            ? std::clamp<int64_t>(len, ops::kSelectiveScanDefaultChunk, 256)
                            : ops::kSelectiveScanDefaultChunk;
  ops::SelectiveScanResult scan = ops::SelectiveScan(xc, dt, A, dbc[1], dbc[2], p.Get("D"), z,
                                                     p.Get("dt_proj/bias"), /*delta_softplus=*/true, chunk);
  if (internals != nullptr) {
    internals->xc = xc;
    internals->delta = ops::Softplus(ops::Add(dt, p.Get("dt_proj/bias")));
    internals->A = A;
    internals->Bm = dbc[1];
    internals->Cm = dbc[2];
    internals->conv_in = x;
    internals->conv_out = ops::CausalConv1d(x, conv_w, conv_b);  // the pre-activation, for analysis
  }
  return p.Linear(scan.y, "out_proj");
}

}  // namespace mimetic::models
