// The paper's recipe ("Mimetic Initialization Helps State Space Models Learn to Recall", §3), one
// named edit per component, each under the formula it implements. docs/mimetic_recipe.md lists
// them with the paper's sections; the row layouts are in models/proj_layout.h.
#include "mimetic/init/mimetic.h"

#include "absl/strings/str_cat.h"
#include "mimetic/init/tree_edit.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"

namespace mimetic::init {
namespace {

using models::Mamba1XProjOf;
using models::Mamba2InProjOf;

absl::Status NotMamba(const Model& m, int layer, const char* component) {
  return absl::InvalidArgumentError(absl::StrCat(component, " needs a Mamba 1 or Mamba 2 layer, but layer ",
                                                 layer, " is ", models::MixerKind(m.spec.layers(layer))));
}

// The layer's spec if it is a Mamba 1 or Mamba 2 layer, else the error NotMamba gives.
absl::StatusOr<const LayerSpec*> MambaLayer(const Model& m, int layer, const char* component) {
  RETURN_IF_ERROR(CheckLayer(m, layer));
  const LayerSpec& ls = m.spec.layers(layer);
  if (!ls.has_mamba1() && !ls.has_mamba2()) return NotMamba(m, layer, component);
  return &ls;
}

// ---- A ≈ 1 (paper §3, "State space layers can be linear attention"; Eq. 7) ----
// A = -exp(-c · A_log): for large c, A ≈ 0, so Ā = exp(A Δ) ≈ 1 and the state keeps its history.
// reparameterize: the layer's spec gets a_log_scale = -c and A_log keeps its default values (the
// paper's "parameterize"); otherwise only the initial values change, A_log := -c · A_log.
absl::StatusOr<Model> SetAToOne(const Model& m, int layer, double c, bool reparameterize) {
  ASSIGN_OR_RETURN(const LayerSpec* ls, MambaLayer(m, layer, "A≈1"));
  Model out = m;
  if (reparameterize) {
    LayerSpec* spec = out.spec.mutable_layers(layer);
    if (ls->has_mamba1()) spec->mutable_mamba1()->set_a_log_scale(-c);
    if (ls->has_mamba2()) spec->mutable_mamba2()->set_a_log_scale(-c);
    return out;
  }
  ASSIGN_OR_RETURN(out.params, EditRows(m.params, MixerPath(layer, "A_log"),
                                        [c](RowEditor& a) { return a.Scale(a.all(), -c); }));
  return out;
}

// ---- Δ ≈ 1 (paper §3, "State space layers can be linear attention"; Eq. 4) ----
// W_Δ = 0, b_Δ = softplus⁻¹(1), so Δ = softplus(W_Δ X + b_Δ) = 1 for every input.
// Mamba 1: W_Δ = dt_proj.weight · x_proj.weight[dt rows]; scaling dt_proj alone keeps x_proj
// trainable. Mamba 2: W_Δ is the dt rows of in_proj.
absl::StatusOr<Model> SetDeltaToOne(const Model& m, int layer, double w_delta_scale, double bias) {
  ASSIGN_OR_RETURN(const LayerSpec* ls, MambaLayer(m, layer, "Δ≈1"));
  auto set_bias = [bias](RowEditor& b) { return b.Fill(b.all(), bias); };
  Model out = m;
  if (ls->has_mamba1()) {
    ASSIGN_OR_RETURN(out.params, EditRows(out.params, MixerPath(layer, "dt_proj/weight"),
                                          [&](RowEditor& w) { return w.Scale(w.all(), w_delta_scale); }));
    ASSIGN_OR_RETURN(out.params, EditRows(out.params, MixerPath(layer, "dt_proj/bias"), set_bias));
    return out;
  }
  const models::Mamba2Dims d = models::Mamba2DimsOf(ls->mamba2(), m.spec.d_model());
  const models::Mamba2InProj in = Mamba2InProjOf(d);
  RETURN_IF_ERROR(CheckShape(out.params, MixerPath(layer, "in_proj/weight"), {in.rows(), d.D}));
  ASSIGN_OR_RETURN(out.params, EditRows(out.params, MixerPath(layer, "in_proj/weight"),
                                        [&](RowEditor& w) { return w.Scale(in.dt, w_delta_scale); }));
  ASSIGN_OR_RETURN(out.params, EditRows(out.params, MixerPath(layer, "dt_bias"), set_bias));
  return out;
}

// ---- W_Cᵀ W_B ≈ I (paper §3, "Correlated tokens should attend to each other") ----
// W_C := (W_C + W_B) / 2, W_B unchanged: the queries C and keys B start correlated. Mamba 1: the B
// and C rows of x_proj; Mamba 2: of in_proj, where group g of B and of C sit at the same offset.
absl::StatusOr<Model> CorrelateCWithB(const Model& m, int layer) {
  ASSIGN_OR_RETURN(const LayerSpec* ls, MambaLayer(m, layer, "W_CᵀW_B≈I"));
  std::string path;
  RowRange b_rows, c_rows;
  if (ls->has_mamba1()) {
    const models::Mamba1Dims d = models::Mamba1DimsOf(ls->mamba1(), m.spec.d_model());
    const models::Mamba1XProj x = Mamba1XProjOf(d);
    path = MixerPath(layer, "x_proj/weight");
    RETURN_IF_ERROR(CheckShape(m.params, path, {x.rows(), d.E}));
    b_rows = x.B;
    c_rows = x.C;
  } else {
    const models::Mamba2Dims d = models::Mamba2DimsOf(ls->mamba2(), m.spec.d_model());
    const models::Mamba2InProj in = Mamba2InProjOf(d);
    path = MixerPath(layer, "in_proj/weight");
    RETURN_IF_ERROR(CheckShape(m.params, path, {in.rows(), d.D}));
    b_rows = in.B;
    c_rows = in.C;
  }
  Model out = m;
  ASSIGN_OR_RETURN(out.params,
                   EditRows(m.params, path, [&](RowEditor& w) { return w.AverageInto(c_rows, b_rows); }));
  return out;
}

// ---- Conv ≈ I (paper §3, end of "Correlated tokens should attend to each other") ----
// Every conv channel passes its current token through: weight (C, 1, K) with the last tap (which
// multiplies the current token) 1 and the others 0, bias 0.
absl::StatusOr<Model> MakeConvIdentity(const Model& m, int layer) {
  RETURN_IF_ERROR(MambaLayer(m, layer, "conv≈I").status());
  Model out = m;
  ASSIGN_OR_RETURN(out.params, EditRows(m.params, MixerPath(layer, "conv1d/weight"), [](RowEditor& w) {
                     RETURN_IF_ERROR(w.Fill(w.all(), 0.0));
                     return w.FillColumn(w.width() - 1, 1.0);
                   }));
  if (out.params.Contains(MixerPath(layer, "conv1d/bias"))) {
    ASSIGN_OR_RETURN(out.params, EditRows(out.params, MixerPath(layer, "conv1d/bias"),
                                          [](RowEditor& b) { return b.Fill(b.all(), 0.0); }));
  }
  return out;
}

}  // namespace

LayerTransform MimeticA(double c, bool reparameterize) {
  return LayerTransform(
      absl::StrCat("mimetic_a(c=", c, reparameterize ? ", reparameterize" : ", init_only", ")"),
      [c, reparameterize](const Model& m, int layer, Key) { return SetAToOne(m, layer, c, reparameterize); });
}

LayerTransform MimeticDelta(double w_delta_scale, double bias) {
  return LayerTransform(absl::StrCat("mimetic_delta(w_scale=", w_delta_scale, ", bias=", bias, ")"),
                        [w_delta_scale, bias](const Model& m, int layer, Key) {
                          return SetDeltaToOne(m, layer, w_delta_scale, bias);
                        });
}

LayerTransform MimeticBC() {
  return LayerTransform("mimetic_bc",
                        [](const Model& m, int layer, Key) { return CorrelateCWithB(m, layer); });
}

LayerTransform MimeticConv() {
  return LayerTransform("mimetic_conv",
                        [](const Model& m, int layer, Key) { return MakeConvIdentity(m, layer); });
}

LayerTransform Mimetic(MimeticOptions o) {
  return LayerTransform("mimetic", [o](const Model& m, int layer, Key key) -> absl::StatusOr<Model> {
    ASSIGN_OR_RETURN(const LayerSpec* ls, MambaLayer(m, layer, "mimetic init"));
    // Applied as Δ, A, W_C, conv; the components touch disjoint parameters (or only the spec), so
    // any order gives the same model.
    std::vector<LayerTransform> parts;
    if (o.delta) parts.push_back(MimeticDelta(o.w_delta_scale, o.delta_bias));
    if (o.a) parts.push_back(MimeticA(o.c, o.reparameterize));
    if (o.bc) parts.push_back(MimeticBC());
    if (ls->has_mamba1() ? o.conv_mamba1 : o.conv_mamba2) parts.push_back(MimeticConv());
    return ComposeLayer(parts)(m, layer, key);
  });
}

}  // namespace mimetic::init
