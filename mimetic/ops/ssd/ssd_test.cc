// SSD: a hand-computed example (forward and backward), the chunked fast path against the sequential
// reference for several chunk sizes (forward and backward, f32 and f64), finite differences of the
// fast path, the equivalence with a Mamba 1 selective scan whose A and Δ are tied per head,
// determinism across thread counts, and bad inputs.
#include "mimetic/ops/ssd/ssd.h"

#include <omp.h>

#include <algorithm>
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
using core::Key;
using core::ScopedCpuBackend;
using core::Shape;
using ::testing::HasSubstr;

template <typename T>
Tensor FromVec(const Shape& shape, const std::vector<T>& v) {
  absl::StatusOr<Tensor> t = Tensor::FromHost<T>(shape, v);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

template <typename T>
std::vector<T> Vec(const Tensor& t) {
  absl::StatusOr<std::vector<T>> v = t.ToVector<T>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<T>();
}

struct Sizes {
  int64_t b, l, h, p, g, n;
};

// Inputs [x, dt, A, Bm, Cm, D, dt_bias] with A in [-1.5, -0.2) and dt + dt_bias around 0.
std::vector<Tensor> RandomInputs(const Sizes& s, DType dtype, uint64_t seed) {
  const Key key = Key::FromSeed(seed);
  auto normal = [&](int i, const Shape& shape, double scale) {
    Tensor t = *core::Normal(core::FoldIn(key, i), shape, DType::kF64);
    std::vector<double> v = Vec<double>(t);
    for (double& e : v) e *= scale;
    if (dtype == DType::kF64) return FromVec<double>(shape, v);
    return FromVec<float>(shape, std::vector<float>(v.begin(), v.end()));
  };
  auto uniform = [&](int i, const Shape& shape, double lo, double hi) {
    return *core::Uniform(core::FoldIn(key, i), shape, lo, hi, dtype);
  };
  return {normal(0, {s.b, s.l, s.h, s.p}, 1.0), normal(1, {s.b, s.l, s.h}, 0.5),
          uniform(2, {s.h}, -1.5, -0.2),        normal(3, {s.b, s.l, s.g, s.n}, 1.0),
          normal(4, {s.b, s.l, s.g, s.n}, 1.0), normal(5, {s.h}, 1.0),
          uniform(6, {s.h}, -1.0, 0.5)};
}

// Cotangents dy (B, L, H, P) and dlast_state (B, H, P, N).
std::vector<Tensor> RandomCotangents(const Sizes& s, DType dtype, uint64_t seed) {
  const Key key = Key::FromSeed(seed);
  return {*core::Normal(core::FoldIn(key, 0), {s.b, s.l, s.h, s.p}, dtype),
          *core::Normal(core::FoldIn(key, 1), {s.b, s.h, s.p, s.n}, dtype)};
}

std::vector<Tensor> RunForward(Backend backend, const std::vector<Tensor>& in, int64_t chunk) {
  ScopedCpuBackend scope(backend);
  SsdResult r = Ssd(in[0], in[1], in[2], in[3], in[4], in[5], in[6], chunk);
  return {r.y, r.last_state};
}

std::vector<Tensor> RunBackward(Backend backend, const std::vector<Tensor>& in,
                                const std::vector<Tensor>& cot, int64_t chunk) {
  ScopedCpuBackend scope(backend);
  SsdGrads g = SsdBackward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], cot[0], cot[1], chunk);
  return {g.dx, g.ddt, g.dA, g.dB, g.dC, g.dD, g.ddt_bias};
}

// max |a - b| / max |b|: the error relative to the output's scale.
template <typename T>
double ScaledError(const Tensor& a, const Tensor& b) {
  std::vector<T> va = Vec<T>(a), vb = Vec<T>(b);
  EXPECT_EQ(va.size(), vb.size());
  double err = 0, scale = 0;
  for (size_t i = 0; i < va.size() && i < vb.size(); ++i) {
    err = std::max(err, std::abs(double(va[i]) - double(vb[i])));
    scale = std::max(scale, std::abs(double(vb[i])));
  }
  return scale == 0 ? err : err / scale;
}

