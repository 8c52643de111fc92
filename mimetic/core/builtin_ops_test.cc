#include "mimetic/core/builtin_ops.h"

#include <omp.h>

#include <vector>

#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.numel());
}

// Sums of many magnitudes, so that any change of order or of precision would show in the bits.
template <typename T>
Tensor Ramp(int64_t n, double scale) {
  std::vector<T> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<T>(scale * (1.0 + (i % 977) * 1e-3) / (1 + i % 13));
  return Tensor::FromHost<T>({n}, v).value();
}

// The fast path splits large sums over threads; it must equal the reference bit for bit with any
// number of threads, and on sizes around its parallel threshold (2^15).
template <typename T>
void ExpectCpuEqualsReference() {
  for (int64_t n : {int64_t{7}, int64_t{1} << 15, (int64_t{1} << 15) + 3, int64_t{100003}}) {
    const Tensor a = Ramp<T>(n, 1.0 / 3), b = Ramp<T>(n, 1e4 / 7);
    std::vector<T> want;
    {
      ScopedCpuBackend reference(Backend::kReference);
      want = Values<T>(Accumulate(a, b));
    }
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      EXPECT_EQ(Values<T>(Accumulate(a, b)), want) << "n " << n << ", threads " << threads;
    }
  }
}

TEST(AccumulateTest, FastPathEqualsReferenceF32) { ExpectCpuEqualsReference<float>(); }
TEST(AccumulateTest, FastPathEqualsReferenceF64) { ExpectCpuEqualsReference<double>(); }

TEST(AccumulateTest, AddsElementwise) {
  const Tensor a = Tensor::FromHost<float>({3}, {1.f, 2.f, -3.5f}).value();
  const Tensor b = Tensor::FromHost<float>({3}, {0.5f, -2.f, 1.f}).value();
  EXPECT_EQ(Values<float>(Accumulate(a, b)), (std::vector<float>{1.5f, 0.f, -2.5f}));
}

TEST(AccumulateTest, IntegersUseTheReference) {
  const Tensor a = Tensor::FromHost<int32_t>({2}, {1, 2}).value();
  EXPECT_EQ(Values<int32_t>(Accumulate(a, a)), (std::vector<int32_t>{2, 4}));
}

}  // namespace
}  // namespace mimetic::core
