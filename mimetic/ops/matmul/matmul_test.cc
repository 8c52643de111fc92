#include "mimetic/ops/matmul/matmul.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/op.h"

namespace mimetic::ops {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

Tensor F32(core::Shape shape, std::vector<float> v) { return Tensor::FromHost<float>(shape, v).value(); }

std::vector<float> Values(const Tensor& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t.ToVector<float>().value() : std::vector<float>{};
}

class MatMulTest : public ::testing::TestWithParam<core::Backend> {
 protected:
  core::ScopedCpuBackend backend_{GetParam()};
};

TEST_P(MatMulTest, TwoByTwoAllTransposes) {
  const Tensor a = F32({2, 2}, {1, 2, 3, 4});
  const Tensor b = F32({2, 2}, {5, 6, 7, 8});
  EXPECT_THAT(Values(MatMul(a, b)), ElementsAreArray({19.f, 22.f, 43.f, 50.f}));
  // a^T = [[1, 3], [2, 4]]; b^T = [[5, 7], [6, 8]].
  EXPECT_THAT(Values(MatMul(a, b, true, false)), ElementsAreArray({26.f, 30.f, 38.f, 44.f}));
  EXPECT_THAT(Values(MatMul(a, b, false, true)), ElementsAreArray({17.f, 23.f, 39.f, 53.f}));
  EXPECT_THAT(Values(MatMul(a, b, true, true)), ElementsAreArray({23.f, 31.f, 34.f, 46.f}));
}

TEST_P(MatMulTest, LinearLayerOverFlattenedRows) {
  // x (B=2, L=1, D=2) @ W (E=3, D=2)^T -> (2, 1, 3).
  const Tensor x = F32({2, 1, 2}, {1, 2, -1, 0.5});
  const Tensor w = F32({3, 2}, {1, 0, 0, 1, 1, 1});
  const Tensor y = MatMul(x, w, false, true);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y.shape(), (core::Shape{2, 1, 3}));
  EXPECT_THAT(Values(y), ElementsAreArray({1.f, 2.f, 3.f, -1.f, 0.5f, -0.5f}));
}

TEST_P(MatMulTest, BatchedAndBatchSum) {
  // Two 1x2 @ 2x1 products: [1, 2].[3, 4] = 11 and [5, 6].[7, 8] = 83.
  const Tensor a = F32({2, 1, 2}, {1, 2, 5, 6});
  const Tensor b = F32({2, 2, 1}, {3, 4, 7, 8});
  const Tensor c = MatMul(a, b);
  EXPECT_EQ(c.shape(), (core::Shape{2, 1, 1}));
  EXPECT_THAT(Values(c), ElementsAreArray({11.f, 83.f}));
  const Tensor s = MatMulSumBatch(a, b);
  EXPECT_EQ(s.shape(), (core::Shape{1, 1}));
  EXPECT_THAT(Values(s), ElementsAreArray({94.f}));
  // sum_i a_i^T a_i = [[1, 2], [2, 4]] + [[25, 30], [30, 36]].
  EXPECT_THAT(Values(MatMulSumBatch(a, a, true, false)), ElementsAreArray({26.f, 32.f, 32.f, 40.f}));
}

TEST_P(MatMulTest, F64) {
  const Tensor a = Tensor::FromHost<double>({1, 3}, {1, 2, 3}).value();
  const Tensor b = Tensor::FromHost<double>({3, 1}, {0.5, 0.25, 0.125}).value();
  const Tensor c = MatMul(a, b);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_DOUBLE_EQ(c.Item<double>().value(), 1.375);
}

TEST_P(MatMulTest, EmptyContractionIsZero) {
  const Tensor a = Tensor::Zeros({2, 0}).value();
  const Tensor b = Tensor::Zeros({0, 3}).value();
  EXPECT_THAT(Values(MatMul(a, b)), ElementsAreArray(std::vector<float>(6, 0.f)));
}

