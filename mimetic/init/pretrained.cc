#include "mimetic/init/pretrained.h"

#include "mimetic/core/key.h"
#include "mimetic/core/status.h"
#include "mimetic/init/checkpoint_names.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"

namespace mimetic::init {

absl::StatusOr<Model> LoadPretrained(const std::string& name, const std::string& safetensors_path,
                                     std::vector<std::string>* unused) {
  ASSIGN_OR_RETURN(models::ModelSpec spec, models::PretrainedSpec(name));
  return LoadPretrained(spec, safetensors_path, unused);
}

absl::StatusOr<Model> LoadPretrained(const models::ModelSpec& spec, const std::string& safetensors_path,
                                     std::vector<std::string>* unused) {
  Model model;
  ASSIGN_OR_RETURN(model.spec, models::ResolveSpec(spec));
  // Only the structure is used: every leaf is replaced by the checkpoint's tensor.
  ASSIGN_OR_RETURN(core::ParamTree like, models::Init(core::Key::FromSeed(0), model.spec));
  ASSIGN_OR_RETURN(model.params, LoadMambaCheckpoint(safetensors_path, like, unused));
  return model;
}

}  // namespace mimetic::init
