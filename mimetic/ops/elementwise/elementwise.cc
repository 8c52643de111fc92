// Elementwise ops: metadata, reference kernels (plain loops, the oracle) and VJPs. The fast CPU
// kernels live in elementwise_cpu.cc.
#include "mimetic/ops/elementwise/elementwise.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/core/xt_view.h"
#include "mimetic/ops/elementwise/silu.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/softplus.h"
#include "xtensor/xadapt.hpp"
#include "xtensor/xmath.hpp"
#include "xtensor/xnoalias.hpp"
#include "xtensor/xoperation.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::Shape;
using core::TensorMeta;

template <typename T>
T ApplyBinary(BinaryKind kind, T a, T b) {
  switch (kind) {
    case BinaryKind::kAdd:
      return a + b;
    case BinaryKind::kSub:
      return a - b;
    case BinaryKind::kMul:
      return a * b;
    case BinaryKind::kDiv:
      return a / b;
    case BinaryKind::kMaximum:
      return a >= b ? a : b;
    case BinaryKind::kGreaterEqual:
      return a >= b ? T(1) : T(0);
  }
  return T(0);
}

// Reference formulas, evaluated in T (the oracle for f32 and the gradient checks in f64).
template <typename T>
T ApplyUnary(UnaryKind kind, T x, double c) {
  switch (kind) {
    case UnaryKind::kNeg:
      return -x;
    case UnaryKind::kExp:
      return std::exp(x);
    case UnaryKind::kLog:
      return std::log(x);
    case UnaryKind::kSigmoid:
      return T(1) / (T(1) + std::exp(-x));
    case UnaryKind::kSoftplus:
      return Softplus(x);
    case UnaryKind::kSilu:
      return silu::Reference(x);
    case UnaryKind::kSiluGrad:
      return silu::ReferenceGrad(x);
    case UnaryKind::kSquare:
      return x * x;
    case UnaryKind::kSqrt:
      return std::sqrt(x);
    case UnaryKind::kRsqrt:
      return T(1) / std::sqrt(x);
    case UnaryKind::kTanh:
      return std::tanh(x);
    case UnaryKind::kAbs:
      return std::abs(x);
    case UnaryKind::kSign:
      return x > T(0) ? T(1) : (x < T(0) ? T(-1) : T(0));
    case UnaryKind::kAddScalar:
      return x + static_cast<T>(c);
    case UnaryKind::kMulScalar:
      return x * static_cast<T>(c);
    case UnaryKind::kPowScalar:
      return std::pow(x, static_cast<T>(c));
  }
  return x;
}

// out = kind(a, b), each operand broadcast to out's shape (numpy rules: right-aligned, size-1 dims
// repeat).
template <typename T>
void BinaryReference(BinaryKind kind, const Tensor& a, const Tensor& b, const Tensor& out) {
  const auto av = core::XtDynViewOrDie<const T>(a);  // a's shape
  const auto bv = core::XtDynViewOrDie<const T>(b);  // b's shape
  auto ov = core::XtDynViewOrDie<T>(out);            // broadcast(a's shape, b's shape)
  auto apply = [kind](T x, T y) { return ApplyBinary<T>(kind, x, y); };
  xt::noalias(ov) = xt::make_lambda_xfunction(std::move(apply), av, bv);
}

template <typename From, typename To>
To CastValue(From v) {
  if constexpr (std::is_same_v<To, int32_t> && !std::is_same_v<From, int32_t>) {
    // Truncation toward zero; NaN -> 0 and saturation instead of undefined behaviour.
    if (!(v == v)) return 0;
    if (v >= From(2147483647.0)) return std::numeric_limits<int32_t>::max();
    if (v <= From(-2147483648.0)) return std::numeric_limits<int32_t>::min();
    return static_cast<int32_t>(v);
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

absl::Status internal::ExpectFloat(DType dtype) {
  if (dtype == DType::kF32 || dtype == DType::kF64) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("expected f32 or f64, got ", core::DTypeName(dtype)));
}

// ---- binary ----

const char* BinaryOp::name() const {
  switch (kind_) {
    case BinaryKind::kAdd:
      return "add";
    case BinaryKind::kSub:
      return "sub";
    case BinaryKind::kMul:
      return "mul";
    case BinaryKind::kDiv:
      return "div";
    case BinaryKind::kMaximum:
      return "maximum";
    case BinaryKind::kGreaterEqual:
      return "greater_equal";
  }
  return "binary";
}

absl::StatusOr<std::vector<TensorMeta>> BinaryOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 2) return absl::InvalidArgumentError("expected 2 inputs");
  if (in[0].dtype != in[1].dtype) {
    return absl::InvalidArgumentError(absl::StrCat("dtypes differ (", core::DTypeName(in[0].dtype), " and ",
                                                   core::DTypeName(in[1].dtype),
                                                   "); expected the same dtype"));
  }
  if (kind_ == BinaryKind::kDiv || kind_ == BinaryKind::kGreaterEqual) {
    RETURN_IF_ERROR(internal::ExpectFloat(in[0].dtype));
  }
  ASSIGN_OR_RETURN(Shape shape, internal::BroadcastShapes(in[0].shape, in[1].shape));
  return std::vector<TensorMeta>{TensorMeta{shape, in[0].dtype, in[0].device}};
}

