// Norm family: shape inference, the reference kernels (the oracle: plain loops, accumulating in
// double), VJPs and the public functions. The fast CPU kernels are in norm_cpu.cc.
#include "mimetic/ops/norm/norm.h"

#include <array>
#include <cmath>
#include <cstddef>
#include <memory>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "mimetic/core/xt_view.h"
#include "xtensor/xtensor.hpp"

namespace mimetic::ops {
namespace {

using core::DType;
using core::ShapeString;
using core::TensorMeta;
using core::XtView;
using core::XtViewOrDie;

absl::Status CheckEps(double eps) {
  if (!std::isfinite(eps) || eps < 0) {
    return absl::InvalidArgumentError(absl::StrCat("eps must be finite and >= 0; got ", eps));
  }
  return absl::OkStatus();
}

// x: (..., D) with D >= 1 and a float dtype.
absl::Status CheckRows(const TensorMeta& x, const char* x_name) {
  if (x.dtype != DType::kF32 && x.dtype != DType::kF64) {
    return absl::InvalidArgumentError(
        absl::StrCat(x_name, " has dtype ", core::DTypeName(x.dtype), "; expected f32 or f64"));
  }
  if (x.shape.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(x_name, " is a scalar; expected shape (..., D) with rank >= 1"));
  }
  if (x.shape.back() < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(x_name, " has shape ", ShapeString(x.shape), "; expected a last dimension >= 1"));
  }
  return absl::OkStatus();
}

// `other` has exactly x's metadata.
absl::Status CheckSameAs(const TensorMeta& other, const char* other_name, const TensorMeta& x,
                         const char* x_name) {
  if (other != x) {
    return absl::InvalidArgumentError(absl::StrCat(other_name, " is ", other.DebugString(), "; expected ",
                                                   x.DebugString(), " (the same as ", x_name, ")"));
  }
  return absl::OkStatus();
}

// `v` is (D) with D the last dimension of x and x's dtype.
absl::Status CheckVector(const TensorMeta& v, const char* v_name, const TensorMeta& x, const char* x_name) {
  const int64_t d = x.shape.back();
  if (v.shape != core::Shape{d}) {
    return absl::InvalidArgumentError(absl::StrCat(v_name, " has shape ", ShapeString(v.shape),
                                                   "; expected (", d, ") to match the last dimension of ",
                                                   x_name, " ", ShapeString(x.shape)));
  }
  if (v.dtype != x.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(v_name, " has dtype ", core::DTypeName(v.dtype), " but ",
                                                   x_name, " has ", core::DTypeName(x.dtype),
                                                   "; expected one float dtype for all inputs"));
  }
  return absl::OkStatus();
}

absl::Status CheckCount(absl::Span<const TensorMeta> in, size_t n) {
  if (in.size() != n)
    return absl::InvalidArgumentError(absl::StrCat("expected ", n, " inputs; got ", in.size()));
  return absl::OkStatus();
}

absl::Status CheckGroup(const TensorMeta& y, int64_t group_size) {
  const int64_t e = y.shape.back();
  if (group_size < 1 || e % group_size != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("group_size ", group_size, " must be >= 1 and divide the last dimension E = ", e));
  }
  return absl::OkStatus();
}

// ---- Reference kernels: every row of the last axis normalised independently. ----

// x (..., D) as its (rows, D) matrix, rows = numel / D.
template <typename T>
XtView<T, 2> RowsView(const Tensor& x) {
  const int64_t d = x.dim(-1);
  return core::ReshapedXtViewOrDie<T>(x, {x.numel() / d, d});
}

// x (..., E) as (rows, E / g, g): each row's E channels in groups of g.
template <typename T>
XtView<T, 3> GroupsView(const Tensor& x, int64_t g) {
  const int64_t e = x.dim(-1);
  return core::ReshapedXtViewOrDie<T>(x, {x.numel() / e, e / g, g});
}

// y = x r w with r = (mean_i x_i^2 + eps)^(-1/2) per row.
template <typename T>
void RmsNormRef(absl::Span<const Tensor> in, absl::Span<const Tensor> out, double eps) {
  const XtView<const T, 2> x = RowsView<const T>(in[0]);        // (rows, D)
  const XtView<const T, 1> w = XtViewOrDie<const T, 1>(in[1]);  // (D)
  XtView<T, 2> y = RowsView<T>(out[0]);                         // (rows, D)
  const int64_t rows = x.shape(0), d = x.shape(1);
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += double(x(r, i)) * x(r, i);
    const double rstd = 1.0 / std::sqrt(ss / d + eps);
    for (int64_t i = 0; i < d; ++i) y(r, i) = static_cast<T>(x(r, i) * rstd * w(i));
  }
}

