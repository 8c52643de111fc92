#include "mimetic/core/tensor.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

bool IsAligned64(const void* p) { return reinterpret_cast<uintptr_t>(p) % 64 == 0; }

TEST(TensorTest, FromHostToVectorRoundTripF32) {
  absl::StatusOr<Tensor> t = Tensor::FromHost<float>({2, 3}, {1.5f, -2, 3, 4, 5, 6.25f});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_TRUE(t->ok());
  EXPECT_EQ(t->shape(), (Shape{2, 3}));
  EXPECT_EQ(t->rank(), 2);
  EXPECT_EQ(t->dim(0), 2);
  EXPECT_EQ(t->dim(-1), 3);
  EXPECT_EQ(t->numel(), 6);
  EXPECT_EQ(t->bytes(), 24u);
  EXPECT_EQ(t->dtype(), DType::kF32);
  EXPECT_EQ(t->device(), Device::kCpu);
  absl::StatusOr<std::vector<float>> v = t->ToVector<float>();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_THAT(*v, ElementsAre(1.5f, -2, 3, 4, 5, 6.25f));
}

TEST(TensorTest, FromHostToVectorRoundTripF64) {
  const std::vector<double> values = {0.1, -1e300, 1e-300, 3.0};
  absl::StatusOr<Tensor> t = Tensor::FromHost<double>({4}, values);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kF64);
  EXPECT_EQ(t->bytes(), 32u);
  EXPECT_EQ(t->ToVector<double>().value(), values);
}

TEST(TensorTest, FromHostToVectorRoundTripI32) {
  const std::vector<int32_t> values = {std::numeric_limits<int32_t>::min(), -1, 0, 7,
                                       std::numeric_limits<int32_t>::max(), 42};
  absl::StatusOr<Tensor> t = Tensor::FromHost<int32_t>({3, 1, 2}, values);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->dtype(), DType::kI32);
  EXPECT_EQ(t->shape(), (Shape{3, 1, 2}));
  EXPECT_EQ(t->ToVector<int32_t>().value(), values);
}

TEST(TensorTest, ScalarIsRankZeroWithOneElement) {
  Tensor f = Tensor::Scalar(2.5f);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f.rank(), 0);
  EXPECT_TRUE(f.shape().empty());
  EXPECT_EQ(f.numel(), 1);
  EXPECT_EQ(f.dtype(), DType::kF32);
  EXPECT_THAT(f.ToVector<float>().value(), ElementsAre(2.5f));
  EXPECT_EQ(f.Item<float>().value(), 2.5f);

  Tensor d = Tensor::Scalar(-0.125);
  EXPECT_EQ(d.dtype(), DType::kF64);
  EXPECT_EQ(d.Item<double>().value(), -0.125);

  Tensor i = Tensor::Scalar(int32_t{-9});
  EXPECT_EQ(i.dtype(), DType::kI32);
  EXPECT_EQ(i.Item<int32_t>().value(), -9);
}

TEST(TensorTest, ZeroSizeDimension) {
  absl::StatusOr<Tensor> t = Tensor::FromHost<float>({2, 0, 3}, std::vector<float>{});
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->numel(), 0);
  EXPECT_EQ(t->bytes(), 0u);
  EXPECT_EQ(t->shape(), (Shape{2, 0, 3}));
  EXPECT_TRUE(t->ToVector<float>().value().empty());

  absl::StatusOr<Tensor> z = Tensor::Zeros({0}, DType::kI32);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_TRUE(z->ToVector<int32_t>().value().empty());

  // A zero-size dimension with values given is a count mismatch, not a crash.
  EXPECT_EQ(Tensor::FromHost<float>({0, 3}, {1.0f}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TensorTest, ZerosForEveryDType) {
  absl::StatusOr<Tensor> f = Tensor::Zeros({2, 3});
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->dtype(), DType::kF32);  // the default
  EXPECT_EQ(f->device(), Device::kCpu);
  EXPECT_EQ(f->ToVector<float>().value(), std::vector<float>(6, 0.0f));

  absl::StatusOr<Tensor> d = Tensor::Zeros({5}, DType::kF64);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->ToVector<double>().value(), std::vector<double>(5, 0.0));

  absl::StatusOr<Tensor> i = Tensor::Zeros({}, DType::kI32);
  ASSERT_TRUE(i.ok()) << i.status();
  EXPECT_EQ(i->rank(), 0);
  EXPECT_EQ(i->Item<int32_t>().value(), 0);
}