// H = P = N = 1, L = 3, Δ = 1 (dt + dt_bias = softplus⁻¹(1) = ln(e - 1)), A = -ln 2 (decay 1/2),
// x = (1, 2, 3), B = (1, 1, 2), C = (1, 2, 1), D = 0.5:
//   state = 1, 0.5 + 2 = 2.5, 1.25 + 6 = 7.25;   y = state C + D x = 1.5, 6, 8.75.
// With dy = 1 and dlast_state = 0, ds[t] = C[t] + ds[t+1] / 2 = 2.25, 2.5, 1:
//   dx = D + Δ ds B = 2.75, 3, 2.5;   dB = Δ ds x = 2.25, 5, 3;   dC = state = 1, 2.5, 7.25;
//   dD = Σ x = 6;   dΔ[t] = ds x B + A (1/2) ds state[t-1] = 2.25, 5 - 1.25 ln 2, 6 - 1.25 ln 2;
//   dA = Σ Δ (1/2) ds state[t-1] = 0 + 1.25 + 1.25 = 2.5;  ddt = dΔ σ(ln(e - 1)) = dΔ (1 - 1/e).
TEST(SsdTest, HandComputedScalarExample) {
  const double zero_bias = std::log(std::exp(1.0) - 1.0);
  const double ln2 = std::log(2.0);
  for (Backend backend : {Backend::kReference, Backend::kCpu}) {
    for (int64_t chunk : {1, 2, 64}) {
      std::vector<Tensor> in = {FromVec<double>({1, 3, 1, 1}, {1, 2, 3}),
                                FromVec<double>({1, 3, 1}, {0, 0, 0}),
                                FromVec<double>({1}, {-ln2}),
                                FromVec<double>({1, 3, 1, 1}, {1, 1, 2}),
                                FromVec<double>({1, 3, 1, 1}, {1, 2, 1}),
                                FromVec<double>({1}, {0.5}),
                                FromVec<double>({1}, {zero_bias})};
      std::vector<Tensor> out = RunForward(backend, in, chunk);
      ASSERT_TRUE(out[0].ok()) << out[0].status();
      EXPECT_THAT(Vec<double>(out[0]), ::testing::Pointwise(::testing::DoubleNear(1e-12), {1.5, 6.0, 8.75}));
      EXPECT_NEAR(Vec<double>(out[1])[0], 7.25, 1e-12);

      std::vector<Tensor> cot = {FromVec<double>({1, 3, 1, 1}, {1, 1, 1}),
                                 FromVec<double>({1, 1, 1, 1}, {0})};
      std::vector<Tensor> g = RunBackward(backend, in, cot, chunk);
      ASSERT_TRUE(g[0].ok()) << g[0].status();
      const double s = 1.0 - 1.0 / std::exp(1.0);
      auto near = [](std::vector<double> v) { return ::testing::Pointwise(::testing::DoubleNear(1e-12), v); };
      EXPECT_THAT(Vec<double>(g[0]), near({2.75, 3.0, 2.5}));
      EXPECT_THAT(Vec<double>(g[1]), near({2.25 * s, (5 - 1.25 * ln2) * s, (6 - 1.25 * ln2) * s}));
      EXPECT_THAT(Vec<double>(g[2]), near({2.5}));
      EXPECT_THAT(Vec<double>(g[3]), near({2.25, 5.0, 3.0}));
      EXPECT_THAT(Vec<double>(g[4]), near({1.0, 2.5, 7.25}));
      EXPECT_THAT(Vec<double>(g[5]), near({6.0}));
      EXPECT_THAT(Vec<double>(g[6]), near({(2.25 + 5 - 1.25 * ln2 + 6 - 1.25 * ln2) * s}));
    }
  }
}

TEST(SsdTest, ChunkedForwardAndBackwardMatchReferenceF32) {
  const Sizes s{2, 37, 4, 5, 2, 6};
  std::vector<Tensor> in = RandomInputs(s, DType::kF32, 1);
  std::vector<Tensor> cot = RandomCotangents(s, DType::kF32, 2);
  std::vector<Tensor> ref = RunForward(Backend::kReference, in, 64);
  std::vector<Tensor> gref = RunBackward(Backend::kReference, in, cot, 64);
  for (int64_t chunk : {1, 4, 16, 37, 64}) {
    SCOPED_TRACE(::testing::Message() << "chunk_size " << chunk);
    std::vector<Tensor> fast = RunForward(Backend::kCpu, in, chunk);
    for (int k = 0; k < 2; ++k) EXPECT_LT(ScaledError<float>(fast[k], ref[k]), 1e-5) << "output " << k;
    std::vector<Tensor> gfast = RunBackward(Backend::kCpu, in, cot, chunk);
    for (int k = 0; k < 7; ++k) EXPECT_LT(ScaledError<float>(gfast[k], gref[k]), 1e-5) << "gradient " << k;
  }
}