absl::Status BinaryOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  internal::DispatchDType(in[0].dtype(),
                          [&](auto tag) { BinaryReference<decltype(tag)>(kind_, in[0], in[1], out[0]); });
  return absl::OkStatus();
}

std::vector<Tensor> BinaryOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                                  absl::Span<const Tensor> out_grads) const {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const Tensor& g = out_grads[0];
  switch (kind_) {
    case BinaryKind::kAdd:
      return {SumTo(g, a.shape()), SumTo(g, b.shape())};
    case BinaryKind::kSub:
      return {SumTo(g, a.shape()), SumTo(Neg(g), b.shape())};
    case BinaryKind::kMul:
      return {SumTo(Mul(g, b), a.shape()), SumTo(Mul(g, a), b.shape())};
    case BinaryKind::kDiv: {
      // d(a/b)/db = -a/b^2 = -(1/b) * out.
      Tensor g_over_b = Div(g, b);
      return {SumTo(g_over_b, a.shape()), SumTo(Neg(Mul(g_over_b, out[0])), b.shape())};
    }
    case BinaryKind::kMaximum: {
      Tensor ga = Mul(g, GreaterEqual(a, b));  // ties go to a
      return {SumTo(ga, a.shape()), SumTo(Sub(g, ga), b.shape())};
    }
    case BinaryKind::kGreaterEqual:
      return {ZerosLike(a), ZerosLike(b)};
  }
  return {Tensor(), Tensor()};
}

// ---- unary ----

const char* UnaryOp::name() const {
  switch (kind_) {
    case UnaryKind::kNeg:
      return "neg";
    case UnaryKind::kExp:
      return "exp";
    case UnaryKind::kLog:
      return "log";
    case UnaryKind::kSigmoid:
      return "sigmoid";
    case UnaryKind::kSoftplus:
      return "softplus";
    case UnaryKind::kSilu:
      return "silu";
    case UnaryKind::kSiluGrad:
      return "silu_grad";
    case UnaryKind::kSquare:
      return "square";
    case UnaryKind::kSqrt:
      return "sqrt";
    case UnaryKind::kRsqrt:
      return "rsqrt";
    case UnaryKind::kTanh:
      return "tanh";
    case UnaryKind::kAbs:
      return "abs";
    case UnaryKind::kSign:
      return "sign";
    case UnaryKind::kAddScalar:
      return "add_scalar";
    case UnaryKind::kMulScalar:
      return "mul_scalar";
    case UnaryKind::kPowScalar:
      return "pow_scalar";
  }
  return "unary";
}

std::string UnaryOp::AttrString() const {
  switch (kind_) {
    case UnaryKind::kAddScalar:
    case UnaryKind::kMulScalar:
    case UnaryKind::kPowScalar:
      return absl::StrCat("c=", scalar_);
    default:
      return "";
  }
}

absl::StatusOr<std::vector<TensorMeta>> UnaryOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  RETURN_IF_ERROR(internal::ExpectFloat(in[0].dtype));
  return std::vector<TensorMeta>{in[0]};
}

absl::Status UnaryOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int64_t n = in[0].numel();
  if (in[0].dtype() == DType::kF64) {
    const double* x = in[0].data<double>();
    double* y = out[0].mutable_data<double>();
    for (int64_t i = 0; i < n; ++i) y[i] = ApplyUnary<double>(kind_, x[i], scalar_);
  } else {
    const float* x = in[0].data<float>();
    float* y = out[0].mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) y[i] = ApplyUnary<float>(kind_, x[i], scalar_);
  }
  return absl::OkStatus();
}