// y = x r w with r = (mean(x^2) + eps)^(-1/2); dr/dx_i = -r^3 x_i / d, so
// dx_i = r w_i dy_i - x_i r^3 / d * sum_j dy_j w_j x_j;  dw_i = sum_rows dy_i x_i r.
template <typename T>
void RmsNormBackwardRef(absl::Span<const Tensor> in, absl::Span<const Tensor> out, double eps) {
  const XtView<const T, 2> x = RowsView<const T>(in[0]);        // (rows, D)
  const XtView<const T, 1> w = XtViewOrDie<const T, 1>(in[1]);  // (D)
  const XtView<const T, 2> dy = RowsView<const T>(in[2]);       // (rows, D)
  XtView<T, 2> dx = RowsView<T>(out[0]);                        // (rows, D)
  XtView<T, 1> dw = XtViewOrDie<T, 1>(out[1]);                  // (D)
  const int64_t rows = x.shape(0), d = x.shape(1);
  xt::xtensor<double, 1> dw_acc = xt::zeros<double>({d});
  for (int64_t r = 0; r < rows; ++r) {
    double ss = 0, dot = 0;
    for (int64_t i = 0; i < d; ++i) {
      ss += double(x(r, i)) * x(r, i);
      dot += double(dy(r, i)) * w(i) * x(r, i);
    }
    const double rstd = 1.0 / std::sqrt(ss / d + eps);
    const double c = rstd * rstd * rstd * dot / d;
    for (int64_t i = 0; i < d; ++i) {
      dx(r, i) = static_cast<T>(rstd * dy(r, i) * w(i) - x(r, i) * c);
      dw_acc(i) += double(dy(r, i)) * x(r, i) * rstd;
    }
  }
  dw = xt::cast<T>(dw_acc);
}

// y = (x - mean) r w + b with r = (var + eps)^(-1/2) per row.
template <typename T>
void LayerNormRef(absl::Span<const Tensor> in, absl::Span<const Tensor> out, double eps) {
  const XtView<const T, 2> x = RowsView<const T>(in[0]);        // (rows, D)
  const XtView<const T, 1> w = XtViewOrDie<const T, 1>(in[1]);  // (D)
  const XtView<const T, 1> b = XtViewOrDie<const T, 1>(in[2]);  // (D)
  XtView<T, 2> y = RowsView<T>(out[0]);                         // (rows, D)
  const int64_t rows = x.shape(0), d = x.shape(1);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i) mean += x(r, i);
    mean /= d;
    for (int64_t i = 0; i < d; ++i) var += (x(r, i) - mean) * (x(r, i) - mean);
    const double rstd = 1.0 / std::sqrt(var / d + eps);
    for (int64_t i = 0; i < d; ++i) y(r, i) = static_cast<T>((x(r, i) - mean) * rstd * w(i) + b(i));
  }
}

// xhat = (x - mean) r; with g = dy w: dx = r (g - mean(g) - xhat mean(g xhat)).
template <typename T>
void LayerNormBackwardRef(absl::Span<const Tensor> in, absl::Span<const Tensor> out, double eps) {
  const XtView<const T, 2> x = RowsView<const T>(in[0]);        // (rows, D)
  const XtView<const T, 1> w = XtViewOrDie<const T, 1>(in[1]);  // (D)
  const XtView<const T, 2> dy = RowsView<const T>(in[2]);       // (rows, D)
  XtView<T, 2> dx = RowsView<T>(out[0]);                        // (rows, D)
  XtView<T, 1> dw = XtViewOrDie<T, 1>(out[1]);                  // (D)
  XtView<T, 1> db = XtViewOrDie<T, 1>(out[2]);                  // (D)
  const int64_t rows = x.shape(0), d = x.shape(1);
  xt::xtensor<double, 1> dw_acc = xt::zeros<double>({d}), db_acc = xt::zeros<double>({d});
  xt::xtensor<double, 1> xhat = xt::empty<double>({d});
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i) mean += x(r, i);
    mean /= d;
    for (int64_t i = 0; i < d; ++i) var += (x(r, i) - mean) * (x(r, i) - mean);
    const double rstd = 1.0 / std::sqrt(var / d + eps);
    double mg = 0, mgx = 0;
    for (int64_t i = 0; i < d; ++i) {
      xhat(i) = (x(r, i) - mean) * rstd;
      mg += double(dy(r, i)) * w(i);
      mgx += double(dy(r, i)) * w(i) * xhat(i);
    }
    mg /= d;
    mgx /= d;
    for (int64_t i = 0; i < d; ++i) {
      dx(r, i) = static_cast<T>(rstd * (double(dy(r, i)) * w(i) - mg - xhat(i) * mgx));
      dw_acc(i) += dy(r, i) * xhat(i);
      db_acc(i) += dy(r, i);
    }
  }
  dw = xt::cast<T>(dw_acc);
  db = xt::cast<T>(db_acc);
}

double Sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

// n = y silu(z); within each group of g channels, out = n r w with r = (mean(n^2) + eps)^(-1/2).
template <typename T>
void GatedRmsNormRef(absl::Span<const Tensor> in, absl::Span<const Tensor> out, int64_t g, double eps) {
  const XtView<const T, 3> y = GroupsView<const T>(in[0], g);  // (rows, groups, g)
  const XtView<const T, 3> z = GroupsView<const T>(in[1], g);  // (rows, groups, g)
  const XtView<const T, 2> w =
      core::ReshapedXtViewOrDie<const T>(in[2], {y.shape(1), y.shape(2)});  // (groups, g)
  XtView<T, 3> o = GroupsView<T>(out[0], g);                                // (rows, groups, g)
  const int64_t rows = y.shape(0), groups = y.shape(1);
  xt::xtensor<double, 1> n = xt::empty<double>({g});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < groups; ++k) {
      double ss = 0;
      for (int64_t i = 0; i < g; ++i) {
        n(i) = y(r, k, i) * (z(r, k, i) * Sigmoid(z(r, k, i)));
        ss += n(i) * n(i);
      }
      const double rstd = 1.0 / std::sqrt(ss / g + eps);
      for (int64_t i = 0; i < g; ++i) o(r, k, i) = static_cast<T>(n(i) * rstd * w(k, i));
    }
  }
}

// n = y silu(z); within a group, dn as in RmsNormBackwardRef with d = group size; then
// dy = dn silu(z), dz = dn y silu'(z) with silu'(z) = s (1 + z (1 - s)), s = sigmoid(z).
template <typename T>
void GatedRmsNormBackwardRef(absl::Span<const Tensor> in, absl::Span<const Tensor> out, int64_t g,
                             double eps) {
  const XtView<const T, 3> y = GroupsView<const T>(in[0], g);  // (rows, groups, g)
  const XtView<const T, 3> z = GroupsView<const T>(in[1], g);  // (rows, groups, g)
  const XtView<const T, 2> w =
      core::ReshapedXtViewOrDie<const T>(in[2], {y.shape(1), y.shape(2)});           // (groups, g)
  const XtView<const T, 3> dout = GroupsView<const T>(in[3], g);                     // (rows, groups, g)
  XtView<T, 3> dy = GroupsView<T>(out[0], g);                                        // (rows, groups, g)
  XtView<T, 3> dz = GroupsView<T>(out[1], g);                                        // (rows, groups, g)
  XtView<T, 2> dw = core::ReshapedXtViewOrDie<T>(out[2], {y.shape(1), y.shape(2)});  // (groups, g)
  const int64_t rows = y.shape(0), groups = y.shape(1);
  xt::xtensor<double, 2> dw_acc = xt::zeros<double>(w.shape());
  xt::xtensor<double, 1> n = xt::empty<double>({g});
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < groups; ++k) {
      double ss = 0, dot = 0;
      for (int64_t i = 0; i < g; ++i) {
        n(i) = y(r, k, i) * (z(r, k, i) * Sigmoid(z(r, k, i)));
        ss += n(i) * n(i);
        dot += double(dout(r, k, i)) * w(k, i) * n(i);
      }
      const double rstd = 1.0 / std::sqrt(ss / g + eps);
      const double c = rstd * rstd * rstd * dot / g;
      for (int64_t i = 0; i < g; ++i) {
        const double zi = z(r, k, i);
        const double s = Sigmoid(zi);
        const double dn = rstd * dout(r, k, i) * w(k, i) - n(i) * c;
        dy(r, k, i) = static_cast<T>(dn * zi * s);
        dz(r, k, i) = static_cast<T>(dn * y(r, k, i) * s * (1 + zi * (1 - s)));
        dw_acc(k, i) += dout(r, k, i) * n(i) * rstd;
      }
    }
  }
  dw = xt::cast<T>(dw_acc);
}

}  // namespace

