// Norm family: shape inference, the reference kernels (the oracle: plain loops, accumulating in
// double), VJPs and the public functions. The fast CPU kernels are in norm_cpu.cc.
#include "mimetic/ops/norm/norm.h"

#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"

namespace mimetic::ops {
namespace {

using core::DType;
using core::ShapeString;
using core::TensorMeta;

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

// ---- Reference kernels. rows = numel / d; every row normalised independently. ----

template <typename T>
void RmsNormRef(const T* x, const T* w, T* y, int64_t rows, int64_t d, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += double(xr[i]) * xr[i];
    const double rstd = 1.0 / std::sqrt(ss / d + eps);
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = static_cast<T>(xr[i] * rstd * w[i]);
  }
}

// y = x r w with r = (mean(x^2) + eps)^(-1/2); dr/dx_i = -r^3 x_i / d, so
// dx_i = r w_i dy_i - x_i r^3 / d * sum_j dy_j w_j x_j;  dw_i = sum_rows dy_i x_i r.
template <typename T>
void RmsNormBackwardRef(const T* x, const T* w, const T* dy, T* dx, T* dw, int64_t rows, int64_t d,
                        double eps) {
  std::vector<double> dw_acc(d, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const T* gr = dy + r * d;
    double ss = 0, dot = 0;
    for (int64_t i = 0; i < d; ++i) {
      ss += double(xr[i]) * xr[i];
      dot += double(gr[i]) * w[i] * xr[i];
    }
    const double rstd = 1.0 / std::sqrt(ss / d + eps);
    const double c = rstd * rstd * rstd * dot / d;
    for (int64_t i = 0; i < d; ++i) {
      dx[r * d + i] = static_cast<T>(rstd * gr[i] * w[i] - xr[i] * c);
      dw_acc[i] += double(gr[i]) * xr[i] * rstd;
    }
  }
  for (int64_t i = 0; i < d; ++i) dw[i] = static_cast<T>(dw_acc[i]);
}

template <typename T>
void LayerNormRef(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t d, double eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i) mean += xr[i];
    mean /= d;
    for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(var / d + eps);
    for (int64_t i = 0; i < d; ++i) y[r * d + i] = static_cast<T>((xr[i] - mean) * rstd * w[i] + b[i]);
  }
}

// xhat = (x - mean) r; with g = dy w: dx = r (g - mean(g) - xhat mean(g xhat)).
template <typename T>
void LayerNormBackwardRef(const T* x, const T* w, const T* dy, T* dx, T* dw, T* db, int64_t rows, int64_t d,
                          double eps) {
  std::vector<double> dw_acc(d, 0.0), db_acc(d, 0.0), xhat(d);
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * d;
    const T* gr = dy + r * d;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < d; ++i) mean += xr[i];
    mean /= d;
    for (int64_t i = 0; i < d; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    const double rstd = 1.0 / std::sqrt(var / d + eps);
    double mg = 0, mgx = 0;
    for (int64_t i = 0; i < d; ++i) {
      xhat[i] = (xr[i] - mean) * rstd;
      mg += double(gr[i]) * w[i];
      mgx += double(gr[i]) * w[i] * xhat[i];
    }
    mg /= d;
    mgx /= d;
    for (int64_t i = 0; i < d; ++i) {
      dx[r * d + i] = static_cast<T>(rstd * (double(gr[i]) * w[i] - mg - xhat[i] * mgx));
      dw_acc[i] += gr[i] * xhat[i];
      db_acc[i] += gr[i];
    }
  }
  for (int64_t i = 0; i < d; ++i) {
    dw[i] = static_cast<T>(dw_acc[i]);
    db[i] = static_cast<T>(db_acc[i]);
  }
}

double Sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

template <typename T>
void GatedRmsNormRef(const T* y, const T* z, const T* w, T* out, int64_t rows, int64_t e, int64_t g,
                     double eps) {
  std::vector<double> n(g);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g0 = 0; g0 < e; g0 += g) {
      const int64_t base = r * e + g0;
      double ss = 0;
      for (int64_t i = 0; i < g; ++i) {
        n[i] = y[base + i] * (z[base + i] * Sigmoid(z[base + i]));
        ss += n[i] * n[i];
      }
      const double rstd = 1.0 / std::sqrt(ss / g + eps);
      for (int64_t i = 0; i < g; ++i) out[base + i] = static_cast<T>(n[i] * rstd * w[g0 + i]);
    }
  }
}

