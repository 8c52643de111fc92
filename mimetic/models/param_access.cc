#include "mimetic/models/param_access.h"

#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/matmul/matmul.h"

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

}  // namespace mimetic::models
