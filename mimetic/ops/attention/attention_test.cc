// Worked examples for causal softmax / linear attention, run on both CPU backends (reference and
// fast): hand-computed L = 2 values and gradients, identical keys (a running mean), an explicit
// recurrent linear attention, properties of the maps, determinism, and bad inputs.
#include "mimetic/ops/attention/attention.h"

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

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor F32(core::Shape shape, std::vector<float> v) { return Tensor::FromHost<float>(shape, v).value(); }
Tensor Randn(core::Shape shape, uint32_t seed, core::DType dtype = core::DType::kF32) {
  return core::Normal(core::FoldIn(core::Key::FromSeed(7), seed), shape, dtype).value();
}

std::vector<float> Values(const Tensor& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t.ToVector<float>().value() : std::vector<float>{};
}

MATCHER_P(FloatNear, tol, "") { return std::abs(std::get<0>(arg) - std::get<1>(arg)) <= tol; }

class AttentionTest : public ::testing::TestWithParam<core::Backend> {
 protected:
  core::ScopedCpuBackend backend_{GetParam()};
};

// q = [1, 2], k = [0, 1], v = [3, 5] (B = H = P = 1, L = 2), scale 1.
// t = 0 sees only s = 0: out = 3. t = 1: scores (2·0, 2·1) = (0, 2), weights a = 1/(1+e²), b = e²/(1+e²),
// out = 3a + 5b. With dout = [1, 1]: dv = (1 + a, b); dW row 1 = (3, 5), so dS row 1 =
// (a(3 - 3a - 5b), b(5 - 3a - 5b)) = (-2ab, 2ab) and dS row 0 = 0; dq = (0, 2ab·k1) = (0, 2ab),
// dk = (dS10·q1, dS11·q1) = (-4ab, 4ab).
TEST_P(AttentionTest, SoftmaxHandComputedL2) {
  const Tensor q = F32({1, 2, 1, 1}, {1, 2}), k = F32({1, 2, 1, 1}, {0, 1}), v = F32({1, 2, 1, 1}, {3, 5});
  const double e2 = std::exp(2.0), a = 1 / (1 + e2), b = e2 / (1 + e2);
  EXPECT_THAT(Values(CausalSoftmaxAttention(q, k, v, 1.0)), Pointwise(FloatNear(1e-6), {3.0, 3 * a + 5 * b}));
  EXPECT_THAT(Values(CausalSoftmaxAttentionWeights(q, k, 1.0)), Pointwise(FloatNear(1e-6), {1.0, 0.0, a, b}));

  const Tensor dout = F32({1, 2, 1, 1}, {1, 1});
  const std::vector<Tensor> g = CausalSoftmaxAttentionBackward(q, k, v, dout, 1.0);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_THAT(Values(g[0]), Pointwise(FloatNear(1e-6), {0.0, 2 * a * b}));
  EXPECT_THAT(Values(g[1]), Pointwise(FloatNear(1e-6), {-4 * a * b, 4 * a * b}));
  EXPECT_THAT(Values(g[2]), Pointwise(FloatNear(1e-6), {1 + a, b}));

  // The same through the tape (the op's Vjp).
  auto f = [](absl::Span<const Tensor> x) {
    return std::vector<Tensor>{CausalSoftmaxAttention(x[0], x[1], x[2], 1.0)};
  };
  auto vjp = core::Vjp(f, {q, k, v}, {dout});
  ASSERT_TRUE(vjp.ok()) << vjp.status();
  EXPECT_THAT(Values((*vjp)[1]), Pointwise(FloatNear(1e-6), {-4 * a * b, 4 * a * b}));
}

