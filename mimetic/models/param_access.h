// Reading a layer's parameters inside a pure model function: a missing path becomes an error
// tensor (naming the path) that flows through the ops to the caller's Status.
//
//   ParamAccess p(params, "layers/3/mixer/");
//   Tensor y = p.Linear(x, "in_proj");          // x @ in_proj/weight^T (+ in_proj/bias if present)
//   std::vector<Tensor> zx = p.LinearParts(x, "in_proj", {E, E});  // the same product, in parts
#ifndef MIMETIC_MODELS_PARAM_ACCESS_H_
#define MIMETIC_MODELS_PARAM_ACCESS_H_

#include <string>
#include <vector>

#include "mimetic/core/param_tree.h"
#include "mimetic/core/tensor.h"

namespace mimetic::models {

class ParamAccess {
 public:
  ParamAccess(const core::ParamTree& params, std::string prefix)
      : params_(params), prefix_(std::move(prefix)) {}
  // The tensor at prefix + name, or an error tensor naming the missing path.
  core::Tensor Get(const std::string& name) const;
  bool Has(const std::string& name) const { return params_.Contains(prefix_ + name); }
  // x @ W^T (+ b) with W = name/weight (out, in), b = name/bias when present.
  core::Tensor Linear(const core::Tensor& x, const std::string& name) const;
  // Linear(x, name) split along its last axis into `sizes`, computed as one product per part with
  // the part's rows of W (and b), so that no (..., out) activation is written and then copied into
  // parts, and the backward writes no concatenation of the parts' cotangents: splitting W costs
  // out x in, splitting the output would cost tokens x out. On CPU one LinearParts op, whose
  // backward also sums the parts' input gradients in one pass; on CUDA one MatMul per part.
  std::vector<core::Tensor> LinearParts(const core::Tensor& x, const std::string& name,
                                        const std::vector<int64_t>& sizes) const;

 private:
  const core::ParamTree& params_;
  std::string prefix_;
};

}  // namespace mimetic::models

#endif  // MIMETIC_MODELS_PARAM_ACCESS_H_
