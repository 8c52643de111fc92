#include "mimetic/ops/selective_scan/selective_scan.h"

#include <omp.h>

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/key.h"
#include "mimetic/core/op.h"
#include "mimetic/core/random.h"

namespace mimetic::ops {
namespace {

using core::Backend;
using core::DType;
using core::Shape;
using ::testing::HasSubstr;

Tensor F32(const Shape& shape, std::vector<float> v) { return Tensor::FromHost<float>(shape, v).value(); }
Tensor F64(const Shape& shape, std::vector<double> v) { return Tensor::FromHost<double>(shape, v).value(); }
std::vector<double> Values(const Tensor& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  if (t.dtype() == DType::kF64) return t.ToVector<double>().value();
  std::vector<float> f = t.ToVector<float>().value();
  return std::vector<double>(f.begin(), f.end());
}
void ExpectNear(const Tensor& t, const std::vector<double>& expected, double tol) {
  std::vector<double> v = Values(t);
  ASSERT_EQ(v.size(), expected.size());
  for (size_t i = 0; i < v.size(); ++i)
    EXPECT_NEAR(v[i], expected[i], tol * (1 + std::abs(expected[i]))) << i;
}

const Backend kBackends[] = {Backend::kReference, Backend::kCpu};

// One channel, N = 1, no softplus, no gate: u = (1, 2, -1), dt = (0.5, 1, 0.25), A = -1,
// B = (1, 0.5, 2), C = (2, 1, -1), D = 0.5:
//   h0 = 0.5·1·1 = 0.5                              y0 = 2·0.5 + 0.5·1 = 1.5
//   h1 = e^-1·0.5 + 1·0.5·2 = 1 + 0.5/e             y1 = h1 + 0.5·2
//   h2 = e^-0.25·h1 + 0.25·2·(−1) = e^-0.25 h1 − 0.5  y2 = −h2 − 0.5
TEST(SelectiveScanTest, HandComputedOneChannel) {
  const double h1 = 1 + 0.5 * std::exp(-1.0), h2 = std::exp(-0.25) * h1 - 0.5;
  for (Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    SelectiveScanResult r =
        SelectiveScan(F32({1, 3, 1}, {1, 2, -1}), F32({1, 3, 1}, {0.5, 1, 0.25}), F32({1, 1}, {-1}),
                      F32({1, 3, 1}, {1, 0.5, 2}), F32({1, 3, 1}, {2, 1, -1}), F32({1}, {0.5}), Tensor(),
                      Tensor(), /*delta_softplus=*/false);
    ExpectNear(r.y, {1.5, h1 + 1, -h2 - 0.5}, 1e-6);
    ExpectNear(r.last_state, {h2}, 1e-6);
    EXPECT_EQ(r.last_state.shape(), (Shape{1, 1, 1}));
  }
}

// Same with a gate and softplus: L = 1, delta = 0, bias = ln(e − 1) so dt = softplus(ln(e − 1)) = 1;
// y = (C·1·B·u + D·u)·silu(z) with u = 2, B = 3, C = 0.5, D = 1, z = 1: (3 + 2)·(1/(1 + e^-1)).
TEST(SelectiveScanTest, HandComputedGateAndSoftplus) {
  for (Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    SelectiveScanResult r = SelectiveScan(F64({1, 1, 1}, {2}), F64({1, 1, 1}, {0}), F64({1, 1}, {-0.7}),
                                          F64({1, 1, 1}, {3}), F64({1, 1, 1}, {0.5}), F64({1}, {1}),
                                          F64({1, 1, 1}, {1}), F64({1}, {std::log(M_E - 1)}), true);
    ExpectNear(r.y, {5.0 / (1 + std::exp(-1.0))}, 1e-12);
    ExpectNear(r.last_state, {6}, 1e-12);
  }
}

// L = 2 of the first example with dy = (1, 1): g1 = C1 = 1, g0 = C0 + e^-1 g1 = 2 + 1/e.
//   dA = g1·dt1·e^-1·h0 = 0.5/e;  dB = (g0·dt0·u0, g1·dt1·u1) = ((2 + 1/e)/2, 2);  dC = (h0, h1)
//   du = (D + dt0·g0·B0, D + dt1·g1·B1);  ddelta = (g0·B0·u0, g1·(B1·u1 + A·e^-1·h0));  dD = u0 + u1
TEST(SelectiveScanTest, HandComputedBackward) {
  const double e1 = std::exp(-1.0), g0 = 2 + e1, h1 = 1 + 0.5 * e1;
  for (Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    SelectiveScanGrads g = SelectiveScanBackward(
        F64({1, 2, 1}, {1, 2}), F64({1, 2, 1}, {0.5, 1}), F64({1, 1}, {-1}), F64({1, 2, 1}, {1, 0.5}),
        F64({1, 2, 1}, {2, 1}), F64({1}, {0.5}), Tensor(), Tensor(), F64({1, 2, 1}, {1, 1}), Tensor(), false);
    ExpectNear(g.dA, {0.5 * e1}, 1e-12);
    ExpectNear(g.dB, {g0 / 2, 2}, 1e-12);
    ExpectNear(g.dC, {0.5, h1}, 1e-12);
    ExpectNear(g.du, {0.5 + 0.5 * g0, 1}, 1e-12);
    ExpectNear(g.ddelta, {g0, 1 - 0.5 * e1}, 1e-12);
    ExpectNear(g.dD, {3}, 1e-12);
    EXPECT_FALSE(g.dz.ok());
    EXPECT_FALSE(g.ddelta_bias.ok());
  }
}

struct Inputs {
  int64_t B, L, E, N;
  std::vector<Tensor> t;  // u, delta, A, Bm, Cm, D, z, delta_bias, dy, dlast
};

Inputs RandomInputs(int64_t B, int64_t L, int64_t E, int64_t N, DType dtype, uint64_t seed) {
  core::Key key = core::Key::FromSeed(seed);
  auto normal = [&](int i, Shape s) { return core::Normal(core::FoldIn(key, i), s, dtype).value(); };
  auto uniform = [&](int i, Shape s, double lo, double hi) {
    return core::Uniform(core::FoldIn(key, i), s, lo, hi, dtype).value();
  };
  return {B,
          L,
          E,
          N,
          {normal(0, {B, L, E}), normal(1, {B, L, E}), uniform(2, {E, N}, -2, -0.05), normal(3, {B, L, N}),
           normal(4, {B, L, N}), normal(5, {E}), normal(6, {B, L, E}), uniform(7, {E}, -1, 1),
           normal(8, {B, L, E}), normal(9, {B, E, N})}};
}

// A naive recurrence, one step at a time over a (B, E, N) state, in double.
TEST(SelectiveScanTest, MatchesNaiveStepByStepRecurrence) {
  const Inputs in = RandomInputs(2, 23, 21, 5, DType::kF64, 7);
  std::vector<std::vector<double>> v;
  for (const Tensor& t : in.t) v.push_back(Values(t));
  const int64_t B = in.B, L = in.L, E = in.E, N = in.N;
  std::vector<double> state(B * E * N, 0.0), y(B * L * E);
  for (int64_t t = 0; t < L; ++t) {
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t d = 0; d < E; ++d) {
        const int64_t i = (b * L + t) * E + d;
        const double raw = v[1][i] + v[7][d];
        const double dt = raw > 20 ? raw : std::log(1 + std::exp(raw));
        double out = v[5][d] * v[0][i];
        for (int64_t n = 0; n < N; ++n) {
          double& h = state[(b * E + d) * N + n];
          h = std::exp(dt * v[2][d * N + n]) * h + dt * v[3][(b * L + t) * N + n] * v[0][i];
          out += v[4][(b * L + t) * N + n] * h;
        }
        y[i] = out * v[6][i] / (1 + std::exp(-v[6][i]));
      }
    }
  }
  for (DType dtype : {DType::kF64, DType::kF32}) {
    std::vector<Tensor> x;  // the same values, rounded to f32 for the f32 run
    for (size_t k = 0; k < in.t.size(); ++k) {
      x.push_back(dtype == DType::kF64 ? in.t[k]
                                       : F32(in.t[k].shape(), std::vector<float>(v[k].begin(), v[k].end())));
    }
    for (Backend backend : kBackends) {
      core::ScopedCpuBackend scope(backend);
      SelectiveScanResult r = SelectiveScan(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], true);
      const double tol = dtype == DType::kF64 ? 1e-12 : 2e-5;
      ExpectNear(r.y, y, tol);
      ExpectNear(r.last_state, state, tol);
    }
  }
}