// q = [1, 2], k = [3, -1], v = [2, 4]: weights [[3, 0], [6, -2]], out = (3·2, 6·2 - 2·4) = (6, 4).
// dout = [1, 1]: dv = (3 + 6, -2); dS = dW = [[2, 0], [2, 4]] (dout_t v_s);
// dq = (2·3, 2·3 + 4·(-1)) = (6, 2); dk = (2·1 + 2·2, 4·2) = (6, 8).
TEST_P(AttentionTest, LinearHandComputedL2) {
  const Tensor q = F32({1, 2, 1, 1}, {1, 2}), k = F32({1, 2, 1, 1}, {3, -1}), v = F32({1, 2, 1, 1}, {2, 4});
  EXPECT_THAT(Values(CausalLinearAttention(q, k, v)), ElementsAre(6.f, 4.f));
  EXPECT_THAT(Values(CausalLinearAttentionWeights(q, k)), ElementsAre(3.f, 0.f, 6.f, -2.f));
  const std::vector<Tensor> g = CausalLinearAttentionBackward(q, k, v, F32({1, 2, 1, 1}, {1, 1}));
  EXPECT_THAT(Values(g[0]), ElementsAre(6.f, 2.f));
  EXPECT_THAT(Values(g[1]), ElementsAre(6.f, 8.f));
  EXPECT_THAT(Values(g[2]), ElementsAre(9.f, -2.f));
  // Weights backward with dW = [[1, 7], [1, 1]]: the 7 above the diagonal is ignored;
  // dq = (3, 3 - 1) and dk = (1 + 2, 2).
  const std::vector<Tensor> gw = CausalLinearAttentionWeightsBackward(q, k, F32({1, 1, 2, 2}, {1, 7, 1, 1}));
  EXPECT_THAT(Values(gw[0]), ElementsAre(3.f, 2.f));
  EXPECT_THAT(Values(gw[1]), ElementsAre(3.f, 2.f));
}

// With every key of a head equal, all scores of a row tie, so out_t = mean_{s<=t} v_s.
TEST_P(AttentionTest, SoftmaxIdenticalKeysGiveRunningMean) {
  const int64_t B = 2, L = 37, H = 3, P = 4;
  const Tensor q = Randn({B, L, H, P}, 1), v = Randn({B, L, H, P}, 2);
  const std::vector<float> key_rows = Values(Randn({B, H, P}, 3));
  std::vector<float> kv(B * L * H * P);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < L; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t p = 0; p < P; ++p) kv[((b * L + t) * H + h) * P + p] = key_rows[(b * H + h) * P + p];
  const std::vector<float> vv = Values(v);
  std::vector<double> expected(vv.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t p = 0; p < P; ++p) {
        double sum = 0;
        for (int64_t t = 0; t < L; ++t) {
          const int64_t i = ((b * L + t) * H + h) * P + p;
          sum += vv[i];
          expected[i] = sum / (t + 1);
        }
      }
  EXPECT_THAT(Values(CausalSoftmaxAttention(q, F32({B, L, H, P}, kv), v, 0.9)),
              Pointwise(FloatNear(1e-5), expected));
}

// out_t = q_tᵀ S_t with the state S_t = S_{t-1} + k_t v_tᵀ (Pk, Pv): the recurrent form.
TEST_P(AttentionTest, LinearEqualsRecurrentRunningSum) {
  for (int64_t L : {9, 103}) {
    const int64_t B = 2, H = 3, Pk = 4, Pv = 5;
    const std::vector<float> q = Values(Randn({B, L, H, Pk}, 4)), k = Values(Randn({B, L, H, Pk}, 5)),
                             v = Values(Randn({B, L, H, Pv}, 6));
    std::vector<double> expected(B * L * H * Pv);
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t h = 0; h < H; ++h) {
        std::vector<double> state(Pk * Pv, 0.0);
        for (int64_t t = 0; t < L; ++t) {
          const int64_t ik = ((b * L + t) * H + h) * Pk, iv = ((b * L + t) * H + h) * Pv;
          for (int64_t i = 0; i < Pk; ++i)
            for (int64_t j = 0; j < Pv; ++j) state[i * Pv + j] += double(k[ik + i]) * v[iv + j];
          for (int64_t j = 0; j < Pv; ++j) {
            double acc = 0;
            for (int64_t i = 0; i < Pk; ++i) acc += double(q[ik + i]) * state[i * Pv + j];
            expected[iv + j] = acc;
          }
        }
      }
    }
    const Tensor out =
        CausalLinearAttention(F32({B, L, H, Pk}, q), F32({B, L, H, Pk}, k), F32({B, L, H, Pv}, v));
    EXPECT_EQ(out.shape(), (core::Shape{B, L, H, Pv}));
    EXPECT_THAT(Values(out), Pointwise(FloatNear(2e-4), expected)) << "L=" << L;
  }
}