std::vector<Tensor> UnaryOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor> out,
                                 absl::Span<const Tensor> out_grads) const {
  const Tensor& x = in[0];
  const Tensor& y = out[0];
  const Tensor& g = out_grads[0];
  switch (kind_) {
    case UnaryKind::kNeg:
      return {Neg(g)};
    case UnaryKind::kExp:
      return {Mul(g, y)};
    case UnaryKind::kLog:
      return {Div(g, x)};
    case UnaryKind::kSigmoid:
      return {Mul(g, Mul(y, AddScalar(Neg(y), 1.0)))};  // s (1 - s)
    case UnaryKind::kSoftplus:
      return {Mul(g, Sigmoid(x))};
    case UnaryKind::kSilu:
      return {Mul(g, SiluGrad(x))};
    case UnaryKind::kSiluGrad: {
      // d/dx [s (1 + x (1 - s))] = s (1 - s) (2 + x (1 - 2 s)).
      Tensor s = Sigmoid(x);
      Tensor ds = Mul(s, AddScalar(Neg(s), 1.0));
      return {Mul(g, Mul(ds, AddScalar(Mul(x, AddScalar(MulScalar(s, -2.0), 1.0)), 2.0)))};
    }
    case UnaryKind::kSquare:
      return {Mul(g, MulScalar(x, 2.0))};
    case UnaryKind::kSqrt:
      return {Div(MulScalar(g, 0.5), y)};
    case UnaryKind::kRsqrt:
      return {Mul(g, Div(MulScalar(y, -0.5), x))};  // -x^(-3/2) / 2 = -y / (2 x)
    case UnaryKind::kTanh:
      return {Mul(g, AddScalar(Neg(Square(y)), 1.0))};
    case UnaryKind::kAbs:
      return {Mul(g, Sign(x))};
    case UnaryKind::kSign:
      return {ZerosLike(x)};
    case UnaryKind::kAddScalar:
      return {g};
    case UnaryKind::kMulScalar:
      return {MulScalar(g, scalar_)};
    case UnaryKind::kPowScalar:
      if (scalar_ == 0) return {ZerosLike(x)};
      return {Mul(g, MulScalar(PowScalar(x, scalar_ - 1.0), scalar_))};
  }
  return {Tensor()};
}

// ---- cast ----

std::string CastOp::AttrString() const { return absl::StrCat("dtype=", core::DTypeName(dtype_)); }

absl::StatusOr<std::vector<TensorMeta>> CastOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 1) return absl::InvalidArgumentError("expected 1 input");
  if (dtype_ != DType::kF32 && dtype_ != DType::kF64 && dtype_ != DType::kI32) {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported target dtype ", static_cast<int>(dtype_), "; expected f32, f64 or i32"));
  }
  return std::vector<TensorMeta>{TensorMeta{in[0].shape, dtype_, in[0].device}};
}

absl::Status CastOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int64_t n = in[0].numel();
  internal::DispatchDType(in[0].dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    internal::DispatchDType(dtype_, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* x = in[0].data<From>();
      To* y = out[0].mutable_data<To>();
      for (int64_t i = 0; i < n; ++i) y[i] = CastValue<From, To>(x[i]);
    });
  });
  return absl::OkStatus();
}

absl::Status CastOp::ComputeCpu(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  const int64_t n = in[0].numel();
  internal::DispatchDType(in[0].dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    internal::DispatchDType(dtype_, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* x = in[0].data<From>();
      To* y = out[0].mutable_data<To>();
#pragma omp parallel for schedule(static) if (n > internal::kParallelThreshold)
      for (int64_t i = 0; i < n; ++i) y[i] = CastValue<From, To>(x[i]);
    });
  });
  return absl::OkStatus();
}

std::vector<Tensor> CastOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                absl::Span<const Tensor> out_grads) const {
  if (in[0].dtype() == DType::kI32) return {Tensor()};
  if (dtype_ == DType::kI32) return {ZerosLike(in[0])};
  return {Cast(out_grads[0], in[0].dtype())};
}

// ---- where ----

absl::StatusOr<std::vector<TensorMeta>> WhereOp::InferMeta(absl::Span<const TensorMeta> in) const {
  if (in.size() != 3) return absl::InvalidArgumentError("expected 3 inputs (cond, a, b)");
  if (in[1].dtype != in[2].dtype) {
    return absl::InvalidArgumentError(absl::StrCat("dtypes of a and b differ (", core::DTypeName(in[1].dtype),
                                                   " and ", core::DTypeName(in[2].dtype),
                                                   "); expected the same dtype"));
  }
  ASSIGN_OR_RETURN(Shape ab, internal::BroadcastShapes(in[1].shape, in[2].shape));
  ASSIGN_OR_RETURN(Shape shape, internal::BroadcastShapes(in[0].shape, ab));
  return std::vector<TensorMeta>{TensorMeta{shape, in[1].dtype, in[1].device}};
}

