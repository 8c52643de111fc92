#include "mimetic/init/gamma.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/random.h"

namespace mimetic::init {

bool GammaCovers(const std::string& path, const core::Shape& shape, int64_t* fan_in) {
  if (shape.size() != 2 || !absl::EndsWith(path, "/weight")) return false;
  *fan_in = path == "embedding/weight" ? shape[0] : shape[1];
  return true;
}

Transform GammaInit(double gamma) {
  return Transform(absl::StrCat("gamma_init(", gamma, ")"), [gamma](const Model& m, Key key) -> absl::StatusOr<Model> {
    if (!(gamma > 0)) return absl::InvalidArgumentError(absl::StrCat("gamma_init: gamma = ", gamma, "; expected > 0"));
    std::vector<Tensor> leaves = m.params.Leaves();
    for (size_t i = 0; i < leaves.size(); ++i) {
      const std::string& path = m.params.Paths()[i];
      int64_t fan_in = 0;
      if (!GammaCovers(path, leaves[i].shape(), &fan_in)) continue;
      const double std_dev = std::pow(static_cast<double>(fan_in), -gamma);
      ASSIGN_OR_RETURN(std::vector<float> v, core::NormalVector(core::FoldIn(core::FoldIn(key, "gamma_init"), path), leaves[i].numel()));
      for (float& x : v) x = static_cast<float>(x * std_dev);
      ASSIGN_OR_RETURN(leaves[i], Tensor::FromHost<float>(leaves[i].shape(), v));
    }
    Model out = m;
    ASSIGN_OR_RETURN(out.params, m.params.WithLeaves(std::move(leaves)));
    return out;
  });
}

}  // namespace mimetic::init
