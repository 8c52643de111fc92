// Names of parameters in mamba_ssm and HF transformers checkpoints, and loading such a checkpoint
// into a mimetic tree (mamba_ssm's state_dict names; for state-spaces/mamba-130m and mamba-370m, paper Figs.
// 10–11).
//
//   ASSIGN_OR_RETURN(ParamTree like, models::Init(Key::FromSeed(0), spec));   // the structure
//   ASSIGN_OR_RETURN(ParamTree params, LoadMambaCheckpoint("mamba-130m.safetensors", like));
//
// mimetic paths are mamba_ssm's names without "backbone." and with '/' for '.':
//   layers/3/mixer/A_log   <->  backbone.layers.3.mixer.A_log
//   embedding/weight       <->  backbone.embedding.weight   (HF transformers: backbone.embeddings.weight)
//   norm_f/weight          <->  backbone.norm_f.weight
//   lm_head/weight         <->  lm_head.weight
// Every other tensor keeps its shape: conv1d/weight is (C, 1, K) in both, Linear weights (out, in).
#ifndef MIMETIC_INIT_CHECKPOINT_NAMES_H_
#define MIMETIC_INIT_CHECKPOINT_NAMES_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/core/param_tree.h"

namespace mimetic::init {

// "layers/3/mixer/A_log" -> "backbone.layers.3.mixer.A_log"; "lm_head/weight" -> "lm_head.weight".
std::string ToMambaSsmName(const std::string& path);
// The HF transformers (MambaForCausalLM, Mamba2ForCausalLM) name: as ToMambaSsmName except
// "embedding/weight" -> "backbone.embeddings.weight".
std::string ToHfTransformersName(const std::string& path);

// The mimetic path for a checkpoint name in mamba_ssm or HF transformers spelling, with or without
// "backbone." (HF base models drop it); a name already written with '/' is returned as it is.
// InvalidArgument for names outside {embedding(s), layers.{i}, norm_f}.… and lm_head.…
absl::StatusOr<std::string> FromCheckpointName(const std::string& name);

// `like` (e.g. from models::Init) with every leaf replaced by the tensor `loaded` holds for it
// under a checkpoint name (loaded's paths are checkpoint names, as ReadSafetensors returns them),
// converted to the leaf's dtype (f32 <-> f64) and device.
//   * a leaf with no tensor: NotFound naming the path and the checkpoint names looked for;
//   * a tensor of another shape: InvalidArgument naming the path, the expected and the found shape;
//   * tensors the model lacks are ignored (their names go to `unused` when given), except that
//     lm_head.weight, when the model ties its head to the embedding (no lm_head/weight in `like`),
//     must equal the embedding: a different head would silently change the model's output.
absl::StatusOr<core::ParamTree> LoadCheckpointInto(const core::ParamTree& like, const core::ParamTree& loaded,
                                                   std::vector<std::string>* unused = nullptr);

// ReadSafetensors + LoadCheckpointInto; errors name the file. A tensor holding a NaN or an infinity is
// DataLoss naming it (as the file spells it): such weights could only train to a "divergence".
absl::StatusOr<core::ParamTree> LoadMambaCheckpoint(const std::string& safetensors_path,
                                                    const core::ParamTree& like,
                                                    std::vector<std::string>* unused = nullptr);

// Writes `tree` under mamba_ssm names, so that MambaLMHeadModel.load_state_dict accepts the file
// (after safetensors.torch.load_file). A tied model (no lm_head/weight) also gets lm_head.weight,
// a copy of the embedding, because mamba_ssm's state_dict lists both.
absl::Status WriteMambaCheckpoint(const std::string& path, const core::ParamTree& tree,
                                  const std::map<std::string, std::string>& metadata = {});

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_CHECKPOINT_NAMES_H_