// ---- RmsNorm ----

std::string RmsNormOp::AttrString() const { return absl::StrCat("eps=", eps_); }

absl::StatusOr<std::vector<TensorMeta>> RmsNormOp::InferMeta(absl::Span<const TensorMeta> in) const {
  RETURN_IF_ERROR(CheckCount(in, 2));
  RETURN_IF_ERROR(CheckEps(eps_));
  RETURN_IF_ERROR(CheckRows(in[0], "x"));
  RETURN_IF_ERROR(CheckVector(in[1], "weight", in[0], "x"));
  return std::vector<TensorMeta>{in[0]};
}

absl::Status RmsNormOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    RmsNormRef<double>(in, out, eps_);
  } else {
    RmsNormRef<float>(in, out, eps_);
  }
  return absl::OkStatus();
}

std::vector<Tensor> RmsNormOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                   absl::Span<const Tensor> out_grads) const {
  return RmsNormBackward(in[0], in[1], out_grads[0], eps_);
}

std::string RmsNormBackwardOp::AttrString() const { return absl::StrCat("eps=", eps_); }

absl::StatusOr<std::vector<TensorMeta>> RmsNormBackwardOp::InferMeta(absl::Span<const TensorMeta> in) const {
  RETURN_IF_ERROR(CheckCount(in, 3));
  RETURN_IF_ERROR(CheckEps(eps_));
  RETURN_IF_ERROR(CheckRows(in[0], "x"));
  RETURN_IF_ERROR(CheckVector(in[1], "weight", in[0], "x"));
  RETURN_IF_ERROR(CheckSameAs(in[2], "dout", in[0], "x"));
  return std::vector<TensorMeta>{in[0], in[1]};
}

absl::Status RmsNormBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                 absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    RmsNormBackwardRef<double>(in, out, eps_);
  } else {
    RmsNormBackwardRef<float>(in, out, eps_);
  }
  return absl::OkStatus();
}

// ---- LayerNorm ----

std::string LayerNormOp::AttrString() const { return absl::StrCat("eps=", eps_); }

absl::StatusOr<std::vector<TensorMeta>> LayerNormOp::InferMeta(absl::Span<const TensorMeta> in) const {
  RETURN_IF_ERROR(CheckCount(in, 3));
  RETURN_IF_ERROR(CheckEps(eps_));
  RETURN_IF_ERROR(CheckRows(in[0], "x"));
  RETURN_IF_ERROR(CheckVector(in[1], "weight", in[0], "x"));
  RETURN_IF_ERROR(CheckVector(in[2], "bias", in[0], "x"));
  return std::vector<TensorMeta>{in[0]};
}

absl::Status LayerNormOp::ComputeReference(absl::Span<const Tensor> in, absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    LayerNormRef<double>(in, out, eps_);
  } else {
    LayerNormRef<float>(in, out, eps_);
  }
  return absl::OkStatus();
}

std::vector<Tensor> LayerNormOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                     absl::Span<const Tensor> out_grads) const {
  return LayerNormBackward(in[0], in[1], out_grads[0], eps_);
}

std::string LayerNormBackwardOp::AttrString() const { return absl::StrCat("eps=", eps_); }

absl::StatusOr<std::vector<TensorMeta>> LayerNormBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  RETURN_IF_ERROR(CheckCount(in, 3));
  RETURN_IF_ERROR(CheckEps(eps_));
  RETURN_IF_ERROR(CheckRows(in[0], "x"));
  RETURN_IF_ERROR(CheckVector(in[1], "weight", in[0], "x"));
  RETURN_IF_ERROR(CheckSameAs(in[2], "dout", in[0], "x"));
  return std::vector<TensorMeta>{in[0], in[1], in[1]};
}

absl::Status LayerNormBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                   absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    LayerNormBackwardRef<double>(in, out, eps_);
  } else {
    LayerNormBackwardRef<float>(in, out, eps_);
  }
  return absl::OkStatus();
}

