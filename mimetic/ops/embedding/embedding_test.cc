#include "mimetic/ops/embedding/embedding.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/op.h"

namespace mimetic::ops {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::vector<float> Values(const Tensor& t) {
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? t.ToVector<float>().value() : std::vector<float>{};
}

class EmbeddingTest : public ::testing::TestWithParam<core::Backend> {
 protected:
  core::ScopedCpuBackend backend_{GetParam()};
  // table (V=3, D=2): row v = [2v, 2v + 1].
  Tensor table_ = Tensor::FromHost<float>({3, 2}, {0, 1, 2, 3, 4, 5}).value();
  Tensor ids_ = Tensor::FromHost<int32_t>({2, 2}, {2, 0, 2, 1}).value();
};

TEST_P(EmbeddingTest, LooksUpRows) {
  const Tensor h = Embedding(table_, ids_);
  ASSERT_TRUE(h.ok()) << h.status();
  EXPECT_EQ(h.shape(), (core::Shape{2, 2, 2}));
  EXPECT_THAT(Values(h), ElementsAreArray({4.f, 5.f, 0.f, 1.f, 4.f, 5.f, 2.f, 3.f}));
}

TEST_P(EmbeddingTest, GradientScatterAddsRepeatedIds) {
  // Cotangent g[p] = [p + 1, 10 (p + 1)] for p = 0..3 at ids [2, 0, 2, 1]:
  //   row 0 <- g[1] = [2, 20]; row 1 <- g[3] = [4, 40]; row 2 <- g[0] + g[2] = [4, 40].
  const Tensor g = Tensor::FromHost<float>({2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40}).value();
  auto f = [this](absl::Span<const Tensor> in) { return std::vector<Tensor>{Embedding(in[0], ids_)}; };
  auto grads = core::Vjp(f, {table_}, {g});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_EQ((*grads)[0].shape(), (core::Shape{3, 2}));
  EXPECT_THAT(Values((*grads)[0]), ElementsAreArray({2.f, 20.f, 4.f, 40.f, 4.f, 40.f}));
}

TEST_P(EmbeddingTest, UnusedRowsGetZeroGradient) {
  const Tensor g = Tensor::FromHost<float>({1, 2}, {7, 8}).value();
  const Tensor ids = Tensor::FromHost<int32_t>({1}, {1}).value();
  EXPECT_THAT(Values(EmbeddingBackward(g, ids, 3)), ElementsAreArray({0.f, 0.f, 7.f, 8.f, 0.f, 0.f}));
}

TEST_P(EmbeddingTest, OutOfRangeIdNamesIdAndV) {
  const Tensor ids = Tensor::FromHost<int32_t>({3}, {0, 3, 1}).value();
  const Tensor h = Embedding(table_, ids);
  ASSERT_FALSE(h.ok());
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(h.status().message(), HasSubstr("embedding(f32(3, 2)@cpu, i32(3)@cpu)"));
  EXPECT_THAT(h.status().message(), HasSubstr("id 3 at flat position 1 is out of range"));
  EXPECT_THAT(h.status().message(), HasSubstr("V=3"));
  const Tensor negative = Tensor::FromHost<int32_t>({1}, {-100}).value();
  EXPECT_THAT(Embedding(table_, negative).status().message(), HasSubstr("id -100 at flat position 0"));
  EXPECT_THAT(EmbeddingBackward(Tensor::Zeros({1, 2}).value(), negative, 3).status().message(),
              HasSubstr("embedding_backward"));
}

INSTANTIATE_TEST_SUITE_P(Backends, EmbeddingTest,
                         ::testing::Values(core::Backend::kReference, core::Backend::kCpu),
                         [](const auto& info) { return std::string(core::BackendName(info.param)); });

TEST(EmbeddingErrors, BadDtypesAndShapes) {
  const Tensor table = Tensor::Zeros({3, 2}).value();
  const Tensor float_ids = Tensor::Zeros({2}).value();
  EXPECT_THAT(Embedding(table, float_ids).status().message(), HasSubstr("ids are f32; expected i32 ids"));
  const Tensor ids = Tensor::FromHost<int32_t>({1}, {0}).value();
  const Tensor h = Embedding(Tensor::Zeros({3}).value(), ids);
  EXPECT_THAT(h.status().message(), HasSubstr("embedding(f32(3)@cpu, i32(1)@cpu)"));
  EXPECT_THAT(h.status().message(), HasSubstr("expected a (V, D) f32 or f64 table"));
  EXPECT_THAT(Embedding(ids, ids).status().message(), HasSubstr("expected a (V, D) f32 or f64 table"));
  const Tensor g = EmbeddingBackward(Tensor::Zeros({2, 2}).value(), ids, 3);
  EXPECT_THAT(g.status().message(), HasSubstr("grad (2, 2) does not fit ids (1)"));
}

}  // namespace
}  // namespace mimetic::ops
