// The built-in init transforms, registered by name (registry.h) exactly as a user's transform is: with
// MIMETIC_REGISTER_INIT_TRANSFORM in a library built with alwayslink = 1 (//mimetic/init:registry). The
// parameter names are the field names of the config messages MimeticInit and GammaInit
// (mimetic/experiments/config/experiment.proto), so `init { mimetic { c: 4 } }` and `init { named { name:
// "mimetic" params { key: "c" value: "4" } } }` are one transform.
//
// Ranges: c > 0 (c ≤ 0 would not give A ≈ 1; the paper picks c from {2, 4, 8}, §3), up to 100, past
// which exp(-c A_log) underflows to 0 in f32 for every A_log ≥ 1 anyway; the Δ bias within ±20
// (Δ = softplus(bias) from about 2e-9 to 20); γ in (0, 4], where the weights' standard deviation
// for a fan-in of 32 is already below 1e-6.
#include "mimetic/init/gamma.h"
#include "mimetic/init/mimetic.h"
#include "mimetic/init/registry.h"

namespace mimetic::init {
namespace {

ParamSpec CParam() {
  return ParamSpec::Double("c", kMimeticC, Interval::LeftOpen(0, 100),
                           "A = -exp(-c A_log): larger c, A closer to 0 and Ā = exp(AΔ) closer to 1");
}
ParamSpec ReparameterizeParam() {
  return ParamSpec::Bool("reparameterize", true,
                         "true: the layer's spec computes A = -exp(-c A_log) (the paper's form); "
                         "false: A_log := -c A_log under A = -exp(A_log)");
}
ParamSpec WDeltaScaleParam() {
  return ParamSpec::Double("w_delta_scale", 0.0, Interval::Closed(0, 10),
                           "W_Δ is multiplied by this (0: Δ does not depend on the input)");
}
ParamSpec DeltaBiasParam(const char* name) {
  return ParamSpec::Double(name, kSoftplusInverseOfOne, Interval::Closed(-20, 20),
                           "the Δ bias; softplus^-1(1) makes Δ = 1");
}

TransformInfo MimeticInfo() {
  TransformInfo info;
  info.name = "mimetic";
  info.doc =
      "the paper's mimetic init (§3), components chosen by the layer's kind (Mamba 1: A, Δ, BC; "
      "Mamba 2: also conv)";
  info.params = {CParam(),
                 ReparameterizeParam(),
                 WDeltaScaleParam(),
                 DeltaBiasParam("delta_bias"),
                 ParamSpec::Bool("a", true, "apply A ≈ 1"),
                 ParamSpec::Bool("delta", true, "apply Δ ≈ 1"),
                 ParamSpec::Bool("bc", true, "apply W_C := (W_C + W_B) / 2"),
                 ParamSpec::Bool("conv_mamba1", false, "apply conv ≈ I on Mamba 1 layers"),
                 ParamSpec::Bool("conv_mamba2", true, "apply conv ≈ I on Mamba 2 layers")};
  info.make_layer = [](const Params& p) -> absl::StatusOr<LayerTransform> {
    MimeticOptions o;
    o.c = p.Double("c");
    o.reparameterize = p.Bool("reparameterize");
    o.w_delta_scale = p.Double("w_delta_scale");
    o.delta_bias = p.Double("delta_bias");
    o.a = p.Bool("a");
    o.delta = p.Bool("delta");
    o.bc = p.Bool("bc");
    o.conv_mamba1 = p.Bool("conv_mamba1");
    o.conv_mamba2 = p.Bool("conv_mamba2");
    return Mimetic(o);
  };
  return info;
}

TransformInfo MimeticAInfo() {
  TransformInfo info;
  info.name = "mimetic_a";
  info.doc = "A ≈ 1 alone (paper §3, Eq. 7)";
  info.params = {CParam(), ReparameterizeParam()};
  info.make_layer = [](const Params& p) -> absl::StatusOr<LayerTransform> {
    return MimeticA(p.Double("c"), p.Bool("reparameterize"));
  };
  return info;
}

TransformInfo MimeticDeltaInfo() {
  TransformInfo info;
  info.name = "mimetic_delta";
  info.doc = "Δ ≈ 1 alone (paper §3, Eq. 4): W_Δ scaled, Δ bias set";
  info.params = {WDeltaScaleParam(), DeltaBiasParam("bias")};
  info.make_layer = [](const Params& p) -> absl::StatusOr<LayerTransform> {
    return MimeticDelta(p.Double("w_delta_scale"), p.Double("bias"));
  };
  return info;
}

TransformInfo MimeticBCInfo() {
  TransformInfo info;
  info.name = "mimetic_bc";
  info.doc = "W_C := (W_C + W_B) / 2 alone, so W_Cᵀ W_B ≈ I (paper §3)";
  info.make_layer = [](const Params&) -> absl::StatusOr<LayerTransform> { return MimeticBC(); };
  return info;
}

TransformInfo MimeticConvInfo() {
  TransformInfo info;
  info.name = "mimetic_conv";
  info.doc = "conv ≈ I alone: each channel passes its current token (paper §3)";
  info.make_layer = [](const Params&) -> absl::StatusOr<LayerTransform> { return MimeticConv(); };
  return info;
}

TransformInfo GammaInfo() {
  TransformInfo info;
  info.name = "gamma";
  info.doc = "every weight matrix redrawn from N(0, fan_in^(-2γ)) (Zhang et al. 2024; gamma.h)";
  info.params = {
      ParamSpec::Double("gamma", 0.5, Interval::LeftOpen(0, 4), "γ: 0.5 LeCun-like, 1 small init")};
  info.make_model = [](const Params& p) -> absl::StatusOr<Transform> { return GammaInit(p.Double("gamma")); };
  return info;
}

}  // namespace

MIMETIC_REGISTER_INIT_TRANSFORM(Mimetic, MimeticInfo);
MIMETIC_REGISTER_INIT_TRANSFORM(MimeticA, MimeticAInfo);
MIMETIC_REGISTER_INIT_TRANSFORM(MimeticDelta, MimeticDeltaInfo);
MIMETIC_REGISTER_INIT_TRANSFORM(MimeticBC, MimeticBCInfo);
MIMETIC_REGISTER_INIT_TRANSFORM(MimeticConv, MimeticConvInfo);
MIMETIC_REGISTER_INIT_TRANSFORM(Gamma, GammaInfo);

}  // namespace mimetic::init
