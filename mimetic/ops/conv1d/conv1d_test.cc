// Worked examples and bad-input checks for CausalConv1d.
#include "mimetic/ops/conv1d/conv1d.h"

#include <omp.h>

#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/random.h"
#include "mimetic/ops/elementwise/elementwise.h"

namespace mimetic::ops {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Tensor F32(core::Shape shape, std::vector<float> v) { return Tensor::FromHost<float>(shape, v).value(); }
std::vector<float> Values(const Tensor& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ToVector<float>().value();
}

const core::Backend kBackends[] = {core::Backend::kReference, core::Backend::kCpu};

TEST(CausalConv1dTest, WorkedExample) {
  // K = 2, one channel: out[t] = 10 + 0.5 x[t-1] + 1 x[t], x[-1] = 0.
  for (core::Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    EXPECT_THAT(Values(CausalConv1d(F32({1, 4, 1}, {1, 2, 3, 4}), F32({1, 2}, {0.5, 1}), F32({1}, {10}))),
                ElementsAre(11, 12.5, 14, 15.5));
  }
}

TEST(CausalConv1dTest, BackwardWorkedExample) {
  // Same conv, dout = 1: dx[s] = w1 + w0 (w0 only while s + 1 < L) = [1.5, 1.5, 1.5, 1];
  // dw0 = sum_t x[t-1] = 6, dw1 = sum_t x[t] = 10, dbias = L = 4.
  for (core::Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    std::vector<Tensor> g = CausalConv1dBackward(F32({1, 4, 1}, {1, 2, 3, 4}), F32({1, 2}, {0.5, 1}),
                                                 F32({1, 4, 1}, {1, 1, 1, 1}));
    ASSERT_EQ(g.size(), 3u);
    EXPECT_THAT(Values(g[0]), ElementsAre(1.5, 1.5, 1.5, 1));
    EXPECT_THAT(Values(g[1]), ElementsAre(6, 10));
    EXPECT_THAT(Values(g[2]), ElementsAre(4));
  }
}

TEST(CausalConv1dTest, IdentityKernelReturnsInputExactly) {
  // The mimetic identity conv (the mimetic paper, Sec. 3): last tap 1, others 0, bias 0.
  const int64_t b = 2, l = 5, c = 7, k = 4;
  Tensor x = core::Normal(core::Key::FromSeed(7), {b, l, c}, core::DType::kF32).value();
  std::vector<float> w(c * k, 0.0f);
  for (int64_t ch = 0; ch < c; ++ch) w[ch * k + k - 1] = 1.0f;
  for (core::Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    EXPECT_EQ(Values(CausalConv1d(x, F32({c, k}, w), F32({c}, std::vector<float>(c, 0.0f)))), Values(x));
  }
}

TEST(CausalConv1dTest, FirstTapShiftsByKMinusOne) {
  // Tap 0 = 1, others 0: out[t] = x[t - (K-1)], zero for t < K-1.
  const int64_t b = 2, l = 6, c = 3, k = 4;
  Tensor x = core::Normal(core::Key::FromSeed(8), {b, l, c}, core::DType::kF32).value();
  const std::vector<float> xv = Values(x);
  std::vector<float> w(c * k, 0.0f);
  for (int64_t ch = 0; ch < c; ++ch) w[ch * k] = 1.0f;
  std::vector<float> expected(b * l * c, 0.0f);
  for (int64_t i = 0; i < b; ++i) {
    for (int64_t t = k - 1; t < l; ++t) {
      for (int64_t ch = 0; ch < c; ++ch) expected[(i * l + t) * c + ch] = xv[(i * l + t - (k - 1)) * c + ch];
    }
  }
  for (core::Backend backend : kBackends) {
    core::ScopedCpuBackend scope(backend);
    EXPECT_EQ(Values(CausalConv1d(x, F32({c, k}, w), F32({c}, std::vector<float>(c, 0.0f)))), expected);
  }
}

TEST(CausalConv1dTest, BackwardIsIndependentOfThreadCount) {
  Tensor x = core::Normal(core::Key::FromSeed(1), {4, 103, 20}, core::DType::kF32).value();
  Tensor w = core::Normal(core::Key::FromSeed(2), {20, 4}, core::DType::kF32).value();
  Tensor g = core::Normal(core::Key::FromSeed(3), {4, 103, 20}, core::DType::kF32).value();
  auto run = [&](int threads) {
    const int saved = omp_get_max_threads();
    omp_set_num_threads(threads);
    std::vector<Tensor> out = CausalConv1dBackward(x, w, g);
    omp_set_num_threads(saved);
    return out;
  };
  std::vector<Tensor> one = run(1), three = run(3);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_EQ(Values(one[i]), Values(three[i])) << "output " << i;
}

TEST(CausalConv1dTest, F64FastPathMatchesReference) {
  // The consistency harness compares backends in f32 only; check the fast kernels' f64 instantiation,
  // for a specialised K (4) and a generic one (5).
  for (int64_t k : {4, 5}) {
    Tensor x = core::Normal(core::Key::FromSeed(1), {3, 40, 9}, core::DType::kF64).value();
    Tensor w = core::Normal(core::Key::FromSeed(2), {9, k}, core::DType::kF64).value();
    Tensor b = core::Normal(core::Key::FromSeed(3), {9}, core::DType::kF64).value();
    Tensor g = core::Normal(core::Key::FromSeed(4), {3, 40, 9}, core::DType::kF64).value();
    auto run = [&](core::Backend backend) {
      core::ScopedCpuBackend scope(backend);
      std::vector<Tensor> out = CausalConv1dBackward(x, w, g);
      out.push_back(CausalConv1d(x, w, b));
      return out;
    };
    std::vector<Tensor> fast = run(core::Backend::kCpu), ref = run(core::Backend::kReference);
    for (size_t i = 0; i < fast.size(); ++i) {
      std::vector<double> a = fast[i].ToVector<double>().value(), e = ref[i].ToVector<double>().value();
      ASSERT_EQ(a.size(), e.size());
      for (size_t j = 0; j < a.size(); ++j)
        EXPECT_NEAR(a[j], e[j], 1e-11 * (1 + std::abs(e[j]))) << i << " " << j;
    }
  }
}

TEST(CausalConv1dTest, BadInputs) {
  Tensor x = core::Normal(core::Key::FromSeed(1), {2, 5, 3}, core::DType::kF32).value();
  Tensor w = F32({3, 4}, std::vector<float>(12, 0.0f));
  Tensor bias = F32({3}, {0, 0, 0});

  Tensor bad = CausalConv1d(F32({5}, {1, 2, 3, 4, 5}), w, bias);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("causal_conv1d(f32(5)@cpu, f32(3, 4)@cpu, f32(3)@cpu)"));
  EXPECT_THAT(bad.status().message(), HasSubstr("x has shape (5); expected rank 3 (B, L, C)"));