// Softmax maps: rows sum to 1, zero above the diagonal; the map reproduces the attention output.
// Linear maps: q_t·k_s on and below the diagonal, zero above.
TEST_P(AttentionTest, WeightsAreLowerTriangularAndNormalised) {
  const int64_t B = 2, L = 41, H = 2, P = 3;
  const Tensor q = Randn({B, L, H, P}, 7), k = Randn({B, L, H, P}, 8);
  const std::vector<float> w = Values(CausalSoftmaxAttentionWeights(q, k, 0.8));
  const std::vector<float> lw = Values(CausalLinearAttentionWeights(q, k));
  const std::vector<float> qv = Values(q), kv = Values(k);
  ASSERT_EQ(w.size(), static_cast<size_t>(B * H * L * L));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t h = 0; h < H; ++h) {
      for (int64_t t = 0; t < L; ++t) {
        double total = 0;
        for (int64_t s = 0; s < L; ++s) {
          const int64_t i = ((b * H + h) * L + t) * L + s;
          double dot = 0;
          for (int64_t p = 0; p < P; ++p)
            dot += double(qv[((b * L + t) * H + h) * P + p]) * kv[((b * L + s) * H + h) * P + p];
          if (s > t) {
            EXPECT_EQ(w[i], 0.f);
            EXPECT_EQ(lw[i], 0.f);
          } else {
            EXPECT_GE(w[i], 0.f);
            EXPECT_NEAR(lw[i], dot, 1e-5);
          }
          total += w[i];
        }
        EXPECT_NEAR(total, 1.0, 1e-5) << "b=" << b << " h=" << h << " t=" << t;
      }
    }
  }
}

TEST_P(AttentionTest, ExtremeScalesStayFinite) {
  const Tensor q = Randn({1, 12, 2, 4}, 9), k = Randn({1, 12, 2, 4}, 10), v = Randn({1, 12, 2, 4}, 11);
  for (double scale : {1e4, -1e4, 1e-8, 0.0}) {
    for (float x : Values(CausalSoftmaxAttention(q, k, v, scale))) EXPECT_TRUE(std::isfinite(x)) << scale;
    const std::vector<Tensor> g = CausalSoftmaxAttentionBackward(q, k, v, v, scale);
    for (const Tensor& t : g)
      for (float x : Values(t)) EXPECT_TRUE(std::isfinite(x)) << scale;
  }
  // scale 0: uniform weights, a running mean of v.
  const std::vector<float> w = Values(CausalSoftmaxAttentionWeights(q, k, 0.0));
  EXPECT_NEAR(w[1 * 12 + 0], 0.5f, 1e-7);
  EXPECT_NEAR(w[11 * 12 + 5], 1.0f / 12, 1e-7);
}

TEST_P(AttentionTest, Deterministic) {
  const Tensor q = Randn({4, 103, 2, 16}, 12), k = Randn({4, 103, 2, 16}, 13), v = Randn({4, 103, 2, 16}, 14);
  const std::vector<Tensor> a = CausalSoftmaxAttentionBackward(q, k, v, q, 0.25);
  const std::vector<Tensor> b = CausalSoftmaxAttentionBackward(q, k, v, q, 0.25);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Values(a[i]), Values(b[i]));
  EXPECT_EQ(Values(CausalLinearAttention(q, k, v)), Values(CausalLinearAttention(q, k, v)));
}

// The fast path picks the chunked or the quadratic form of linear attention by shape; the
// consistency cases rely on covering both (attention_cases.cc).
TEST(LinearAttentionFormTest, CasesCoverBothForms) {
  auto chunked = [](int64_t L, int64_t Pk, int64_t Pv) {
    return LinearAttentionUsesChunkedForm(AttentionDims{1, L, 1, Pk, Pv});
  };
  EXPECT_TRUE(chunked(70, 2, 3));
  EXPECT_TRUE(chunked(103, 8, 6));
  EXPECT_TRUE(chunked(65, 3, 2));
  EXPECT_FALSE(chunked(40, 40, 40));
  EXPECT_FALSE(chunked(7, 4, 4));  // a single block
  EXPECT_TRUE(chunked(103, 32, 32));
  EXPECT_FALSE(chunked(103, 64, 64));
}

