#include "mimetic/core/op.h"

#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "mimetic/core/tensor.h"

namespace mimetic::core {
namespace {

// Two outputs of its input's metadata (a copy and a negated copy); fails inference on an empty
// input and its kernel on an input whose first element is 13.
class CopyAndNegateOp : public Op {
 public:
  const char* name() const override { return "copy_and_negate"; }
  size_t num_outputs() const override { return 2; }
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override {
    if (in.size() != 1 || in[0].numel() == 0)
      return absl::InvalidArgumentError("expected one non-empty input");
    return std::vector<TensorMeta>{in[0], in[0]};
  }
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override {
    const float* x = in[0].data<float>();
    if (x[0] == 13.0f) return absl::InternalError("unlucky input");
    for (int64_t i = 0; i < in[0].numel(); ++i) {
      out[0].mutable_data<float>()[i] = x[i];
      out[1].mutable_data<float>()[i] = -x[i];
    }
    return absl::OkStatus();
  }
};

// Every failure path of Call returns num_outputs() error tensors, never a single one.
TEST(CallTest, FailuresReturnOneErrorPerOutput) {
  const OpPtr op = std::make_shared<CopyAndNegateOp>();
  const Tensor good = Tensor::FromHost<float>({2}, {1.0f, 2.0f}).value();
  const Tensor empty = Tensor::Zeros({0}).value();
  const Tensor unlucky = Tensor::FromHost<float>({1}, {13.0f}).value();
  const Tensor error = Tensor::Error(absl::InvalidArgumentError("upstream"));

  std::vector<Tensor> ok = Call(op, {good});
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[1].ToVector<float>().value(), (std::vector<float>{-1.0f, -2.0f}));

  for (const Tensor& bad : {empty, unlucky, error}) {
    std::vector<Tensor> out = Call(op, {bad});
    ASSERT_EQ(out.size(), 2u) << bad.DebugString();
    EXPECT_FALSE(out[0].ok());
    EXPECT_FALSE(out[1].ok());
    EXPECT_EQ(out[0].status(), out[1].status());
    EXPECT_FALSE(out[1].absent());
  }
  EXPECT_EQ(Call(op, {error})[1].status().message(), "upstream");
  EXPECT_NE(Call(op, {empty})[1].status().message().find("copy_and_negate"), absl::string_view::npos);
}

}  // namespace
}  // namespace mimetic::core