  bad = CausalConv1d(x, F32({4, 3}, std::vector<float>(12, 0.0f)), bias);
  EXPECT_THAT(bad.status().message(), HasSubstr("weight has shape (4, 3); expected (C, K) = (3, K)"));

  bad = CausalConv1d(x, F32({3, 0}, {}), bias);
  EXPECT_THAT(bad.status().message(), HasSubstr("K >= 1"));

  bad = CausalConv1d(x, w, F32({2}, {0, 0}));
  EXPECT_THAT(bad.status().message(), HasSubstr("bias has shape (2); expected (3)"));

  bad = CausalConv1d(x, w, Tensor::FromHost<double>({3}, {0, 0, 0}).value());
  EXPECT_THAT(bad.status().message(), HasSubstr("bias has dtype f64 but x has f32"));

  bad = CausalConv1d(Tensor::FromHost<int32_t>({1, 1, 3}, {1, 2, 3}).value(), w, bias);
  EXPECT_THAT(bad.status().message(), HasSubstr("x has dtype i32; expected f32 or f64"));

  std::vector<Tensor> g = CausalConv1dBackward(x, w, F32({1, 1, 3}, {1, 2, 3}));
  ASSERT_EQ(g.size(), 3u);
  for (const Tensor& t : g) {
    EXPECT_THAT(t.status().message(), HasSubstr("causal_conv1d_backward("));
    EXPECT_THAT(t.status().message(), HasSubstr("dout is f32(1, 1, 3)@cpu; expected f32(2, 5, 3)@cpu"));
  }
}