TEST_P(AttentionTest, LinearBothFastFormsMatchReference) {
  // The chunked (P 8) and the quadratic (P 48) fast form against the reference at L 75.
  for (int64_t P : {8, 48}) {
    const Tensor q = Randn({2, 75, 2, P}, 30), k = Randn({2, 75, 2, P}, 31), v = Randn({2, 75, 2, P}, 32);
    const Tensor dout = Randn({2, 75, 2, P}, 33);
    core::ScopedCpuBackend ref(core::Backend::kReference);
    const Tensor expected = CausalLinearAttention(q, k, v);
    const std::vector<Tensor> expected_grads = CausalLinearAttentionBackward(q, k, v, dout);
    core::ScopedCpuBackend fast(GetParam());
    EXPECT_THAT(Values(CausalLinearAttention(q, k, v)), Pointwise(FloatNear(2e-3), Values(expected))) << P;
    const std::vector<Tensor> grads = CausalLinearAttentionBackward(q, k, v, dout);
    for (int i = 0; i < 3; ++i) {
      EXPECT_THAT(Values(grads[i]), Pointwise(FloatNear(2e-3), Values(expected_grads[i]))) << P << " " << i;
    }
  }
}

TEST_P(AttentionTest, F64Supported) {
  const Tensor q = Randn({1, 5, 1, 2}, 15, core::DType::kF64);
  const Tensor out = CausalSoftmaxAttention(q, q, q, 1.0);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out.dtype(), core::DType::kF64);
  EXPECT_TRUE(CausalLinearAttentionBackward(q, q, q, q)[2].ok());
}

TEST_P(AttentionTest, BadInputsNameTheOpAndShapes) {
  const Tensor q = Randn({1, 4, 2, 3}, 16), k5 = Randn({1, 4, 2, 5}, 17), v = Randn({1, 4, 2, 3}, 18);
  Tensor t = CausalSoftmaxAttention(q, k5, v, 1.0);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("causal_softmax_attention("));
  EXPECT_THAT(t.status().message(), HasSubstr("q (1, 4, 2, 3) and k (1, 4, 2, 5)"));

  const Tensor rank3 = Randn({4, 2, 3}, 19);
  t = CausalLinearAttention(rank3, rank3, rank3);
  ASSERT_FALSE(t.ok());
  EXPECT_THAT(t.status().message(), HasSubstr("causal_linear_attention("));
  EXPECT_THAT(t.status().message(), HasSubstr("rank 3 (4, 2, 3)"));

  t = CausalLinearAttention(q, q, Randn({1, 5, 2, 3}, 20));  // v's L differs
  EXPECT_THAT(t.status().message(), HasSubstr("expected v of shape (B, L, H, Pv) = (1, 4, 2, Pv)"));

  t = CausalSoftmaxAttentionWeights(q, Randn({1, 4, 2, 3}, 21, core::DType::kF64), 1.0);
  EXPECT_THAT(t.status().message(), HasSubstr("causal_softmax_attention_weights("));
  EXPECT_THAT(t.status().message(), HasSubstr("f32 and f64"));

  t = CausalSoftmaxAttention(q, q, v, std::nan(""));
  EXPECT_THAT(t.status().message(), HasSubstr("finite scale"));

  std::vector<Tensor> g = CausalSoftmaxAttentionBackward(q, q, v, k5, 1.0);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_THAT(g[2].status().message(), HasSubstr("causal_softmax_attention_backward("));
  EXPECT_THAT(g[2].status().message(), HasSubstr("expected dout of v's shape (1, 4, 2, 3)"));

  g = CausalLinearAttentionWeightsBackward(q, q, Randn({1, 2, 4, 3}, 22));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_THAT(g[1].status().message(), HasSubstr("expected dweights f32(1, 2, 4, 4)@cpu"));

  const Tensor ints = core::RandInt(core::Key::FromSeed(1), {1, 4, 2, 3}, 0, 5).value();
  t = CausalLinearAttention(ints, ints, ints);
  EXPECT_THAT(t.status().message(), HasSubstr("one float dtype (f32 or f64), got i32"));
}

INSTANTIATE_TEST_SUITE_P(Backends, AttentionTest,
                         ::testing::Values(core::Backend::kReference, core::Backend::kCpu),
                         [](const auto& info) { return std::string(core::BackendName(info.param)); });

}  // namespace
}  // namespace mimetic::ops