TEST(SsdTest, ChunkedBackwardMatchesReferenceF64) {
  // Many (b, g) pairs (one head block per pair) and few (several blocks summed for dB/dC).
  for (const Sizes& s : {Sizes{1, 29, 6, 3, 2, 4}, Sizes{17, 7, 2, 2, 1, 3}}) {
    std::vector<Tensor> in = RandomInputs(s, DType::kF64, 3);
    std::vector<Tensor> cot = RandomCotangents(s, DType::kF64, 4);
    std::vector<Tensor> gref = RunBackward(Backend::kReference, in, cot, 8);
    for (int64_t chunk : {1, 3, 8, 100}) {
      std::vector<Tensor> gfast = RunBackward(Backend::kCpu, in, cot, chunk);
      for (int k = 0; k < 7; ++k) {
        EXPECT_LT(ScaledError<double>(gfast[k], gref[k]), 1e-12) << "gradient " << k << " chunk " << chunk;
      }
    }
  }
}

// Central differences of L = <dy, y> + <dlast, last_state> through the fast chunked path, against
// the VJP taken by core::Vjp under the fast backend (so SsdOp::Vjp -> SsdBackward on kCpu).
TEST(SsdTest, FastPathGradientMatchesFiniteDifferencesF64) {
  const Sizes s{1, 11, 2, 2, 1, 3};
  const int64_t chunk = 4;
  std::vector<Tensor> in = RandomInputs(s, DType::kF64, 5);
  std::vector<Tensor> cot = RandomCotangents(s, DType::kF64, 6);
  ScopedCpuBackend scope(Backend::kCpu);
  auto fn = [chunk](absl::Span<const Tensor> v) {
    SsdResult r = Ssd(v[0], v[1], v[2], v[3], v[4], v[5], v[6], chunk);
    return std::vector<Tensor>{r.y, r.last_state};
  };
  absl::StatusOr<std::vector<Tensor>> grads = core::Vjp(fn, in, cot);
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<double> dy = Vec<double>(cot[0]), dl = Vec<double>(cot[1]);
  auto loss = [&](const std::vector<Tensor>& v) {
    std::vector<Tensor> out = fn(v);
    std::vector<double> y = Vec<double>(out[0]), last = Vec<double>(out[1]);
    double total = 0;
    for (size_t i = 0; i < y.size(); ++i) total += dy[i] * y[i];
    for (size_t i = 0; i < last.size(); ++i) total += dl[i] * last[i];
    return total;
  };
  const double eps = 1e-6;
  for (size_t i = 0; i < in.size(); ++i) {
    std::vector<double> x = Vec<double>(in[i]);
    std::vector<double> analytic = Vec<double>((*grads)[i]);
    for (size_t e = 0; e < x.size(); ++e) {
      std::vector<Tensor> plus = in, minus = in;
      std::vector<double> xp = x, xm = x;
      xp[e] += eps;
      xm[e] -= eps;
      plus[i] = FromVec<double>(in[i].shape(), xp);
      minus[i] = FromVec<double>(in[i].shape(), xm);
      const double numeric = (loss(plus) - loss(minus)) / (2 * eps);
      EXPECT_NEAR(analytic[e], numeric, 1e-6 + 1e-5 * std::abs(numeric)) << "input " << i << " element " << e;
    }
  }
}