std::vector<Tensor> AllGrads(const SelectiveScanGrads& g) {
  return {g.du, g.ddelta, g.dA, g.dB, g.dC, g.dD, g.dz, g.ddelta_bias};
}

// The fast backward recomputes states chunk by chunk; for every chunk size it must agree with the
// reference backward, which stores every state.
TEST(SelectiveScanTest, ChunkedBackwardEqualsUnchunkedReference) {
  const Inputs x = RandomInputs(2, 37, 5, 3, DType::kF64, 11);
  const auto& t = x.t;
  std::vector<Tensor> expected;
  {
    core::ScopedCpuBackend scope(Backend::kReference);
    expected =
        AllGrads(SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], true));
  }
  for (int64_t chunk : {1, 2, 5, 16, 36, 37, 64, 1000}) {
    core::ScopedCpuBackend scope(Backend::kCpu);
    std::vector<Tensor> got = AllGrads(
        SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], true, chunk));
    for (size_t k = 0; k < got.size(); ++k) {
      SCOPED_TRACE(::testing::Message() << "chunk " << chunk << " grad " << k);
      ExpectNear(got[k], Values(expected[k]), 1e-12);
    }
  }
}

// The VJP of SelectiveScan (through the tape, fast backend, small chunks) gives the backward op's
// result for cotangents (dy, dlast_state).
TEST(SelectiveScanTest, VjpUsesBackwardWithLastStateCotangent) {
  const Inputs x = RandomInputs(2, 9, 4, 3, DType::kF64, 13);
  const auto& t = x.t;
  std::vector<Tensor> expected;
  {
    core::ScopedCpuBackend scope(Backend::kReference);
    expected =
        AllGrads(SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], true));
  }
  core::ScopedCpuBackend scope(Backend::kCpu);
  auto f = [](absl::Span<const Tensor> in) {
    SelectiveScanResult r = SelectiveScan(in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7], true, 4);
    return std::vector<Tensor>{r.y, r.last_state};
  };
  std::vector<Tensor> wrt(t.begin(), t.begin() + 8);
  auto grads = core::Vjp(f, wrt, {t[8], t[9]});
  ASSERT_TRUE(grads.ok()) << grads.status();
  for (size_t k = 0; k < 8; ++k) ExpectNear((*grads)[k], Values(expected[k]), 1e-12);
}

