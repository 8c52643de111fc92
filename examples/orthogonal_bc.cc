#include "examples/orthogonal_bc.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/core/random.h"
#include "mimetic/init/registry.h"
#include "mimetic/init/tree_edit.h"
#include "mimetic/models/proj_layout.h"

namespace examples {

using mimetic::init::CheckLayer;
using mimetic::init::EditRows;
using mimetic::init::Interval;
using mimetic::init::Key;
using mimetic::init::LayerSpec;
using mimetic::init::LayerTransform;
using mimetic::init::MixerPath;
using mimetic::init::Model;
using mimetic::init::Params;
using mimetic::init::ParamSpec;
using mimetic::init::RowEditor;
using mimetic::init::TransformInfo;

namespace {

// Gram-Schmidt on the rows of a (rows, cols) matrix, each row then scaled to norm `gain`.
void OrthonormalizeRows(double* m, int64_t rows, int64_t cols, double gain) {
  for (int64_t i = 0; i < rows; ++i) {
    double* r = m + i * cols;
    for (int64_t j = 0; j < i; ++j) {
      const double* q = m + j * cols;
      double dot = 0;
      for (int64_t k = 0; k < cols; ++k) dot += r[k] * q[k] / (gain * gain);
      for (int64_t k = 0; k < cols; ++k) r[k] -= dot * q[k];
    }
    double norm = 0;
    for (int64_t k = 0; k < cols; ++k) norm += r[k] * r[k];
    for (int64_t k = 0; k < cols; ++k) r[k] *= gain / std::sqrt(norm);
  }
}

}  // namespace

// ---- the transform: a pure function of (model, layer, key); errors are Status values ----
LayerTransform OrthogonalBC(double gain) {
  return LayerTransform("orthogonal_bc", [gain](const Model& m, int layer, Key key) -> absl::StatusOr<Model> {
    RETURN_IF_ERROR(CheckLayer(m, layer));
    const LayerSpec& ls = m.spec.layers(layer);
    if (!ls.has_mamba2()) {
      return absl::InvalidArgumentError(absl::StrCat("orthogonal_bc needs a Mamba 2 layer; layer ", layer,
                                                     " is ", mimetic::models::MixerKind(ls)));
    }
    const mimetic::models::Mamba2Dims d = mimetic::models::Mamba2DimsOf(ls.mamba2(), m.spec.d_model());
    if (d.N > d.D) {
      return absl::InvalidArgumentError(absl::StrCat("orthogonal_bc: ", d.N,
                                                     " rows (d_state) cannot be orthonormal in ", d.D,
                                                     " dimensions (d_model); expected d_state <= d_model"));
    }
    // Own randomness: the key (already folded with the layer index by OnLayers) folded with the name.
    ASSIGN_OR_RETURN(
        std::vector<double> w_b,
        mimetic::core::NormalVectorF64(mimetic::core::FoldIn(key, "orthogonal_bc"), d.G * d.N * d.D));
    for (int64_t g = 0; g < d.G; ++g) OrthonormalizeRows(w_b.data() + g * d.N * d.D, d.N, d.D, gain);
    const mimetic::models::Mamba2InProj in = mimetic::models::Mamba2InProjOf(d);  // (B rows, C rows, ...)
    Model out = m;  // never mutate the input: edits return a new tree
    ASSIGN_OR_RETURN(out.params, EditRows(m.params, MixerPath(layer, "in_proj/weight"), [&](RowEditor& w) {
                       RETURN_IF_ERROR(w.CopyFrom(in.B, w_b, 0));
                       return w.CopyFrom(in.C, w_b, 0);  // W_C := W_B
                     }));
    return out;
  });
}

// ---- the registration: a name, typed parameters with ranges, a factory ----
MIMETIC_REGISTER_INIT_TRANSFORM(OrthogonalBC, [] {
  TransformInfo info;
  info.name = "orthogonal_bc";
  info.doc = "W_B orthonormal rows (times gain), W_C := W_B: W_C W_Bᵀ = gain² I (examples/orthogonal_bc.h)";
  info.params = {
      ParamSpec::Double("gain", 1.0, Interval::LeftOpen(0, 10), "the norm of every row of W_B and W_C")};
  info.make_layer = [](const Params& p) -> absl::StatusOr<LayerTransform> {
    return OrthogonalBC(p.Double("gain"));
  };
  return info;
});

}  // namespace examples