absl::Status WhereOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  internal::DispatchDType(in[0].dtype(), [&](auto ctag) {
    using C = decltype(ctag);
    internal::DispatchDType(in[1].dtype(), [&](auto tag) {
      using T = decltype(tag);
      const auto c = core::XtDynViewOrDie<const C>(in[0]);  // cond's shape
      const auto a = core::XtDynViewOrDie<const T>(in[1]);  // a's shape
      const auto b = core::XtDynViewOrDie<const T>(in[2]);  // b's shape
      auto o = core::XtDynViewOrDie<T>(out[0]);             // broadcast(cond's, a's, b's shapes)
      xt::noalias(o) = xt::where(xt::not_equal(c, C(0)), a, b);
    });
  });
  return absl::OkStatus();
}

std::vector<Tensor> WhereOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                 absl::Span<const Tensor> out_grads) const {
  const Tensor& g = out_grads[0];
  Tensor zero = core::Fill(TensorMeta{{}, g.dtype(), g.device()}, 0.0);
  return {ZerosLike(in[0]), SumTo(Where(in[0], g, zero), in[1].shape()),
          SumTo(Where(in[0], zero, g), in[2].shape())};
}

// ---- public functions ----

namespace {
Tensor CallBinary(BinaryKind kind, const Tensor& a, const Tensor& b) {
  return core::Call(std::make_shared<BinaryOp>(kind), {a, b})[0];
}
Tensor CallUnary(UnaryKind kind, const Tensor& x, double c = 0) {
  return core::Call(std::make_shared<UnaryOp>(kind, c), {x})[0];
}
}  // namespace

Tensor Add(const Tensor& a, const Tensor& b) { return CallBinary(BinaryKind::kAdd, a, b); }
Tensor Sub(const Tensor& a, const Tensor& b) { return CallBinary(BinaryKind::kSub, a, b); }
Tensor Mul(const Tensor& a, const Tensor& b) { return CallBinary(BinaryKind::kMul, a, b); }
Tensor Div(const Tensor& a, const Tensor& b) { return CallBinary(BinaryKind::kDiv, a, b); }
Tensor Maximum(const Tensor& a, const Tensor& b) { return CallBinary(BinaryKind::kMaximum, a, b); }
Tensor GreaterEqual(const Tensor& a, const Tensor& b) { return CallBinary(BinaryKind::kGreaterEqual, a, b); }

Tensor Neg(const Tensor& x) { return CallUnary(UnaryKind::kNeg, x); }
Tensor Exp(const Tensor& x) { return CallUnary(UnaryKind::kExp, x); }
Tensor Log(const Tensor& x) { return CallUnary(UnaryKind::kLog, x); }
Tensor Sigmoid(const Tensor& x) { return CallUnary(UnaryKind::kSigmoid, x); }
Tensor Softplus(const Tensor& x) { return CallUnary(UnaryKind::kSoftplus, x); }
Tensor Silu(const Tensor& x) { return CallUnary(UnaryKind::kSilu, x); }
Tensor SiluGrad(const Tensor& x) { return CallUnary(UnaryKind::kSiluGrad, x); }
Tensor Square(const Tensor& x) { return CallUnary(UnaryKind::kSquare, x); }
Tensor Sqrt(const Tensor& x) { return CallUnary(UnaryKind::kSqrt, x); }
Tensor Rsqrt(const Tensor& x) { return CallUnary(UnaryKind::kRsqrt, x); }
Tensor Tanh(const Tensor& x) { return CallUnary(UnaryKind::kTanh, x); }
Tensor Abs(const Tensor& x) { return CallUnary(UnaryKind::kAbs, x); }
Tensor Sign(const Tensor& x) { return CallUnary(UnaryKind::kSign, x); }
Tensor AddScalar(const Tensor& x, double c) { return CallUnary(UnaryKind::kAddScalar, x, c); }
Tensor MulScalar(const Tensor& x, double c) { return CallUnary(UnaryKind::kMulScalar, x, c); }
Tensor PowScalar(const Tensor& x, double p) { return CallUnary(UnaryKind::kPowScalar, x, p); }

Tensor Cast(const Tensor& x, core::DType dtype) {
  if (x.ok() && x.dtype() == dtype) return x;
  return core::Call(std::make_shared<CastOp>(dtype), {x})[0];
}

Tensor ZerosLike(const Tensor& x) {
  if (!x.ok()) return x;
  return core::Fill(x.meta(), 0.0);
}

Tensor OnesLike(const Tensor& x) {
  if (!x.ok()) return x;
  return core::Fill(x.meta(), 1.0);
}

Tensor Where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  return core::Call(std::make_shared<WhereOp>(), {cond, a, b})[0];
}

}  // namespace mimetic::ops
