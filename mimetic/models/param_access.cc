#include "mimetic/models/param_access.h"

#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/linear_parts/linear_parts.h"
#include "mimetic/ops/matmul/matmul.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::models {

core::Tensor ParamAccess::Get(const std::string& name) const {
  absl::StatusOr<core::Tensor> t = params_.Get(prefix_ + name);
  if (!t.ok()) return core::Tensor::Error(t.status());
  return *t;
}

core::Tensor ParamAccess::Linear(const core::Tensor& x, const std::string& name) const {
  core::Tensor y = ops::MatMul(x, Get(name + "/weight"), false, true);
  if (Has(name + "/bias")) y = ops::Add(y, Get(name + "/bias"));
  return y;
}

std::vector<core::Tensor> ParamAccess::LinearParts(const core::Tensor& x, const std::string& name,
                                                   const std::vector<int64_t>& sizes) const {
  const bool bias = Has(name + "/bias");
  if (x.ok() && x.device() == core::Device::kCpu) {
    // One op for all parts: its backward sums the parts' input gradients tile by tile and writes
    // the weight gradient whole (ops/linear_parts). The same forward products as below.
    std::vector<core::Tensor> y = ops::LinearParts(x, Get(name + "/weight"), sizes);
    if (bias) {
      const std::vector<core::Tensor> b = ops::Split(Get(name + "/bias"), 0, sizes);
      for (size_t i = 0; i < y.size(); ++i) y[i] = ops::Add(y[i], b[i]);
    }
    return y;
  }
  // CUDA: one MatMul per part, with the part's rows of W (and b).
  const std::vector<core::Tensor> w = ops::Split(Get(name + "/weight"), 0, sizes);  // (size_i, in)
  const std::vector<core::Tensor> b =
      bias ? ops::Split(Get(name + "/bias"), 0, sizes) : std::vector<core::Tensor>{};
  std::vector<core::Tensor> y;
  for (size_t i = 0; i < sizes.size(); ++i) {
    y.push_back(ops::MatMul(x, w[i], false, true));  // (..., size_i)
    if (bias) y.back() = ops::Add(y.back(), b[i]);
  }
  return y;
}

}  // namespace mimetic::models
