// An experiment config's init transforms (experiment.proto's InitTransform) as init::Transforms,
// every kind through the init registry (mimetic/init/registry.h): `mimetic { c: 4 }` is the
// registered transform "mimetic" with c = 4, `named { name: "x" params { key: "k" value: "v" } }`
// any registered transform, so parameters are checked the same way whichever form a config uses. The
// checkpoint kinds (pretrained, transplant, transfer_from_attention) read a file: checkpoint_init.h.
//
//   ASSIGN_OR_RETURN(init::Transform t, MakeInitTransform(variant.init(0)));
#ifndef MIMETIC_EXPERIMENTS_INIT_CONFIG_H_
#define MIMETIC_EXPERIMENTS_INIT_CONFIG_H_

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/init/registry.h"
#include "mimetic/init/transform.h"

namespace mimetic::experiments {

// The transform, on t.layers(). InvalidArgument for no kind or an unregistered name (listing the
// registered names), an unknown parameter (listing the transform's), a value of the wrong type or
// out of range (naming the range), `layers` on a whole-model transform.
absl::StatusOr<init::Transform> MakeInitTransform(
    const InitTransform& t, const init::TransformRegistry& registry = init::GlobalTransformRegistry());

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_INIT_CONFIG_H_