// ---- GatedRmsNorm ----

std::string GatedRmsNormOp::AttrString() const {
  return absl::StrCat("group_size=", group_size_, " eps=", eps_);
}

absl::StatusOr<std::vector<TensorMeta>> GatedRmsNormOp::InferMeta(absl::Span<const TensorMeta> in) const {
  RETURN_IF_ERROR(CheckCount(in, 3));
  RETURN_IF_ERROR(CheckEps(eps_));
  RETURN_IF_ERROR(CheckRows(in[0], "y"));
  RETURN_IF_ERROR(CheckSameAs(in[1], "z", in[0], "y"));
  RETURN_IF_ERROR(CheckVector(in[2], "weight", in[0], "y"));
  RETURN_IF_ERROR(CheckGroup(in[0], group_size_));
  return std::vector<TensorMeta>{in[0]};
}

absl::Status GatedRmsNormOp::ComputeReference(absl::Span<const Tensor> in,
                                              absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    GatedRmsNormRef<double>(in, out, group_size_, eps_);
  } else {
    GatedRmsNormRef<float>(in, out, group_size_, eps_);
  }
  return absl::OkStatus();
}

std::vector<Tensor> GatedRmsNormOp::Vjp(absl::Span<const Tensor> in, absl::Span<const Tensor>,
                                        absl::Span<const Tensor> out_grads) const {
  return GatedRmsNormBackward(in[0], in[1], in[2], out_grads[0], group_size_, eps_);
}

std::string GatedRmsNormBackwardOp::AttrString() const {
  return absl::StrCat("group_size=", group_size_, " eps=", eps_);
}

absl::StatusOr<std::vector<TensorMeta>> GatedRmsNormBackwardOp::InferMeta(
    absl::Span<const TensorMeta> in) const {
  RETURN_IF_ERROR(CheckCount(in, 4));
  RETURN_IF_ERROR(CheckEps(eps_));
  RETURN_IF_ERROR(CheckRows(in[0], "y"));
  RETURN_IF_ERROR(CheckSameAs(in[1], "z", in[0], "y"));
  RETURN_IF_ERROR(CheckVector(in[2], "weight", in[0], "y"));
  RETURN_IF_ERROR(CheckSameAs(in[3], "dout", in[0], "y"));
  RETURN_IF_ERROR(CheckGroup(in[0], group_size_));
  return std::vector<TensorMeta>{in[0], in[0], in[2]};
}

absl::Status GatedRmsNormBackwardOp::ComputeReference(absl::Span<const Tensor> in,
                                                      absl::Span<const Tensor> out) const {
  if (in[0].dtype() == DType::kF64) {
    GatedRmsNormBackwardRef<double>(in, out, group_size_, eps_);
  } else {
    GatedRmsNormBackwardRef<float>(in, out, group_size_, eps_);
  }
  return absl::OkStatus();
}

// ---- Public functions ----

Tensor RmsNorm(const Tensor& x, const Tensor& weight, double eps) {
  return core::Call(std::make_shared<RmsNormOp>(eps), {x, weight})[0];
}

Tensor LayerNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  return core::Call(std::make_shared<LayerNormOp>(eps), {x, weight, bias})[0];
}

Tensor GatedRmsNorm(const Tensor& y, const Tensor& z, const Tensor& weight, int64_t group_size, double eps) {
  return core::Call(std::make_shared<GatedRmsNormOp>(group_size, eps), {y, z, weight})[0];
}

std::vector<Tensor> RmsNormBackward(const Tensor& x, const Tensor& weight, const Tensor& dout, double eps) {
  return core::Call(std::make_shared<RmsNormBackwardOp>(eps), {x, weight, dout});
}

std::vector<Tensor> LayerNormBackward(const Tensor& x, const Tensor& weight, const Tensor& dout, double eps) {
  return core::Call(std::make_shared<LayerNormBackwardOp>(eps), {x, weight, dout});
}

std::vector<Tensor> GatedRmsNormBackward(const Tensor& y, const Tensor& z, const Tensor& weight,
                                         const Tensor& dout, int64_t group_size, double eps) {
  return core::Call(std::make_shared<GatedRmsNormBackwardOp>(group_size, eps), {y, z, weight, dout});
}

}  // namespace mimetic::ops