// Same bits for any thread count (fixed partition of the reductions over d and b).
TEST(SelectiveScanTest, DeterministicAcrossThreadCounts) {
  const Inputs x = RandomInputs(3, 30, 40, 8, DType::kF32, 17);
  const auto& t = x.t;
  core::ScopedCpuBackend scope(Backend::kCpu);
  std::vector<std::vector<double>> runs[2];
  const int saved = omp_get_max_threads();
  for (int threads : {1, 3}) {
    omp_set_num_threads(threads);
    SelectiveScanResult r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], true);
    std::vector<std::vector<double>>& run = runs[threads == 1 ? 0 : 1];
    run.push_back(Values(r.y));
    run.push_back(Values(r.last_state));
    for (const Tensor& g : AllGrads(
             SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], t[9], true, 8))) {
      run.push_back(Values(g));
    }
  }
  omp_set_num_threads(saved);
  ASSERT_EQ(runs[0].size(), runs[1].size());
  for (size_t k = 0; k < runs[0].size(); ++k) EXPECT_EQ(runs[0][k], runs[1][k]) << "output " << k;
}

// Only absent tensors mean "no gate" / "zero dlast_state"; an error tensor, even one with the text of
// an absent tensor, is an upstream error and reaches every output.
TEST(SelectiveScanTest, ErrorTensorsAreNotAbsent) {
  const Inputs x = RandomInputs(2, 5, 3, 2, DType::kF64, 31);
  const auto& t = x.t;
  const Tensor fake_absent = Tensor::Error(absl::FailedPreconditionError("empty tensor"));
  SelectiveScanResult r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], fake_absent, t[7], true);
  EXPECT_FALSE(r.y.ok());
  EXPECT_FALSE(r.last_state.ok());
  SelectiveScanGrads g =
      SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], fake_absent, true);
  EXPECT_FALSE(g.du.ok());
  EXPECT_FALSE(g.dz.ok());
  EXPECT_FALSE(g.ddelta_bias.ok());
  g = SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], Tensor::Absent(), true);
  EXPECT_TRUE(g.du.ok()) << g.du.status();
  EXPECT_TRUE(g.ddelta_bias.ok()) << g.ddelta_bias.status();
}

