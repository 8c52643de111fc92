#include "mimetic/init/mimetic.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "mimetic/init/tree_edit.h"
#include "mimetic/models/spec.h"

namespace mimetic::init {
namespace {

absl::Status NotMamba(const Model& m, int layer, const char* component) {
  return absl::InvalidArgumentError(absl::StrCat(component, " needs a Mamba 1 or Mamba 2 layer, but layer ",
                                                 layer, " is ", models::MixerKind(m.spec.layers(layer))));
}

// Scales rows [begin, end) of a row-major (rows, width) buffer.
void ScaleRows(std::vector<double>& v, int64_t width, int64_t begin, int64_t end, double scale) {
  for (int64_t i = begin * width; i < end * width; ++i) v[i] *= scale;
}

}  // namespace

LayerTransform MimeticA(double c, bool reparameterize) {
  return LayerTransform(
      absl::StrCat("mimetic_a(c=", c, reparameterize ? ", reparameterize" : ", init_only", ")"),
      [c, reparameterize](const Model& m, int layer, Key) -> absl::StatusOr<Model> {
        RETURN_IF_ERROR(CheckLayer(m, layer));
        Model out = m;
        LayerSpec* ls = out.spec.mutable_layers(layer);
        const bool m1 = ls->mixer_case() == LayerSpec::kMamba1;
        const bool m2 = ls->mixer_case() == LayerSpec::kMamba2;
        if (!m1 && !m2) return NotMamba(m, layer, "A≈1");
        if (reparameterize) {
          // A = -exp(-c A_log): the layer's parameterization changes, values stay.
          if (m1) ls->mutable_mamba1()->set_a_log_scale(-c);
          if (m2) ls->mutable_mamba2()->set_a_log_scale(-c);
          return out;
        }
        ASSIGN_OR_RETURN(out.params,
                         EditLeaf(m.params, MixerPath(layer, "A_log"), [c](std::vector<double>& v, int64_t) {
                           for (double& x : v) x = -c * x;
                           return absl::OkStatus();
                         }));
        return out;
      });
}

LayerTransform MimeticDelta(double w_delta_scale, double bias) {
  return LayerTransform(
      absl::StrCat("mimetic_delta(w_scale=", w_delta_scale, ", bias=", bias, ")"),
      [w_delta_scale, bias](const Model& m, int layer, Key) -> absl::StatusOr<Model> {
        RETURN_IF_ERROR(CheckLayer(m, layer));
        const LayerSpec& ls = m.spec.layers(layer);
        Model out = m;
        auto set_bias = [bias](std::vector<double>& v, int64_t) {
          std::fill(v.begin(), v.end(), bias);
          return absl::OkStatus();
        };
        if (ls.mixer_case() == LayerSpec::kMamba1) {
          // W_Δ = dt_proj.weight · x_proj.weight[:R]; scaling dt_proj alone keeps x_proj trainable.
          ASSIGN_OR_RETURN(out.params, EditLeaf(out.params, MixerPath(layer, "dt_proj/weight"),
                                                [w_delta_scale](std::vector<double>& v, int64_t) {
                                                  for (double& x : v) x *= w_delta_scale;
                                                  return absl::OkStatus();
                                                }));
          ASSIGN_OR_RETURN(out.params, EditLeaf(out.params, MixerPath(layer, "dt_proj/bias"), set_bias));
          return out;
        }
        if (ls.mixer_case() == LayerSpec::kMamba2) {
          const models::Mamba2Dims d = models::Mamba2DimsOf(ls.mamba2(), m.spec.d_model());
          const int64_t begin = 2 * d.E + 2 * d.G * d.N;
          RETURN_IF_ERROR(
              CheckShape(out.params, MixerPath(layer, "in_proj/weight"), {d.in_proj_rows(), d.D}));
          ASSIGN_OR_RETURN(out.params, EditLeaf(out.params, MixerPath(layer, "in_proj/weight"),
                                                [&](std::vector<double>& v, int64_t width) {
                                                  ScaleRows(v, width, begin, begin + d.H, w_delta_scale);
                                                  return absl::OkStatus();
                                                }));
          ASSIGN_OR_RETURN(out.params, EditLeaf(out.params, MixerPath(layer, "dt_bias"), set_bias));
          return out;
        }
        return NotMamba(m, layer, "Δ≈1");
      });
}

LayerTransform MimeticBC() {
  return LayerTransform("mimetic_bc", [](const Model& m, int layer, Key) -> absl::StatusOr<Model> {
    RETURN_IF_ERROR(CheckLayer(m, layer));
    const LayerSpec& ls = m.spec.layers(layer);
    int64_t b_begin, c_begin, rows;
    std::string path;
    if (ls.mixer_case() == LayerSpec::kMamba1) {
      const models::Mamba1Dims d = models::Mamba1DimsOf(ls.mamba1(), m.spec.d_model());
      path = MixerPath(layer, "x_proj/weight");
      RETURN_IF_ERROR(CheckShape(m.params, path, {d.R + 2 * d.N, d.E}));
      b_begin = d.R;
      c_begin = d.R + d.N;
      rows = d.N;
    } else if (ls.mixer_case() == LayerSpec::kMamba2) {
      const models::Mamba2Dims d = models::Mamba2DimsOf(ls.mamba2(), m.spec.d_model());
      path = MixerPath(layer, "in_proj/weight");
      RETURN_IF_ERROR(CheckShape(m.params, path, {d.in_proj_rows(), d.D}));
      // Rows of group g of B and of C sit at the same offset within their blocks.
      b_begin = 2 * d.E;
      c_begin = 2 * d.E + d.G * d.N;
      rows = d.G * d.N;
    } else {
      return NotMamba(m, layer, "W_CᵀW_B≈I");
    }
    Model out = m;
    ASSIGN_OR_RETURN(out.params, EditLeaf(m.params, path, [&](std::vector<double>& v, int64_t width) {
                       for (int64_t r = 0; r < rows; ++r) {
                         for (int64_t k = 0; k < width; ++k) {
                           double& c = v[(c_begin + r) * width + k];
                           c = 0.5 * (c + v[(b_begin + r) * width + k]);
                         }
                       }
                       return absl::OkStatus();
                     }));
    return out;
  });
}

LayerTransform MimeticConv() {
  return LayerTransform("mimetic_conv", [](const Model& m, int layer, Key) -> absl::StatusOr<Model> {
    RETURN_IF_ERROR(CheckLayer(m, layer));
    const LayerSpec& ls = m.spec.layers(layer);
    if (ls.mixer_case() != LayerSpec::kMamba1 && ls.mixer_case() != LayerSpec::kMamba2) {
      return NotMamba(m, layer, "conv≈I");
    }
    Model out = m;
    ASSIGN_OR_RETURN(out.params, EditLeaf(m.params, MixerPath(layer, "conv1d/weight"),
                                          [](std::vector<double>& v, int64_t k) {
                                            // (C, 1, K): the last tap multiplies the current token.
                                            for (size_t i = 0; i < v.size(); ++i) {
                                              v[i] = (static_cast<int64_t>(i) % k == k - 1) ? 1.0 : 0.0;
                                            }
                                            return absl::OkStatus();
                                          }));
    if (out.params.Contains(MixerPath(layer, "conv1d/bias"))) {
      ASSIGN_OR_RETURN(out.params, EditLeaf(out.params, MixerPath(layer, "conv1d/bias"),
                                            [](std::vector<double>& v, int64_t) {
                                              std::fill(v.begin(), v.end(), 0.0);
                                              return absl::OkStatus();
                                            }));
    }
    return out;
  });
}

LayerTransform Mimetic(MimeticOptions o) {
  return LayerTransform("mimetic", [o](const Model& m, int layer, Key key) -> absl::StatusOr<Model> {
    RETURN_IF_ERROR(CheckLayer(m, layer));
    const LayerSpec& ls = m.spec.layers(layer);
    const bool m1 = ls.mixer_case() == LayerSpec::kMamba1;
    if (!m1 && ls.mixer_case() != LayerSpec::kMamba2) return NotMamba(m, layer, "mimetic init");
    // Order of spec §3.7: Δ, A, W_C averaging, conv.
    std::vector<LayerTransform> parts;
    if (o.delta) parts.push_back(MimeticDelta(o.w_delta_scale, o.delta_bias));
    if (o.a) parts.push_back(MimeticA(o.c, o.reparameterize));
    if (o.bc) parts.push_back(MimeticBC());
    if (m1 ? o.conv_mamba1 : o.conv_mamba2) parts.push_back(MimeticConv());
    return ComposeLayer(parts)(m, layer, key);
  });
}

}  // namespace mimetic::init
