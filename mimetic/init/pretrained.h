// Published Mamba checkpoints by name: the spec (models::PretrainedSpec) plus the weights from a
// safetensors file in mamba_ssm or HF transformers naming (LoadMambaCheckpoint), as one init::Model
// that transforms, training and evaluation take like any other (paper §6, Figs. 10-11).
//
//   // model.safetensors converted from state-spaces/mamba-130m's pytorch_model.bin
//   ASSIGN_OR_RETURN(Model m, LoadPretrained("state-spaces/mamba-130m", "/data/mamba-130m.safetensors"));
//   Tensor logits = models::Apply(m.params, m.spec, tokens);
//
// Memory: the tree's structure comes from models::Init, so loading briefly holds two copies of the
// parameters (about 1 GB for mamba-130m, 3 GB for mamba-370m in f32).
#ifndef MIMETIC_INIT_PRETRAINED_H_
#define MIMETIC_INIT_PRETRAINED_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/init/transform.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::init {

// PretrainedSpec(name) then the overload below. An unknown name is NotFound listing the known ones
// (before the file is opened).
absl::StatusOr<Model> LoadPretrained(const std::string& name, const std::string& safetensors_path,
                                     std::vector<std::string>* unused = nullptr);

// The same loading path for any spec (resolved here): models::Init gives the tree's paths, shapes
// and dtypes, LoadMambaCheckpoint fills every leaf from the file. Errors name the file and the
// parameter (missing tensor: NotFound; another shape: InvalidArgument). Checkpoint tensors the
// model lacks are ignored, their names go to `unused` when given.
absl::StatusOr<Model> LoadPretrained(const models::ModelSpec& spec, const std::string& safetensors_path,
                                     std::vector<std::string>* unused = nullptr);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_PRETRAINED_H_
