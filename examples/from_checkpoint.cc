#include "examples/from_checkpoint.h"

#include <cstdio>
#include <memory>
#include <utility>

#include "google/protobuf/text_format.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/init/checkpoint_names.h"
#include "mimetic/init/mimetic.h"
#include "mimetic/init/pretrained.h"
#include "mimetic/init/transfer.h"
#include "mimetic/models/spec.h"
#include "mimetic/train/schedule.h"
#include "mimetic/train/train_step.h"

namespace examples {
namespace {

using mimetic::core::Key;
using mimetic::init::Model;

absl::StatusOr<std::unique_ptr<mimetic::data::Task>> ParseTask(const std::string& text) {
  mimetic::experiments::TaskSpec spec;
  if (!google::protobuf::TextFormat::ParseFromString(text, &spec)) {
    return absl::InvalidArgumentError(absl::StrCat("from_checkpoint: cannot parse the task '", text,
                                                   "'; expected TaskSpec text, e.g. ", kCopyTask));
  }
  return mimetic::experiments::MakeTask(spec);
}

absl::StatusOr<Evaluated> Evaluate(const std::string& name, const Model& m, const mimetic::data::Task& task,
                                   const FromCheckpointOptions& o) {
  // Every model sees the same data: keys from the options' seed, not from the model.
  const Key data = mimetic::core::FoldIn(Key::FromSeed(o.seed), "from_checkpoint/data");
  Evaluated e;
  e.name = name;
  ASSIGN_OR_RETURN(mimetic::data::Batch batch,
                   task.SampleTrain(mimetic::core::FoldIn(data, "loss"), o.batch));
  ASSIGN_OR_RETURN(e.loss, mimetic::train::LossOf(m.params, m.spec, batch).Item<float>());
  mimetic::train::Evaluator evaluator(m.spec);
  ASSIGN_OR_RETURN(e.eval, evaluator.AtLength(m.params, task, mimetic::core::FoldIn(data, "eval"), o.length,
                                              o.batch, o.num_batches));
  return e;
}

}  // namespace

absl::StatusOr<FromCheckpointResult> FromCheckpoint(const FromCheckpointOptions& o, std::ostream& out) {
  if (o.model.empty() == o.pretrained.empty()) {
    return absl::InvalidArgumentError(
        "from_checkpoint: give exactly one of the checkpoint's model spec (--model) or a published name "
        "(--pretrained)");
  }
  mimetic::models::ModelSpec spec;
  if (!o.pretrained.empty()) {
    ASSIGN_OR_RETURN(spec, mimetic::models::PretrainedSpec(o.pretrained));
  } else {
    ASSIGN_OR_RETURN(spec, mimetic::models::ParseModelSpec(o.model));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<mimetic::data::Task> task, ParseTask(o.task));
  FromCheckpointResult r;
  // Every leaf of the spec's tree from the file, by its mamba_ssm name; errors name file and tensor.
  ASSIGN_OR_RETURN(r.teacher, mimetic::init::LoadPretrained(spec, o.checkpoint, &r.unused));
  out << "loaded " << r.teacher.params.size() << " tensors from " << o.checkpoint << " ("
      << r.teacher.spec.layers_size() << " layers; " << r.unused.size() << " checkpoint tensors unused)\n";
  using mimetic::init::Compose;
  using mimetic::init::DefaultInit;
  using mimetic::init::OnLayers;
  using mimetic::init::Transplant;
  ASSIGN_OR_RETURN(r.fresh, mimetic::init::MakeModel(spec, DefaultInit(), Key::FromSeed(o.seed)));
  ASSIGN_OR_RETURN(
      r.transplanted,
      mimetic::init::MakeModel(
          spec, Compose({DefaultInit(), OnLayers({o.target_layer}, Transplant(r.teacher, o.source_layer))}),
          Key::FromSeed(o.seed)));
  out << "fresh model: mamba_ssm's default init from seed " << o.seed
      << "; transplanted: the same, with layer " << o.target_layer << " replaced by the checkpoint's layer "
      << o.source_layer << "\n\n";
  for (const auto& [name, model] : {std::pair<const char*, const Model*>{"checkpoint", &r.teacher},
                                    {"fresh", &r.fresh},
                                    {"transplanted", &r.transplanted}}) {
    ASSIGN_OR_RETURN(Evaluated e, Evaluate(name, *model, *task, o));
    r.rows.push_back(e);
  }
  char line[160];
  std::snprintf(line, sizeof(line), "| model | loss | exact@%lld | token@%lld |\n|---|---|---|---|\n",
                static_cast<long long>(o.length), static_cast<long long>(o.length));
  out << line;
  for (const Evaluated& e : r.rows) {
    std::snprintf(line, sizeof(line), "| %s | %.5f | %.3f | %.3f |\n", e.name.c_str(), e.loss,
                  e.eval.exact_accuracy, e.eval.token_accuracy);
    out << line;
  }
  return r;
}

absl::Status WriteDemoCheckpoint(const std::string& path, int steps, uint64_t seed, std::ostream& progress) {
  ASSIGN_OR_RETURN(mimetic::models::ModelSpec spec, mimetic::models::ParseModelSpec(kTeacherModel));
  ASSIGN_OR_RETURN(std::unique_ptr<mimetic::data::Task> task, ParseTask(kCopyTask));
  const Key key = Key::FromSeed(seed);
  // Mimetic init in mamba_ssm's own parameterization (A_log := -c A_log, not a spec change), so the
  // file alone, read with the plain spec, is the model (as any mamba_ssm checkpoint must be).
  mimetic::init::MimeticOptions mimetic;
  mimetic.reparameterize = false;
  const mimetic::init::Transform init = mimetic::init::Compose(
      {mimetic::init::DefaultInit(), mimetic::init::OnMambaLayers(mimetic::init::Mimetic(mimetic))});
  ASSIGN_OR_RETURN(Model teacher, mimetic::init::MakeModel(spec, init, mimetic::core::FoldIn(key, "model")));
  mimetic::train::TrainStep step(teacher.spec, mimetic::train::OptimizerConfig{});
  ASSIGN_OR_RETURN(mimetic::train::TrainState state, mimetic::train::InitTrainState(teacher.params));
  mimetic::train::Schedule schedule;
  schedule.peak_lr = 3e-3;
  schedule.warmup_steps = steps / 10;
  schedule.total_steps = steps;
  const Key data = mimetic::core::FoldIn(key, "data");
  for (int s = 0; s < steps; ++s) {
    ASSIGN_OR_RETURN(mimetic::data::Batch batch, task->SampleTrain(mimetic::core::FoldIn(data, s), 32));
    ASSIGN_OR_RETURN(mimetic::train::StepMetrics m, step(&state, batch, schedule.LearningRate(s)));
    if ((s + 1) % 100 == 0 || s + 1 == steps)
      progress << "teacher step " << s + 1 << ": loss " << m.loss << "\n";
  }
  // mamba_ssm names on disk; the spec is given again when loading, as for any mamba_ssm checkpoint.
  return mimetic::init::WriteMambaCheckpoint(path, state.params,
                                             {{"source", "examples/from_checkpoint demo"}});
}

}  // namespace examples