TEST_P(MatMulTest, VjpOfLinearLayer) {
  // y = x W^T with x (1, 2, 2), W (3, 2), seed g = ones (1, 2, 3):
  //   dx = g W = [[2, 2], [2, 2]],  dW = g^T x summed over rows = [[4, 6]] x 3 (x rows [1,2] + [3,4]).
  const Tensor x = F32({1, 2, 2}, {1, 2, 3, 4});
  const Tensor w = F32({3, 2}, {1, 0, 0, 1, 1, 1});
  const Tensor g = F32({1, 2, 3}, std::vector<float>(6, 1.f));
  auto f = [](absl::Span<const Tensor> in) { return std::vector<Tensor>{MatMul(in[0], in[1], false, true)}; };
  auto grads = core::Vjp(f, {x, w}, {g});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_THAT(Values((*grads)[0]), ElementsAreArray({2.f, 2.f, 2.f, 2.f}));
  EXPECT_EQ((*grads)[1].shape(), (core::Shape{3, 2}));
  EXPECT_THAT(Values((*grads)[1]), ElementsAreArray({4.f, 6.f, 4.f, 6.f, 4.f, 6.f}));
}

TEST_P(MatMulTest, SameInputSameBits) {
  std::vector<float> av(9 * 16 * 24), bv(9 * 20 * 24);
  for (size_t i = 0; i < av.size(); ++i) av[i] = 0.01f * static_cast<float>((i * 7919) % 201) - 1.f;
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = 0.01f * static_cast<float>((i * 104729) % 199) - 1.f;
  const Tensor a = F32({9, 16, 24}, av);
  const Tensor b = F32({9, 20, 24}, bv);
  EXPECT_EQ(Values(MatMul(a, b, false, true)), Values(MatMul(a, b, false, true)));
  EXPECT_EQ(Values(MatMulSumBatch(a, a, true, false)), Values(MatMulSumBatch(a, a, true, false)));
}

INSTANTIATE_TEST_SUITE_P(Backends, MatMulTest,
                         ::testing::Values(core::Backend::kReference, core::Backend::kCpu),
                         [](const auto& info) { return std::string(core::BackendName(info.param)); });

TEST(MatMulErrors, ContractionMismatchNamesOpAndShapes) {
  const Tensor c = MatMul(Tensor::Zeros({2, 3}).value(), Tensor::Zeros({4, 5}).value());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("matmul(f32(2, 3)@cpu, f32(4, 5)@cpu"));
  EXPECT_THAT(c.status().message(), HasSubstr("contraction dims differ"));
  EXPECT_EQ(c.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(MatMulErrors, TransposeFlagsAppearInMessage) {
  const Tensor c = MatMul(Tensor::Zeros({2, 3}).value(), Tensor::Zeros({2, 3}).value(), false, false);
  EXPECT_THAT(c.status().message(), HasSubstr("transpose_a=0 transpose_b=0"));
  EXPECT_TRUE(MatMul(Tensor::Zeros({2, 3}).value(), Tensor::Zeros({2, 3}).value(), false, true).ok());
}

TEST(MatMulErrors, WrongDtypes) {
  const Tensor i = Tensor::FromHost<int32_t>({2, 2}, {1, 2, 3, 4}).value();
  EXPECT_THAT(MatMul(i, i).status().message(), HasSubstr("expected both f32 or both f64"));
  const Tensor d = Tensor::Zeros({2, 2}, core::DType::kF64).value();
  const Tensor c = MatMul(Tensor::Zeros({2, 2}).value(), d);
  EXPECT_THAT(c.status().message(), HasSubstr("dtypes f32 and f64"));
}

TEST(MatMulErrors, RankAndBatchMismatch) {
  EXPECT_THAT(MatMul(Tensor::Zeros({3}).value(), Tensor::Zeros({3, 2}).value()).status().message(),
              HasSubstr("expected matrices (rank >= 2)"));
  const Tensor c = MatMul(Tensor::Zeros({2, 3, 4}).value(), Tensor::Zeros({3, 4, 5}).value());
  EXPECT_THAT(c.status().message(), HasSubstr("batch dims (2) and (3) differ"));
  const Tensor s = MatMulSumBatch(Tensor::Zeros({2, 3, 4}).value(), Tensor::Zeros({4, 5}).value());
  EXPECT_THAT(s.status().message(), HasSubstr("matmul_sum_batch"));
  EXPECT_THAT(s.status().message(), HasSubstr("batch dims (2) and () differ"));
}

TEST(MatMulErrors, ErrorInputPassesThrough) {
  const Tensor bad = MatMul(Tensor::Zeros({2, 3}).value(), Tensor::Zeros({4, 5}).value());
  const Tensor c = MatMul(bad, Tensor::Zeros({2, 2}).value());
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("contraction dims differ"));
}

}  // namespace
}  // namespace mimetic::ops
