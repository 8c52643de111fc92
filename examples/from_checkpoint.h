// The `from_checkpoint` example: load a safetensors file in mamba_ssm's parameter names (as
// MambaLMHeadModel.state_dict() writes them, init/checkpoint_names.h), transplant one of its layers
// into a freshly initialised model (init/transfer.h, the paper's §6 and Fig. 11: student layers taken
// from a pretrained teacher), and evaluate the teacher, the fresh model and the transplanted one on
// a copy task.
//
//   tools/bazel run //examples:from_checkpoint          # demo: trains a small teacher, writes its file
//   tools/bazel run //examples:from_checkpoint -- --checkpoint=/data/mamba-130m.safetensors
//       --pretrained=state-spaces/mamba-130m --source_layer=23 --target_layer=0 --length=25
//       --task='copy { vocab: 26 min_len: 5 max_len: 25 context_len: 128 }'     (on one line)
//
// Without --checkpoint it trains the demo teacher for --teacher_steps (300: about 30 s of CPU) and
// writes it to runs/from_checkpoint/teacher.safetensors first.
#ifndef EXAMPLES_FROM_CHECKPOINT_H_
#define EXAMPLES_FROM_CHECKPOINT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/init/transform.h"
#include "mimetic/train/evaluate.h"

namespace examples {

// The demo teacher: 2 Mamba 2 layers of width 32, mimetic init, briefly trained on kCopyTask.
inline constexpr char kTeacherModel[] =
    "vocab_size: 12 d_model: 32 n_layer: 2 default_layer { mamba2 { d_state: 16 headdim: 16 chunk_size: 8 } "
    "}";
inline constexpr char kCopyTask[] = "copy { vocab: 8 min_len: 2 max_len: 8 context_len: 32 }";

struct FromCheckpointOptions {
  std::string checkpoint;        // the safetensors file
  std::string model;             // the checkpoint's ModelSpec as text (a safetensors file holds no spec) ...
  std::string pretrained;        // ... or a published model's name (models::PretrainedSpec)
  int source_layer = 1;          // the checkpoint's layer ...
  int target_layer = 1;          // ... replaces this layer of a fresh model of the same spec
  uint64_t seed = 1;             // the fresh model's key; evaluation data from its own key
  std::string task = kCopyTask;  // TaskSpec text
  int64_t length = 8;            // evaluation string length
  int64_t batch = 32, num_batches = 2;
};

struct Evaluated {
  std::string name;
  double loss = 0;  // mean cross-entropy on one training batch
  mimetic::train::EvalResult eval;
};

struct FromCheckpointResult {
  mimetic::init::Model teacher, fresh, transplanted;
  std::vector<std::string> unused;  // checkpoint tensors the model has no place for
  std::vector<Evaluated> rows;      // teacher, fresh, transplanted
};

// Loads, transplants, evaluates; prints what it loaded and a table of the three models to `out`.
absl::StatusOr<FromCheckpointResult> FromCheckpoint(const FromCheckpointOptions& options, std::ostream& out);

// The demo's checkpoint: a kTeacherModel with mimetic init trained `steps` steps on kCopyTask from
// `seed`, written to `path` under mamba_ssm names (init/checkpoint_names.h WriteMambaCheckpoint).
absl::Status WriteDemoCheckpoint(const std::string& path, int steps, uint64_t seed, std::ostream& progress);

}  // namespace examples

#endif  // EXAMPLES_FROM_CHECKPOINT_H_
