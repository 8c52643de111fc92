// How to test an init transform statistically (docs/init_transforms.md, "Testing a transform"): state
// what distribution the transform should draw from, derive each statistic's mean and standard error
// from it, draw independent samples from independent keys, and allow a fixed number of standard
// errors. Deterministic keys make the test itself deterministic: it passes or fails the same way on
// every machine, and the 4-standard-error bound makes a false alarm rare if a seed set is changed.
#include "examples/orthogonal_bc.h"

#include <cmath>

#include "gtest/gtest.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"

namespace examples {
namespace {

using mimetic::init::Compose;
using mimetic::init::DefaultInit;
using mimetic::init::Model;
using mimetic::init::OnLayers;

constexpr char kSpec[] =
    "vocab_size: 12 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 4 headdim: 8 chunk_size: 8 } }";

// The (N, D) block W_B of layer `layer`, row-major.
std::vector<double> WB(const Model& m, int layer) {
  const auto d = mimetic::models::Mamba2DimsOf(m.spec.layers(layer).mamba2(), m.spec.d_model());
  const auto in = mimetic::models::Mamba2InProjOf(d);
  const std::vector<float> w = m.params.Get("layers/" + std::to_string(layer) + "/mixer/in_proj/weight")
                                   .value()
                                   .ToVector<float>()
                                   .value();
  return std::vector<double>(w.begin() + in.B.begin * d.D, w.begin() + in.B.end() * d.D);
}

// Gram-Schmidt of a Gaussian matrix gives Haar-distributed orthonormal rows: every row is uniform on
// the unit sphere in D dimensions. One entry w of such a row has E[w] = 0, E[w²] = 1/D and
// E[w⁴] = 3 / (D (D + 2)). Over S independent keys the sample means are then within 4 standard
// errors (sqrt(Var / S)) of those values; rows of different layers (keys folded with different
// layer indices) are independent, so the mean product of their entries is within 4 standard errors
// (1/D / sqrt(S)) of 0.
TEST(OrthogonalBCTest, RowsAreUniformOnTheSphereAndLayersAreIndependent) {
  const mimetic::models::ModelSpec spec = mimetic::models::ParseModelSpec(kSpec).value();
  const mimetic::init::Transform t = Compose({DefaultInit(), OnLayers({0, 1}, OrthogonalBC())});
  const int S = 400;
  const double D = 16;
  // Entry (0, 0), entry (3, 15) (last row, last column: after three Gram-Schmidt steps), and the
  // product of layer 0's and layer 1's entry (0, 0).
  double first = 0, first_sq = 0, last = 0, last_sq = 0, cross = 0;
  for (int s = 0; s < S; ++s) {
    const Model m = mimetic::init::MakeModel(spec, t, mimetic::core::Key::FromSeed(s)).value();
    const std::vector<double> b0 = WB(m, 0), b1 = WB(m, 1);
    first += b0[0] / S;
    first_sq += b0[0] * b0[0] / S;
    last += b0.back() / S;
    last_sq += b0.back() * b0.back() / S;
    cross += b0[0] * b1[0] / S;
  }
  const double var_w = 1 / D, var_w_sq = 3 / (D * (D + 2)) - 1 / (D * D);
  EXPECT_NEAR(first, 0.0, 4 * std::sqrt(var_w / S));
  EXPECT_NEAR(last, 0.0, 4 * std::sqrt(var_w / S));
  EXPECT_NEAR(first_sq, 1 / D, 4 * std::sqrt(var_w_sq / S));
  EXPECT_NEAR(last_sq, 1 / D, 4 * std::sqrt(var_w_sq / S));
  EXPECT_NEAR(cross, 0.0, 4 * (1 / D) / std::sqrt(S));
}

// What a statistical test cannot see, an exact one checks: orthonormal rows for every key.
TEST(OrthogonalBCTest, RowsAreOrthonormalWithTheGainAsNorm) {
  const mimetic::models::ModelSpec spec = mimetic::models::ParseModelSpec(kSpec).value();
  for (double gain : {1.0, 0.5}) {
    const Model m =
        mimetic::init::MakeModel(spec, Compose({DefaultInit(), OnLayers({1}, OrthogonalBC(gain))}),
                                 mimetic::core::Key::FromSeed(9))
            .value();
    const std::vector<double> b = WB(m, 1);  // (N, D) = (4, 16)
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        double dot = 0;
        for (int k = 0; k < 16; ++k) dot += b[i * 16 + k] * b[j * 16 + k];
        EXPECT_NEAR(dot, i == j ? gain * gain : 0.0, 1e-6) << gain << " (" << i << ", " << j << ")";
      }
    }
  }
}

}  // namespace
}  // namespace examples