// The SiLU-fused op gives Silu(CausalConv1d(...))'s values and VJP bit for bit on CPU (the model
// relies on it: fusing changed no checkpoint), for specialised and generic K, L < K, rows straddling
// the backward's reduction blocks, f32 and f64, and on the reference backend.
template <typename T>
void CheckSiluFusionIsExact(core::Backend backend) {
  struct Shape {
    int64_t b, l, c, k;
  };
  for (const Shape& s : {Shape{2, 6, 5, 4}, Shape{2, 3, 3, 1}, Shape{1, 2, 5, 4}, Shape{3, 7, 9, 3},
                         Shape{2, 9, 3, 5}, Shape{5, 100, 37, 4}}) {
    const core::DType dtype = std::is_same_v<T, float> ? core::DType::kF32 : core::DType::kF64;
    Tensor x = core::Normal(core::Key::FromSeed(11), {s.b, s.l, s.c}, dtype).value();
    Tensor w = core::Normal(core::Key::FromSeed(12), {s.c, s.k}, dtype).value();
    Tensor b = core::Normal(core::Key::FromSeed(13), {s.c}, dtype).value();
    Tensor g = core::Normal(core::Key::FromSeed(14), {s.b, s.l, s.c}, dtype).value();
    core::ScopedCpuBackend scope(backend);
    auto fused = [](absl::Span<const Tensor> v) {
      return std::vector<Tensor>{CausalConv1dSilu(v[0], v[1], v[2])};
    };
    auto unfused = [](absl::Span<const Tensor> v) {
      return std::vector<Tensor>{Silu(CausalConv1d(v[0], v[1], v[2]))};
    };
    const std::string where = absl::StrCat(s.b, "x", s.l, "x", s.c, " K ", s.k);
    EXPECT_EQ(fused({x, w, b})[0].template ToVector<T>().value(),
              unfused({x, w, b})[0].template ToVector<T>().value())
        << where;
    auto vf = core::Vjp(fused, {x, w, b}, {g});
    auto vu = core::Vjp(unfused, {x, w, b}, {g});
    ASSERT_TRUE(vf.ok() && vu.ok()) << vf.status() << vu.status();
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_EQ((*vf)[i].template ToVector<T>().value(), (*vu)[i].template ToVector<T>().value())
          << where << " cotangent " << i;
    }
  }
}

TEST(CausalConv1dTest, SiluFusionIsExactOnCpu) {
  CheckSiluFusionIsExact<float>(core::Backend::kCpu);
  CheckSiluFusionIsExact<double>(core::Backend::kCpu);
}

TEST(CausalConv1dTest, SiluFusionIsExactOnReference) {
  CheckSiluFusionIsExact<float>(core::Backend::kReference);
  CheckSiluFusionIsExact<double>(core::Backend::kReference);
}

TEST(CausalConv1dTest, SiluBackwardBadInputs) {
  Tensor x = core::Normal(core::Key::FromSeed(1), {2, 5, 3}, core::DType::kF32).value();
  Tensor w = F32({3, 4}, std::vector<float>(12, 0.0f));
  std::vector<Tensor> g = CausalConv1dSiluBackward(x, w, F32({2}, {0, 0}), x);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_THAT(g[0].status().message(), HasSubstr("causal_conv1d_silu_backward("));
  EXPECT_THAT(g[0].status().message(), HasSubstr("conv is f32(2)@cpu; expected f32(2, 5, 3)@cpu"));
  g = CausalConv1dSiluBackward(x, w, x, F32({1, 1, 3}, {1, 2, 3}));
  EXPECT_THAT(g[0].status().message(), HasSubstr("dout is f32(1, 1, 3)@cpu; expected f32(2, 5, 3)@cpu"));
}

TEST(CausalConv1dTest, F64) {
  Tensor x = Tensor::FromHost<double>({1, 3, 1}, {1, 2, 3}).value();
  Tensor w = Tensor::FromHost<double>({1, 3}, {1, 0, 0}).value();
  Tensor b = Tensor::FromHost<double>({1}, {0.25}).value();
  EXPECT_THAT(CausalConv1d(x, w, b).ToVector<double>().value(), ElementsAre(0.25, 0.25, 1.25));
}

}  // namespace
}  // namespace mimetic::ops