// SSD is the Mamba 1 selective scan with A[d, n] = A[h(d)] for every n, Δ[t, d] = Δ[t, h(d)] and the
// head's group B/C, channel d = (h, p) (mamba_ssm's mamba2.py). The Mamba 1 recurrence, written out per
// channel:
TEST(SsdTest, EqualsMamba1ScanWithHeadTiedDecay) {
  const Sizes s{2, 13, 4, 3, 2, 5};
  std::vector<Tensor> in = RandomInputs(s, DType::kF64, 7);
  std::vector<double> x = Vec<double>(in[0]), dt = Vec<double>(in[1]), a = Vec<double>(in[2]),
                      bm = Vec<double>(in[3]), cm = Vec<double>(in[4]), dskip = Vec<double>(in[5]),
                      bias = Vec<double>(in[6]);
  const int64_t E = s.h * s.p;
  std::vector<double> y(s.b * s.l * E), last(s.b * E * s.n);
  for (int64_t b = 0; b < s.b; ++b) {
    for (int64_t d = 0; d < E; ++d) {
      const int64_t h = d / s.p, g = h / (s.h / s.g);
      std::vector<double> A_dn(s.n, a[h]);  // Mamba 1's (E, N) A, tied over n
      std::vector<double> state(s.n, 0.0);
      for (int64_t t = 0; t < s.l; ++t) {
        const double z = dt[(b * s.l + t) * s.h + h] + bias[h];
        const double delta = z > 20 ? z : std::log1p(std::exp(z));
        const double u = x[(b * s.l + t) * E + d];
        double acc = 0;
        for (int64_t n = 0; n < s.n; ++n) {
          const int64_t bi = ((b * s.l + t) * s.g + g) * s.n + n;
          state[n] = std::exp(delta * A_dn[n]) * state[n] + delta * bm[bi] * u;
          acc += cm[bi] * state[n];
        }
        y[(b * s.l + t) * E + d] = acc + dskip[h] * u;
      }
      for (int64_t n = 0; n < s.n; ++n) last[(b * E + d) * s.n + n] = state[n];
    }
  }
  for (Backend backend : {Backend::kReference, Backend::kCpu}) {
    std::vector<Tensor> out = RunForward(backend, in, 4);
    std::vector<double> got_y = Vec<double>(out[0]), got_last = Vec<double>(out[1]);
    ASSERT_EQ(got_y.size(), y.size());
    for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(got_y[i], y[i], 1e-12 * (1 + std::abs(y[i])));
    // last_state (B, H, P, N) has the layout of Mamba 1's (B, E, N) with d = h P + p.
    ASSERT_EQ(got_last.size(), last.size());
    for (size_t i = 0; i < last.size(); ++i)
      EXPECT_NEAR(got_last[i], last[i], 1e-12 * (1 + std::abs(last[i])));
  }
}

TEST(SsdTest, DeterministicAcrossRunsAndThreadCounts) {
  const Sizes s{3, 40, 4, 8, 1, 16};
  std::vector<Tensor> in = RandomInputs(s, DType::kF32, 8);
  std::vector<Tensor> cot = RandomCotangents(s, DType::kF32, 9);
  const int saved = omp_get_max_threads();
  std::vector<std::vector<float>> first;
  for (int threads : {saved, 1, 3, saved}) {
    omp_set_num_threads(threads);
    std::vector<Tensor> out = RunForward(Backend::kCpu, in, 16);
    std::vector<Tensor> g = RunBackward(Backend::kCpu, in, cot, 16);
    out.insert(out.end(), g.begin(), g.end());
    std::vector<std::vector<float>> values;
    for (const Tensor& t : out) values.push_back(Vec<float>(t));
    if (first.empty()) {
      first = values;
    } else {
      for (size_t k = 0; k < values.size(); ++k)
        EXPECT_EQ(values[k], first[k]) << "tensor " << k << " threads " << threads;
    }
  }
  omp_set_num_threads(saved);
}

TEST(SsdTest, EmptySequenceGivesZeroState) {
  const Sizes s{2, 0, 2, 3, 1, 4};
  std::vector<Tensor> in = RandomInputs(s, DType::kF32, 10);
  for (Backend backend : {Backend::kReference, Backend::kCpu}) {
    std::vector<Tensor> out = RunForward(backend, in, 8);
    ASSERT_TRUE(out[1].ok()) << out[1].status();
    EXPECT_EQ(out[0].shape(), (Shape{2, 0, 2, 3}));
    EXPECT_THAT(Vec<float>(out[1]), ::testing::Each(0.0f));
    std::vector<Tensor> g = RunBackward(backend, in, RandomCotangents(s, DType::kF32, 14), 8);
    for (const Tensor& t : g) ASSERT_TRUE(t.ok()) << t.status();
    EXPECT_THAT(Vec<float>(g[2]), ::testing::Each(0.0f));  // dA
    EXPECT_THAT(Vec<float>(g[5]), ::testing::Each(0.0f));  // dD
  }
}

