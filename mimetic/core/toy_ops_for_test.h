// Three tiny primitives (elementwise multiply, sum to a scalar, reshape view) so the core
// transformations can be tested without depending on mimetic/ops. Test-only.
#ifndef MIMETIC_CORE_TOY_OPS_FOR_TEST_H_
#define MIMETIC_CORE_TOY_OPS_FOR_TEST_H_

#include "absl/strings/str_cat.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/op.h"

namespace mimetic::core::toy {

Tensor Mul(const Tensor& a, const Tensor& b);
Tensor SumAll(const Tensor& a);
Tensor BroadcastScalar(const Tensor& s, const TensorMeta& like);
Tensor Reshape(const Tensor& a, Shape shape);

class MulOp : public Op {
 public:
  const char* name() const override { return "toy_mul"; }
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override {
    if (in[0] != in[1]) return absl::InvalidArgumentError("shapes differ");
    return std::vector<TensorMeta>{in[0]};
  }
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override {
    if (in[0].dtype() == DType::kF64) {
      for (int64_t i = 0; i < out[0].numel(); ++i)
        out[0].mutable_data<double>()[i] = in[0].data<double>()[i] * in[1].data<double>()[i];
    } else {
      for (int64_t i = 0; i < out[0].numel(); ++i)
        out[0].mutable_data<float>()[i] = in[0].data<float>()[i] * in[1].data<float>()[i];
    }
    return absl::OkStatus();
  }
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                          absl::Span<const Tensor> g) const override {
    return {Mul(g[0], in[1]), Mul(g[0], in[0])};
  }
};

class SumAllOp : public Op {
 public:
  const char* name() const override { return "toy_sum"; }
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override {
    return std::vector<TensorMeta>{TensorMeta{{}, in[0].dtype, in[0].device}};
  }
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override {
    double s = 0;
    for (int64_t i = 0; i < in[0].numel(); ++i)
      s += in[0].dtype() == DType::kF64 ? in[0].data<double>()[i] : in[0].data<float>()[i];
    if (in[0].dtype() == DType::kF64) {
      out[0].mutable_data<double>()[0] = s;
    } else {
      out[0].mutable_data<float>()[0] = static_cast<float>(s);
    }
    return absl::OkStatus();
  }
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                          absl::Span<const Tensor> g) const override {
    return {BroadcastScalar(g[0], in[0].meta())};
  }
};

class BroadcastScalarOp : public Op {
 public:
  explicit BroadcastScalarOp(TensorMeta like) : like_(std::move(like)) {}
  const char* name() const override { return "toy_broadcast"; }
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override {
    if (in[0].shape.size() != 0) return absl::InvalidArgumentError("expected a scalar");
    return std::vector<TensorMeta>{like_};
  }
  absl::Status ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const override {
    for (int64_t i = 0; i < out[0].numel(); ++i) {
      if (in[0].dtype() == DType::kF64) {
        out[0].mutable_data<double>()[i] = in[0].data<double>()[0];
      } else {
        out[0].mutable_data<float>()[i] = in[0].data<float>()[0];
      }
    }
    return absl::OkStatus();
  }
  std::vector<Tensor> Vjp(absl::Span<const Tensor>, absl::Span<const Tensor>,
                          absl::Span<const Tensor> g) const override {
    return {SumAll(g[0])};
  }

 private:
  TensorMeta like_;
};

class ReshapeOp : public Op {
 public:
  explicit ReshapeOp(Shape shape) : shape_(std::move(shape)) {}
  const char* name() const override { return "toy_reshape"; }
  bool IsView() const override { return true; }
  absl::StatusOr<std::vector<TensorMeta>> InferMeta(absl::Span<const TensorMeta> in) const override {
    if (NumElements(shape_) != in[0].numel()) return absl::InvalidArgumentError("element count differs");
    return std::vector<TensorMeta>{TensorMeta{shape_, in[0].dtype, in[0].device}};
  }
  absl::Status ComputeReference(absl::Span<const Tensor>, absl::Span<const Tensor>) const override {
    return absl::OkStatus();
  }
  std::vector<Tensor> Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                          absl::Span<const Tensor> g) const override {
    return {Reshape(g[0], in[0].shape())};
  }

 private:
  Shape shape_;
};

inline Tensor Mul(const Tensor& a, const Tensor& b) { return Call(std::make_shared<MulOp>(), {a, b})[0]; }
inline Tensor SumAll(const Tensor& a) { return Call(std::make_shared<SumAllOp>(), {a})[0]; }
inline Tensor BroadcastScalar(const Tensor& s, const TensorMeta& like) {
  return Call(std::make_shared<BroadcastScalarOp>(like), {s})[0];
}
inline Tensor Reshape(const Tensor& a, Shape shape) {
  return Call(std::make_shared<ReshapeOp>(std::move(shape)), {a})[0];
}

}  // namespace mimetic::core::toy

#endif  // MIMETIC_CORE_TOY_OPS_FOR_TEST_H_
