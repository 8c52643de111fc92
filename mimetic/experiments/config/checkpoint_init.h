// The checkpoint kinds of an experiment config's init entries (experiment.proto's CheckpointInit:
// `pretrained`, `transplant`, `transfer_from_attention`) as init::Transforms, and the checks that run
// before any training: the file is there (else which file to fetch, from where, and how to convert it),
// the checkpoint's layer exists, the variant's model is the checkpoint's (pretrained), and every tensor
// fits (else the first that does not, by name).
//
//   variants { name: "pretrained"
//              init { pretrained { name: "state-spaces/mamba-130m" path: "/data/mamba-130m.safetensors" } } }
//   variants { name: "t31" init { transplant { name: "state-spaces/mamba-370m" path: "..." source_layer: 31 }
//   } }
//
//   RETURN_IF_ERROR(CheckCheckpointInit(entry, variant_spec, /*teacher=*/nullptr));
//   ASSIGN_OR_RETURN(init::Transform t, MakeCheckpointTransform(entry));
//
// A file is read once per process (cached by path, size, modification time and spec), so a sweep's
// validation and its points share one copy; a rewritten file is read again.
#ifndef MIMETIC_EXPERIMENTS_CHECKPOINT_INIT_H_
#define MIMETIC_EXPERIMENTS_CHECKPOINT_INIT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/init/transform.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::experiments {

// Whether the entry is one of the checkpoint kinds, and its CheckpointInit (only when it is).
bool IsCheckpointKind(const InitTransform& t);
const CheckpointInit& CheckpointOf(const InitTransform& t);
CheckpointInit* MutableCheckpointOf(InitTransform* t);

// The checkpoint's resolved spec: the published `name`'s or `model`. InvalidArgument unless exactly one
// is given (a `teacher` entry gets its model from the figure that trains the teacher).
absl::StatusOr<models::ModelSpec> CheckpointSpec(const CheckpointInit& c);

// The missing-file message for a published model: where to download it, how to convert its
// pytorch_model.bin to safetensors with the names LoadPretrained reads, and how to name the file.
std::string FetchInstructions(const std::string& name);

// The checkpoint's weights under its spec (read once per process, see above). Errors name the file:
// a missing one (with FetchInstructions for a published name), a missing tensor, the first tensor of
// another shape.
absl::StatusOr<std::shared_ptr<const init::Model>> LoadCheckpointCached(const CheckpointInit& c);

// The entry's own words and path, each error naming its field `<entry>.<kind>.name` or `.path` (`entry` is
// "variants[1].init[0]"): `name` is a published model, a given `path` is a path (names.h's CheckPath). Runs
// before CheckCheckpointInit, which would otherwise look for the file first and tell how to download an
// unknown model.
absl::Status CheckCheckpointFields(const std::string& entry, const InitTransform& t);

// Every check that needs no training, for an entry of a variant whose resolved model is `variant`.
// `teacher` is the experiment's teacher model (resolved) when it has one: a `teacher: true` entry is
// checked against it (its file does not exist until the teacher has trained).
absl::Status CheckCheckpointInit(const InitTransform& t, const models::ModelSpec& variant,
                                 const models::ModelSpec* teacher);

// The entry as a transform: pretrained replaces the whole model (refusing another spec), transplant
// and transfer_from_attention apply to `layers` (empty: every layer / every Mamba 2 layer), target
// layer i taking checkpoint layer source_layer, or layer i when source_layer is unset.
absl::StatusOr<init::Transform> MakeCheckpointTransform(const InitTransform& t);

// The --pretrained flag as config overrides ("variants[0].init[0].pretrained.path=/data/m.safetensors"): the
// entries of `e` (parsed, not yet validated) that name a published model and have no path get the file.
// `flag` is "/path/model.safetensors" (every such entry) or "name=/path,name=/path" per published model.
// InvalidArgument when no entry needs a file, or a named model is used by none.
absl::StatusOr<std::vector<std::string>> PretrainedPathOverrides(const Experiment& e,
                                                                 const std::string& flag);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_CHECKPOINT_INIT_H_