// n = y silu(z); within a group, dn as in RmsNormBackwardRef with d = group size; then
// dy = dn silu(z), dz = dn y silu'(z) with silu'(z) = s (1 + z (1 - s)), s = sigmoid(z).
template <typename T>
void GatedRmsNormBackwardRef(const T* y, const T* z, const T* w, const T* dout, T* dy, T* dz, T* dw,
                             int64_t rows, int64_t e, int64_t g, double eps) {
  std::vector<double> dw_acc(e, 0.0), n(g);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t g0 = 0; g0 < e; g0 += g) {
      const int64_t base = r * e + g0;
      double ss = 0, dot = 0;
      for (int64_t i = 0; i < g; ++i) {
        n[i] = y[base + i] * (z[base + i] * Sigmoid(z[base + i]));
        ss += n[i] * n[i];
        dot += double(dout[base + i]) * w[g0 + i] * n[i];
      }
      const double rstd = 1.0 / std::sqrt(ss / g + eps);
      const double c = rstd * rstd * rstd * dot / g;
      for (int64_t i = 0; i < g; ++i) {
        const double zi = z[base + i];
        const double s = Sigmoid(zi);
        const double dn = rstd * dout[base + i] * w[g0 + i] - n[i] * c;
        dy[base + i] = static_cast<T>(dn * zi * s);
        dz[base + i] = static_cast<T>(dn * y[base + i] * s * (1 + zi * (1 - s)));
        dw_acc[g0 + i] += dout[base + i] * n[i] * rstd;
      }
    }
  }
  for (int64_t i = 0; i < e; ++i) dw[i] = static_cast<T>(dw_acc[i]);
}

int64_t Rows(const Tensor& x) { return x.numel() / x.dim(-1); }

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
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    RmsNormRef<double>(in[0].data<double>(), in[1].data<double>(), out[0].mutable_data<double>(), rows, d,
                       eps_);
  } else {
    RmsNormRef<float>(in[0].data<float>(), in[1].data<float>(), out[0].mutable_data<float>(), rows, d, eps_);
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
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    RmsNormBackwardRef<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                               out[0].mutable_data<double>(), out[1].mutable_data<double>(), rows, d, eps_);
  } else {
    RmsNormBackwardRef<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                              out[0].mutable_data<float>(), out[1].mutable_data<float>(), rows, d, eps_);
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
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    LayerNormRef<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                         out[0].mutable_data<double>(), rows, d, eps_);
  } else {
    LayerNormRef<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                        out[0].mutable_data<float>(), rows, d, eps_);
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
  const int64_t d = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    LayerNormBackwardRef<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                                 out[0].mutable_data<double>(), out[1].mutable_data<double>(),
                                 out[2].mutable_data<double>(), rows, d, eps_);
  } else {
    LayerNormBackwardRef<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                                out[0].mutable_data<float>(), out[1].mutable_data<float>(),
                                out[2].mutable_data<float>(), rows, d, eps_);
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
  const int64_t e = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    GatedRmsNormRef<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                            out[0].mutable_data<double>(), rows, e, group_size_, eps_);
  } else {
    GatedRmsNormRef<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                           out[0].mutable_data<float>(), rows, e, group_size_, eps_);
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
  const int64_t e = in[0].dim(-1), rows = Rows(in[0]);
  if (in[0].dtype() == DType::kF64) {
    GatedRmsNormBackwardRef<double>(in[0].data<double>(), in[1].data<double>(), in[2].data<double>(),
                                    in[3].data<double>(), out[0].mutable_data<double>(),
                                    out[1].mutable_data<double>(), out[2].mutable_data<double>(), rows, e,
                                    group_size_, eps_);
  } else {
    GatedRmsNormBackwardRef<float>(in[0].data<float>(), in[1].data<float>(), in[2].data<float>(),
                                   in[3].data<float>(), out[0].mutable_data<float>(),
                                   out[1].mutable_data<float>(), out[2].mutable_data<float>(), rows, e,
                                   group_size_, eps_);
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
