#include "mimetic/core/xt_view.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {
namespace {

TEST(XtViewTest, ViewAliasesTheBufferInRowMajorOrder) {
  absl::StatusOr<Tensor> t = Tensor::FromHost<double>({2, 3}, {0, 1, 2, 3, 4, 5});
  ASSERT_TRUE(t.ok()) << t.status();
  absl::StatusOr<XtView<double, 2>> v = MakeXtView<double, 2>(*t);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->shape()[0], 2u);
  EXPECT_EQ(v->shape()[1], 3u);
  EXPECT_EQ((*v)(1, 2), 5.0);
  EXPECT_EQ(v->data(), t->data<double>());  // no copy
  (*v)(1, 0) = 42;                          // writes land in the tensor
  EXPECT_EQ(t->ToVector<double>().value()[3], 42.0);
}

TEST(XtViewTest, ConstViewReadsAndExpressionsEvaluate) {
  absl::StatusOr<Tensor> t = Tensor::FromHost<float>({2, 2}, {1, 2, 3, 4});
  ASSERT_TRUE(t.ok());
  XtView<const float, 2> v = XtViewOrDie<const float, 2>(*t);
  EXPECT_EQ(v.data(), t->data<float>());
  xt::xtensor<float, 1> row_sums = xt::sum(v, {1});
  EXPECT_EQ(row_sums(0), 3.0f);
  EXPECT_EQ(row_sums(1), 7.0f);
}

TEST(XtViewTest, EmptyTensorGivesEmptyView) {
  absl::StatusOr<Tensor> t = Tensor::Zeros({0, 4}, DType::kF32);
  ASSERT_TRUE(t.ok());
  absl::StatusOr<XtView<const float, 2>> v = MakeXtView<const float, 2>(*t);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->size(), 0u);
}

TEST(XtViewTest, WrongDtypeIsRefusedNamingBoth) {
  absl::StatusOr<Tensor> t = Tensor::Zeros({3}, DType::kF32);
  ASSERT_TRUE(t.ok());
  absl::StatusOr<XtView<const double, 1>> v = MakeXtView<const double, 1>(*t);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("as f64 elements: its dtype is f32"), std::string::npos) << v.status();
}

TEST(XtViewTest, WrongRankIsRefused) {
  absl::StatusOr<Tensor> t = Tensor::Zeros({2, 3}, DType::kF64);
  ASSERT_TRUE(t.ok());
  absl::StatusOr<XtView<double, 3>> v = MakeXtView<double, 3>(*t);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("as rank 3: it has rank 2"), std::string::npos) << v.status();
}

TEST(XtViewTest, ReshapedViewKeepsRowMajorOrder) {
  absl::StatusOr<Tensor> t = Tensor::FromHost<float>({2, 1, 3}, {0, 1, 2, 3, 4, 5});  // (rows..., D)
  ASSERT_TRUE(t.ok());
  XtView<const float, 2> rows = XtViewOrDie<const float, 2>(*t, {2, 3});
  EXPECT_EQ(rows(1, 0), 3.0f);
  EXPECT_EQ(rows.data(), t->data<float>());
  absl::StatusOr<XtView<const float, 2>> bad = MakeXtView<const float, 2>(*t, {4, 2});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("as shape (4, 2): 8 elements, expected 6"), std::string::npos)
      << bad.status();
}

TEST(XtViewTest, ErrorAndAbsentTensorsAreRefused) {
  absl::StatusOr<XtView<double, 1>> v = MakeXtView<double, 1>(Tensor::Error(absl::InternalError("boom")));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "boom");
  absl::StatusOr<XtView<double, 1>> a = MakeXtView<double, 1>(Tensor::Absent());
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("absent"), std::string::npos);
}

// Stand-in device memory: host blocks behind the CUDA hooks, so a CUDA tensor exists in a CPU build.
absl::StatusOr<void*> HostAllocate(size_t bytes) { return std::malloc(bytes == 0 ? 1 : bytes); }
void HostFree(void* p) { std::free(p); }
absl::Status HostCopy(void* dst, Device, const void* src, Device, size_t bytes) {
  std::memcpy(dst, src, bytes);
  return absl::OkStatus();
}

TEST(XtViewTest, DeviceTensorIsRefused) {
  SetCudaMemoryHooks({&HostAllocate, &HostFree, &HostCopy});
  std::shared_ptr<Storage> storage = Storage::Allocate(16, Device::kCuda).value();
  Tensor t = Tensor::Wrap(storage, TensorMeta{{4}, DType::kF32, Device::kCuda});
  absl::StatusOr<XtView<float, 1>> v = MakeXtView<float, 1>(t);
  storage.reset();
  t = Tensor();
  SetCudaMemoryHooks({});
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("expected a host (cpu) tensor"), std::string::npos) << v.status();
}

TEST(XtViewTest, DynamicRankViewHasTheTensorsShapeAndAliasesIt) {
  absl::StatusOr<Tensor> t = Tensor::FromHost<float>({2, 1, 3}, {0, 1, 2, 3, 4, 5});
  ASSERT_TRUE(t.ok());
  XtDynView<float> v = XtDynViewOrDie<float>(*t);
  ASSERT_EQ(v.dimension(), 3u);
  EXPECT_EQ(v.shape()[2], 3u);
  EXPECT_EQ(v.data(), t->data<float>());
  v(1, 0, 1) = 42;
  EXPECT_EQ(t->ToVector<float>().value()[4], 42.0f);
  absl::StatusOr<Tensor> scalar = Tensor::FromHost<double>({}, {7});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(XtDynViewOrDie<const double>(*scalar).dimension(), 0u);
}

TEST(XtViewDeathTest, OrDieAbortsWithTheReason) {
  absl::StatusOr<Tensor> t = Tensor::Zeros({3}, DType::kI32);
  ASSERT_TRUE(t.ok());
  EXPECT_DEATH((XtViewOrDie<float, 1>(*t)), "as f32 elements: its dtype is i32");
  EXPECT_DEATH((XtDynViewOrDie<const float>(*t)), "as f32 elements: its dtype is i32");
}

}  // namespace
}  // namespace mimetic::core
