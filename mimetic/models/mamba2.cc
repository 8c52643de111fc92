#include "mimetic/models/mamba2.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/random.h"
#include "mimetic/models/param_access.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/conv1d/conv1d.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/matmul/matmul.h"
#include "mimetic/ops/norm/norm.h"
#include "mimetic/ops/shape/shape.h"
#include "mimetic/ops/ssd/ssd.h"

namespace mimetic::models {

absl::Status ValidateMamba2(const Mamba2Spec& s, const std::string& at, int64_t d_model) {
  if (s.d_state() < 1) return BadSpecField(at + "mamba2.d_state", absl::StrCat(s.d_state()), ">= 1");
  if (s.d_conv() < 1) return BadSpecField(at + "mamba2.d_conv", absl::StrCat(s.d_conv()), ">= 1");
  if (s.expand() < 1) return BadSpecField(at + "mamba2.expand", absl::StrCat(s.expand()), ">= 1");
  const int64_t e = s.expand() * d_model;
  if (s.headdim() < 1 || e % s.headdim() != 0) {
    return BadSpecField(at + "mamba2.headdim", absl::StrCat(s.headdim()),
                        absl::StrCat("a divisor of d_inner = expand * d_model = ", e));
  }
  const int64_t h = e / s.headdim();
  if (s.ngroups() < 1 || h % s.ngroups() != 0) {
    return BadSpecField(at + "mamba2.ngroups", absl::StrCat(s.ngroups()),
                        absl::StrCat("a divisor of the head count ", h));
  }
  if (!(s.a_init_min() > 0 && s.a_init_min() <= s.a_init_max())) {
    return BadSpecField(at + "mamba2.a_init_min/a_init_max",
                        absl::StrCat(s.a_init_min(), "/", s.a_init_max()), "0 < min <= max");
  }
  if (!(s.dt_min() > 0 && s.dt_min() <= s.dt_max())) {
    return BadSpecField(at + "mamba2.dt_min/dt_max", absl::StrCat(s.dt_min(), "/", s.dt_max()),
                        "0 < dt_min <= dt_max");
  }
  if (s.chunk_size() < 1) return BadSpecField(at + "mamba2.chunk_size", absl::StrCat(s.chunk_size()), ">= 1");
  return absl::OkStatus();
}

absl::Status InitMamba2(Key key, const Mamba2Spec& s, int64_t d_model, int64_t out_proj_divisor_sq,
                        const std::string& prefix, NamedTensors* out) {
  const Mamba2Dims d = Mamba2DimsOf(s, d_model);
  const Mamba2InProj rows = Mamba2InProjOf(d);
  const int64_t conv_channels = rows.xBC().size;
  auto path = [&prefix](const char* name) { return prefix + name; };
  ASSIGN_OR_RETURN(Tensor in_proj, LinearWeight(ParamKey(key, path("in_proj/weight")), rows.rows(), d.D));
  out->emplace_back(path("in_proj/weight"), in_proj);
  if (s.bias()) {
    ASSIGN_OR_RETURN(Tensor b, ConstantTensor({rows.rows()}, 0.f));
    out->emplace_back(path("in_proj/bias"), b);
  }
  const double conv_bound = 1.0 / std::sqrt(static_cast<double>(d.K));
  ASSIGN_OR_RETURN(Tensor conv_w, UniformTensor(ParamKey(key, path("conv1d/weight")), {conv_channels, 1, d.K},
                                                -conv_bound, conv_bound));
  out->emplace_back(path("conv1d/weight"), conv_w);
  if (s.conv_bias()) {
    ASSIGN_OR_RETURN(Tensor conv_b, UniformTensor(ParamKey(key, path("conv1d/bias")), {conv_channels},
                                                  -conv_bound, conv_bound));
    out->emplace_back(path("conv1d/bias"), conv_b);
  }
  ASSIGN_OR_RETURN(Tensor dt_bias,
                   DtBias(ParamKey(key, path("dt_bias")), d.H, s.dt_min(), s.dt_max(), s.dt_init_floor()));
  out->emplace_back(path("dt_bias"), dt_bias);
  // A_log = ln(A0), A0 ~ U(a_init_min, a_init_max) per head.
  ASSIGN_OR_RETURN(std::vector<double> a0,
                   core::UniformVectorF64(ParamKey(key, path("A_log")), d.H, s.a_init_min(), s.a_init_max()));
  std::vector<float> a_log(d.H);
  for (int64_t h = 0; h < d.H; ++h) a_log[h] = static_cast<float>(std::log(a0[h]));
  ASSIGN_OR_RETURN(Tensor a, Tensor::FromHost<float>({d.H}, a_log));
  out->emplace_back(path("A_log"), a);
  ASSIGN_OR_RETURN(Tensor dskip, ConstantTensor({d.H}, 1.f));
  out->emplace_back(path("D"), dskip);
  ASSIGN_OR_RETURN(Tensor norm_w, ConstantTensor({d.E}, 1.f));
  out->emplace_back(path("norm/weight"), norm_w);
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

Tensor Mamba2Forward(const core::ParamTree& params, const std::string& prefix, const Mamba2Spec& s,
                     int64_t d_model, const Tensor& u, Mamba2Internals* internals) {
  const Mamba2Dims d = Mamba2DimsOf(s, d_model);
  const Mamba2InProj rows = Mamba2InProjOf(d);
  const int64_t conv_channels = rows.xBC().size;
  ParamAccess p(params, prefix);
  const int64_t batch = u.ok() ? u.dim(0) : 0;
  const int64_t len = u.ok() ? u.dim(1) : 0;
  // in_proj (B, L, 2E + 2GN + H) = [z | x | B | C | dt], and the depthwise conv + SiLU over
  // [x | B | C], computed part by part: no (B, L, ...) tensor is written whole and then split, and the
  // backward concatenates no cotangents (the conv is per channel, so its parts are independent).
  const std::vector<int64_t> xbc_sizes = {rows.x.size, rows.B.size, rows.C.size};
  std::vector<Tensor> parts =
      p.LinearParts(u, "in_proj", {rows.z.size, rows.x.size, rows.B.size, rows.C.size, rows.dt.size});
  const Tensor& z = parts[0];   // (B, L, E)
  const Tensor& dt = parts[4];  // (B, L, H)
  Tensor conv_w = ops::Reshape(p.Get("conv1d/weight"), {conv_channels, d.K});
  // Without a conv bias the conv adds zeros over all E + 2GN channels.
  Tensor conv_b = s.conv_bias() ? p.Get("conv1d/bias")
                                : core::Fill({{conv_channels}, conv_w.dtype(), conv_w.device()}, 0.0);
  const std::vector<Tensor> conv_ws = ops::Split(conv_w, 0, xbc_sizes);
  const std::vector<Tensor> conv_bs = ops::Split(conv_b, 0, xbc_sizes);
  std::vector<Tensor> xbc(3);  // (B, L, E), (B, L, GN), (B, L, GN): SiLU(conv) in one pass each
  for (int i = 0; i < 3; ++i) xbc[i] = ops::CausalConv1dSilu(parts[1 + i], conv_ws[i], conv_bs[i]);
  Tensor x = ops::Reshape(xbc[0], {batch, len, d.H, d.P});
  Tensor bm = ops::Reshape(xbc[1], {batch, len, d.G, d.N});
  Tensor cm = ops::Reshape(xbc[2], {batch, len, d.G, d.N});
  Tensor A = ops::Neg(ops::Exp(ops::MulScalar(p.Get("A_log"), s.a_log_scale())));  // (H)
  ops::SsdResult scan = ops::Ssd(x, dt, A, bm, cm, p.Get("D"), p.Get("dt_bias"), s.chunk_size());
  Tensor y = ops::Reshape(scan.y, {batch, len, d.E});
  // RMSNormGated(norm_before_gate=False): group_size = d_inner / ngroups.
  y = ops::GatedRmsNorm(y, z, p.Get("norm/weight"), d.E / d.G, s.norm_eps());
  if (internals != nullptr) {
    internals->x = x;
    internals->delta = ops::Softplus(ops::Add(dt, p.Get("dt_bias")));
    internals->A = A;
    internals->Bm = bm;
    internals->Cm = cm;
    internals->conv_in = ops::Concat({parts[1], parts[2], parts[3]}, -1);  // (B, L, E + 2GN)
    std::vector<Tensor> conv(3);  // the pre-activations, for analysis
    for (int i = 0; i < 3; ++i) conv[i] = ops::CausalConv1d(parts[1 + i], conv_ws[i], conv_bs[i]);
    internals->conv_out = ops::Concat(conv, -1);
  }
  return p.Linear(y, "out_proj");
}

}  // namespace mimetic::models
