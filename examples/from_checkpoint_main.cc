// tools/bazel run //examples:from_checkpoint [-- --checkpoint=FILE --model=SPEC | --pretrained=NAME ...]:
// see from_checkpoint.h. Without --checkpoint it first trains the demo teacher and writes its file to
// runs/from_checkpoint/teacher.safetensors (in the directory `bazel run` started from).
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "examples/from_checkpoint.h"

ABSL_FLAG(std::string, checkpoint, "",
          "safetensors file in mamba_ssm names (empty: train and write the demo's)");
ABSL_FLAG(std::string, model, "",
          "the checkpoint's ModelSpec text (default with no --pretrained: the demo's)");
ABSL_FLAG(std::string, pretrained, "",
          "a published model's name instead of --model, e.g. state-spaces/mamba-130m");
ABSL_FLAG(int, source_layer, 1, "the checkpoint's layer to transplant");
ABSL_FLAG(int, target_layer, 1, "the fresh model's layer it replaces");
ABSL_FLAG(uint64_t, seed, 1, "the fresh model's and the evaluation data's seed");
ABSL_FLAG(std::string, task, examples::kCopyTask, "evaluation task, TaskSpec text");
ABSL_FLAG(int64_t, length, 8, "evaluation string length");
ABSL_FLAG(int, teacher_steps, 300, "demo only: training steps of the teacher");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "transplants a layer of a mamba_ssm checkpoint into a fresh model; see "
      "examples/from_checkpoint.h");
  absl::ParseCommandLine(argc, argv);
  examples::FromCheckpointOptions o;
  o.checkpoint = absl::GetFlag(FLAGS_checkpoint);
  o.model = absl::GetFlag(FLAGS_model);
  o.pretrained = absl::GetFlag(FLAGS_pretrained);
  o.source_layer = absl::GetFlag(FLAGS_source_layer);
  o.target_layer = absl::GetFlag(FLAGS_target_layer);
  o.seed = absl::GetFlag(FLAGS_seed);
  o.task = absl::GetFlag(FLAGS_task);
  o.length = absl::GetFlag(FLAGS_length);
  if (o.checkpoint.empty()) {
    const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
    const std::filesystem::path dir = std::filesystem::path(cwd ? cwd : ".") / "runs" / "from_checkpoint";
    std::filesystem::create_directories(dir);
    o.checkpoint = (dir / "teacher.safetensors").string();
    if (o.model.empty() && o.pretrained.empty()) o.model = examples::kTeacherModel;
    const absl::Status s =
        examples::WriteDemoCheckpoint(o.checkpoint, absl::GetFlag(FLAGS_teacher_steps), o.seed, std::cerr);
    if (!s.ok()) {
      std::cerr << "error: " << s.message() << "\n";
      return 1;
    }
  }
  absl::StatusOr<examples::FromCheckpointResult> r = examples::FromCheckpoint(o, std::cout);
  if (!r.ok()) {
    std::cerr << "error: " << r.status().message() << "\n";
    return 1;
  }
  return 0;
}