TEST(TensorTest, NegativeDimensionIsInvalidArgumentNamingTheShape) {
  absl::StatusOr<Tensor> z = Tensor::Zeros({2, -1});
  EXPECT_EQ(z.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(z.status().message(), HasSubstr("(2, -1)"));
  EXPECT_THAT(z.status().message(), HasSubstr("has a negative dimension"));

  // Two negative dimensions multiply to a positive element count; still rejected.
  absl::StatusOr<Tensor> h = Tensor::FromHost<float>({-2, -3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(h.status().message(), HasSubstr("(-2, -3) has a negative dimension"));

  absl::StatusOr<Tensor> u = Tensor::Uninitialized(TensorMeta{{-4}, DType::kF64, Device::kCpu});
  EXPECT_EQ(u.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(u.status().message(), HasSubstr("(-4) has a negative dimension"));
}

TEST(TensorTest, FromHostWithWrongCountNamesBothCounts) {
  absl::StatusOr<Tensor> few = Tensor::FromHost<float>({2, 3}, {1, 2, 3, 4, 5});
  EXPECT_EQ(few.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(few.status().message(), HasSubstr("(2, 3)"));
  EXPECT_THAT(few.status().message(), HasSubstr("needs 6 values but got 5"));

  absl::StatusOr<Tensor> many = Tensor::FromHost<int32_t>({}, {1, 2});
  EXPECT_EQ(many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(many.status().message(), HasSubstr("needs 1 values but got 2"));
}

TEST(TensorTest, ToVectorWithWrongDTypeFails) {
  Tensor t = Tensor::FromHost<float>({2}, {1, 2}).value();
  absl::StatusOr<std::vector<int32_t>> as_int = t.ToVector<int32_t>();
  EXPECT_EQ(as_int.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(as_int.status().message(), HasSubstr("ToVector<i32>"));
  EXPECT_THAT(as_int.status().message(), HasSubstr("f32(2)@cpu"));
  EXPECT_FALSE(t.ToVector<double>().ok());
  EXPECT_FALSE(t.Item<double>().ok());
}

TEST(TensorTest, ItemNeedsExactlyOneElement) {
  Tensor t = Tensor::FromHost<float>({3}, {1, 2, 3}).value();
  absl::StatusOr<float> item = t.Item<float>();
  EXPECT_EQ(item.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(item.status().message(), HasSubstr("f32(3)@cpu"));
  EXPECT_THAT(item.status().message(), HasSubstr("exactly one element"));

  Tensor empty = Tensor::Zeros({0}).value();
  EXPECT_EQ(empty.Item<float>().status().code(), absl::StatusCode::kInvalidArgument);

  Tensor one = Tensor::FromHost<float>({1, 1}, {7}).value();
  EXPECT_EQ(one.Item<float>().value(), 7.0f);
}

TEST(TensorTest, ErrorTensorCarriesItsStatus) {
  Tensor e = Tensor::Error(absl::NotFoundError("no such op"));
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(e.status().message(), "no such op");
  EXPECT_EQ(e.DebugString(), "error: no such op");
  EXPECT_EQ(e.ToVector<float>().status(), e.status());
  EXPECT_EQ(e.Item<float>().status(), e.status());
  EXPECT_EQ(e.ToDevice(Device::kCpu).status(), e.status());

  Tensor copy = e;
  EXPECT_FALSE(copy.ok());
  EXPECT_EQ(copy.status(), e.status());
}

// Absence is a state of its own, recognised by identity and not by the status text.
TEST(TensorTest, AbsentIsADistinctState) {
  EXPECT_TRUE(Tensor().absent());
  EXPECT_TRUE(Tensor::Absent().absent());
  const Tensor copy = Tensor::Absent();
  EXPECT_TRUE(Tensor(copy).absent());
  EXPECT_FALSE(Tensor::Error(absl::FailedPreconditionError("empty tensor")).absent());
  EXPECT_FALSE(Tensor::Error(Tensor().status()).absent());
  EXPECT_FALSE(Tensor::Zeros({2}).value().absent());
  Tensor assigned;
  assigned = Tensor::Zeros({1}).value();
  EXPECT_FALSE(assigned.absent());
}

TEST(TensorTest, DefaultTensorIsEmptyTensorError) {
  Tensor t;
  EXPECT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(t.status().message(), "empty tensor");
  EXPECT_EQ(t.DebugString(), "error: empty tensor");
  EXPECT_FALSE(t.ToVector<float>().ok());

  // Assigning a value makes it OK.
  t = Tensor::Scalar(1.0f);
  EXPECT_TRUE(t.ok());
}

TEST(TensorTest, CopiesShareStorageAndIdentity) {
  Tensor a = Tensor::FromHost<float>({2}, {1, 2}).value();
  Tensor b = a;
  EXPECT_EQ(b.id(), a.id());
  EXPECT_EQ(b.storage().get(), a.storage().get());
  EXPECT_EQ(b.data<float>(), a.data<float>());
  Tensor c;
  c = a;
  EXPECT_EQ(c.id(), a.id());
  EXPECT_EQ(c.storage().get(), a.storage().get());

  // Equal values made separately are distinct tensors.
  Tensor d = Tensor::FromHost<float>({2}, {1, 2}).value();
  EXPECT_NE(d.id(), a.id());
  EXPECT_NE(d.storage().get(), a.storage().get());
  Tensor e = Tensor::Zeros({2}).value();
  EXPECT_NE(e.id(), a.id());
  EXPECT_NE(e.id(), d.id());
  EXPECT_NE(Tensor::Scalar(1.0f).id(), Tensor::Scalar(1.0f).id());
  Tensor w = Tensor::Wrap(a.storage(), a.meta());
  EXPECT_NE(w.id(), a.id());
  EXPECT_EQ(w.storage().get(), a.storage().get());
  EXPECT_NE(NewTensorId(), NewTensorId());
}

TEST(TensorTest, StorageIs64ByteAligned) {
  for (int64_t n : {0, 1, 3, 15, 16, 17, 1000}) {
    Tensor f = Tensor::Zeros({n}).value();
    EXPECT_TRUE(IsAligned64(f.storage()->data())) << n;
    Tensor d = Tensor::Zeros({n}, DType::kF64).value();
    EXPECT_TRUE(IsAligned64(d.storage()->data())) << n;
  }
  for (size_t bytes : {0u, 1u, 63u, 64u, 65u}) {
    absl::StatusOr<std::shared_ptr<Storage>> s = Storage::Allocate(bytes, Device::kCpu);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_NE((*s)->data(), nullptr);
    EXPECT_TRUE(IsAligned64((*s)->data())) << bytes;
    EXPECT_EQ((*s)->bytes(), bytes);
    EXPECT_EQ((*s)->device(), Device::kCpu);
  }
  // Zero-byte allocations are still distinct.
  std::shared_ptr<Storage> x = Storage::Allocate(0, Device::kCpu).value();
  std::shared_ptr<Storage> y = Storage::Allocate(0, Device::kCpu).value();
  EXPECT_NE(x->data(), y->data());
}

TEST(TensorTest, AllocationCountIncreasesPerAllocation) {
  const int64_t start = Storage::allocation_count();
  Tensor a = Tensor::Zeros({4}).value();
  EXPECT_EQ(Storage::allocation_count(), start + 1);
  Tensor b = Tensor::FromHost<int32_t>({2}, {1, 2}).value();
  EXPECT_EQ(Storage::allocation_count(), start + 2);
  Tensor copy = a;
  Tensor moved = std::move(b);
  EXPECT_EQ(Storage::allocation_count(), start + 2);  // copies allocate nothing
  std::shared_ptr<Storage> s = Storage::Allocate(8, Device::kCpu).value();
  EXPECT_EQ(Storage::allocation_count(), start + 3);
  Tensor e;  // the empty tensor allocates no storage
  EXPECT_EQ(Storage::allocation_count(), start + 3);
  EXPECT_TRUE(Tensor::Zeros({2, -1}).status().code() == absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Storage::allocation_count(), start + 3);  // rejected before allocating
}

// This test binary links no CUDA backend, so no hooks are installed.
TEST(TensorTest, CudaWithoutBackendIsFailedPrecondition) {
  ASSERT_EQ(GetCudaMemoryHooks().allocate, nullptr);
  Tensor t = Tensor::FromHost<float>({2, 3}, {1, 2, 3, 4, 5, 6}).value();
  absl::StatusOr<Tensor> moved = t.ToDevice(Device::kCuda);
  EXPECT_EQ(moved.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(moved.status().message(), HasSubstr("f32(2, 3)@cpu"));
  EXPECT_THAT(moved.status().message(), HasSubstr("no CUDA backend is available"));

  absl::StatusOr<Tensor> zeros = Tensor::Zeros({2}, DType::kF32, Device::kCuda);
  EXPECT_EQ(zeros.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(zeros.status().message(), HasSubstr("no CUDA backend is available"));

  absl::StatusOr<std::shared_ptr<Storage>> s = Storage::Allocate(16, Device::kCuda);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kFailedPrecondition);

  // Already on the CPU: the same tensor comes back.
  absl::StatusOr<Tensor> same = t.ToDevice(Device::kCpu);
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_EQ(same->id(), t.id());
}

TEST(TensorTest, DebugStrings) {
  EXPECT_EQ(Tensor::Zeros({2, 3}).value().DebugString(), "f32(2, 3)@cpu");
  EXPECT_EQ(Tensor::Scalar(1.0).DebugString(), "f64()@cpu");
  EXPECT_EQ(Tensor::Zeros({0, 4}, DType::kI32).value().DebugString(), "i32(0, 4)@cpu");
  EXPECT_EQ((TensorMeta{{7}, DType::kF32, Device::kCuda}).DebugString(), "f32(7)@cuda");
  EXPECT_EQ(ShapeString({}), "()");
  EXPECT_EQ(ShapeString({5}), "(5)");
  EXPECT_EQ(DTypeSize(DType::kF32), 4u);
  EXPECT_EQ(DTypeSize(DType::kF64), 8u);
  EXPECT_EQ(DTypeSize(DType::kI32), 4u);
  EXPECT_EQ(NumElements({}), 1);
  EXPECT_EQ(NumElements({2, 0, 5}), 0);
  EXPECT_EQ(NumElements({2, 3, 4}), 24);
}

TEST(TensorTest, MetaEquality) {
  TensorMeta a{{2, 3}, DType::kF32, Device::kCpu};
  EXPECT_EQ(a, (TensorMeta{{2, 3}, DType::kF32, Device::kCpu}));
  EXPECT_NE(a, (TensorMeta{{3, 2}, DType::kF32, Device::kCpu}));
  EXPECT_NE(a, (TensorMeta{{2, 3}, DType::kF64, Device::kCpu}));
  EXPECT_NE(a, (TensorMeta{{2, 3}, DType::kF32, Device::kCuda}));
  EXPECT_EQ(a.numel(), 6);
  EXPECT_EQ(a.bytes(), 24u);
}

TEST(TensorDeathTest, DimOutOfRangeNamesTheShape) {
  Tensor t = Tensor::Zeros({2, 3}).value();
  EXPECT_DEATH(t.dim(2), "axis 2 out of range for shape \\(2, 3\\)");
  EXPECT_DEATH(t.dim(-3), "axis -3 out of range");
}

}  // namespace
}  // namespace mimetic::core