TEST(SelectiveScanTest, BadShapesNameOpAndShapes) {
  const Inputs x = RandomInputs(2, 5, 3, 2, DType::kF32, 19);
  const auto& t = x.t;
  // A not (E, N).
  Tensor bad_a = core::Normal(core::Key::FromSeed(1), {4, 2}).value();
  SelectiveScanResult r = SelectiveScan(t[0], t[1], bad_a, t[3], t[4], t[5], t[6], t[7], true);
  ASSERT_FALSE(r.y.ok());
  EXPECT_THAT(r.y.status().message(), HasSubstr("selective_scan"));
  EXPECT_THAT(r.y.status().message(), HasSubstr("A is (4, 2); expected (E, N) = (3, 2)"));
  EXPECT_FALSE(r.last_state.ok());
  // Bm of another length.
  Tensor bad_b = core::Normal(core::Key::FromSeed(2), {2, 6, 2}).value();
  r = SelectiveScan(t[0], t[1], t[2], bad_b, t[4], t[5], Tensor(), Tensor(), false);
  ASSERT_FALSE(r.y.ok());
  EXPECT_THAT(r.y.status().message(), HasSubstr("selective_scan"));
  EXPECT_THAT(r.y.status().message(), HasSubstr("Bm is (2, 6, 2); expected (B, L, N) = (2, 5, 2)"));
  // z of the wrong shape.
  Tensor bad_z = core::Normal(core::Key::FromSeed(3), {2, 5, 4}).value();
  r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], bad_z, Tensor(), true);
  ASSERT_FALSE(r.y.ok());
  EXPECT_THAT(r.y.status().message(), HasSubstr("selective_scan"));
  EXPECT_THAT(r.y.status().message(), HasSubstr("z is (2, 5, 4); expected (B, L, E) = (2, 5, 3)"));
  // Mixed dtypes.
  Tensor d64 = core::Normal(core::Key::FromSeed(4), {3}, DType::kF64).value();
  r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], d64, Tensor(), Tensor(), true);
  ASSERT_FALSE(r.y.ok());
  EXPECT_THAT(r.y.status().message(), HasSubstr("f64(3)"));
  EXPECT_THAT(r.y.status().message(), HasSubstr("expected dtype f32"));
  // A missing required input.
  r = SelectiveScan(Tensor(), t[1], t[2], t[3], t[4], t[5], Tensor(), Tensor(), true);
  EXPECT_THAT(r.y.status().message(), HasSubstr("selective_scan: required input u is an empty Tensor()"));
  // Backward: a dy of the wrong shape, and a bad chunk size.
  SelectiveScanGrads g =
      SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[9], Tensor(), true);
  ASSERT_FALSE(g.du.ok());
  EXPECT_THAT(g.du.status().message(), HasSubstr("selective_scan_backward"));
  EXPECT_THAT(g.dz.status().message(), HasSubstr("dy is (2, 3, 2); expected (B, L, E) = (2, 5, 3)"));
  r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], true, /*chunk_size=*/0);
  EXPECT_THAT(r.y.status().message(), HasSubstr("chunk_size is 0; expected >= 1"));
}

// Empty sequences: y is empty, the last state is h[-1] = 0, and every gradient is zero.
TEST(SelectiveScanTest, EmptySequence) {
  const Inputs x = RandomInputs(2, 0, 3, 2, DType::kF32, 29);
  const auto& t = x.t;
  for (Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    SelectiveScanResult r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], true);
    EXPECT_EQ(r.y.shape(), (Shape{2, 0, 3}));
    ExpectNear(r.last_state, std::vector<double>(12, 0.0), 0);
    SelectiveScanGrads g =
        SelectiveScanBackward(t[0], t[1], t[2], t[3], t[4], t[5], t[6], t[7], t[8], Tensor(), true);
    ExpectNear(g.dA, std::vector<double>(6, 0.0), 0);
    ExpectNear(g.dD, std::vector<double>(3, 0.0), 0);
    ExpectNear(g.ddelta_bias, std::vector<double>(3, 0.0), 0);
    EXPECT_EQ(g.dB.shape(), (Shape{2, 0, 2}));
  }
}

// An upstream error passes through unchanged.
TEST(SelectiveScanTest, PropagatesInputErrors) {
  const Inputs x = RandomInputs(1, 2, 2, 2, DType::kF32, 23);
  const auto& t = x.t;
  Tensor err = Tensor::Error(absl::InvalidArgumentError("upstream failed"));
  SelectiveScanResult r = SelectiveScan(t[0], t[1], t[2], t[3], t[4], t[5], err, t[7], true);
  EXPECT_THAT(r.y.status().message(), HasSubstr("upstream failed"));
  EXPECT_THAT(r.last_state.status().message(), HasSubstr("upstream failed"));
}

}  // namespace
}  // namespace mimetic::ops