TEST(SsdTest, BadInputsNameTheOpAndShapes) {
  const Sizes s{1, 4, 3, 2, 1, 5};
  std::vector<Tensor> in = RandomInputs(s, DType::kF32, 11);
  // H = 3 heads with G = 2 groups.
  Tensor bm2 = *Tensor::Zeros({1, 4, 2, 5});
  SsdResult r = Ssd(in[0], in[1], in[2], bm2, bm2, in[5], in[6]);
  ASSERT_FALSE(r.y.ok());
  ASSERT_FALSE(r.last_state.ok());
  EXPECT_THAT(r.y.status().message(), HasSubstr("ssd("));
  EXPECT_THAT(r.y.status().message(), HasSubstr("not divisible"));
  EXPECT_THAT(r.y.status().message(), HasSubstr("(1, 4, 3, 2)"));
  EXPECT_THAT(r.y.status().message(), HasSubstr("(1, 4, 2, 5)"));
  // dt of the wrong length.
  r = Ssd(in[0], *Tensor::Zeros({1, 5, 3}), in[2], in[3], in[4], in[5], in[6]);
  EXPECT_THAT(r.y.status().message(), HasSubstr("ssd("));
  EXPECT_THAT(r.y.status().message(), HasSubstr("dt has shape (1, 5, 3)"));
  // Cm differs from Bm.
  r = Ssd(in[0], in[1], in[2], in[3], *Tensor::Zeros({1, 4, 1, 6}), in[5], in[6]);
  EXPECT_THAT(r.last_state.status().message(), HasSubstr("Cm has shape (1, 4, 1, 6)"));
  // A per state instead of per head.
  r = Ssd(in[0], in[1], *Tensor::Zeros({3, 5}), in[3], in[4], in[5], in[6]);
  EXPECT_THAT(r.y.status().message(), HasSubstr("A has shape (3, 5)"));
  // Wrong dtype.
  r = Ssd(in[0], in[1], in[2], in[3], in[4], *Tensor::Zeros({3}, DType::kF64), in[6]);
  EXPECT_THAT(r.y.status().message(), HasSubstr("D has dtype f64"));
  r = Ssd(*Tensor::Zeros({1, 4, 3, 2}, DType::kI32), in[1], in[2], in[3], in[4], in[5], in[6]);
  EXPECT_THAT(r.y.status().message(), HasSubstr("expected f32 or f64"));
  // Bad chunk size.
  r = Ssd(in[0], in[1], in[2], in[3], in[4], in[5], in[6], 0);
  EXPECT_THAT(r.y.status().message(), HasSubstr("chunk_size must be >= 1"));
  // Backward: dy of the wrong shape.
  SsdGrads g =
      SsdBackward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], *Tensor::Zeros({1, 4, 3, 3}), Tensor());
  ASSERT_FALSE(g.dB.ok());
  EXPECT_THAT(g.dx.status().message(), HasSubstr("ssd_backward("));
  EXPECT_THAT(g.dx.status().message(), HasSubstr("dy is f32(1, 4, 3, 3)"));
  // Error inputs pass through.
  r = Ssd(Tensor::Error(absl::InternalError("upstream")), in[1], in[2], in[3], in[4], in[5], in[6]);
  EXPECT_THAT(r.last_state.status().message(), HasSubstr("upstream"));
  // Only an absent dlast_state means zero: an upstream error passes through, even one whose text
  // is that of an absent tensor ("empty tensor").
  const Tensor dy = *Tensor::Zeros({1, 4, 3, 2});
  g = SsdBackward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], dy,
                  Tensor::Error(absl::FailedPreconditionError("empty tensor")));
  EXPECT_FALSE(g.dx.ok());
  EXPECT_FALSE(g.ddt_bias.ok());
  g = SsdBackward(in[0], in[1], in[2], in[3], in[4], in[5], in[6], dy, Tensor::Absent());
  EXPECT_TRUE(g.dx.ok()) << g.dx.status();
}

TEST(SsdTest, HugeChunkSizeIsClampedToTheLength) {
  const Sizes s{1, 5, 2, 3, 1, 2};
  std::vector<Tensor> in = RandomInputs(s, DType::kF64, 15);
  std::vector<Tensor> ref = RunForward(Backend::kReference, in, 4);
  std::vector<Tensor> fast = RunForward(Backend::kCpu, in, int64_t{1} << 40);
  ASSERT_TRUE(fast[0].ok()) << fast[0].status();
  EXPECT_LT(ScaledError<double>(fast[0], ref[0]), 1e-12);
}

TEST(SsdTest, EmptyDlastStateMeansZero) {
  const Sizes s{1, 6, 2, 2, 1, 3};
  std::vector<Tensor> in = RandomInputs(s, DType::kF64, 12);
  std::vector<Tensor> cot = RandomCotangents(s, DType::kF64, 13);
  cot[1] = *Tensor::Zeros(cot[1].shape(), DType::kF64);
  std::vector<Tensor> with_zeros = RunBackward(Backend::kCpu, in, cot, 4);
  cot[1] = Tensor();
  std::vector<Tensor> with_empty = RunBackward(Backend::kCpu, in, cot, 4);
  for (int k = 0; k < 7; ++k) EXPECT_EQ(Vec<double>(with_zeros[k]), Vec<double>(with_empty[k]));
}

}  // namespace
}  // namespace mimetic::ops
