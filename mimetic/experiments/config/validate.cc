// ValidateExperiment (config.h) in named steps: the experiment's own fields, each variant (name, model,
// init), the task and evaluation, training, seeds, device and output.
#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/random.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/checkpoint_init.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/field_ranges.h"
#include "mimetic/experiments/config/names.h"
#include "mimetic/experiments/config/room.h"
#include "mimetic/init/registry.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

// `spec` with every width shrunk (same layer kinds and count). The vocabulary too: no init transform
// reads it, and a 16M-token embedding alone would take seconds and gigabytes to draw before the memory
// check could refuse the model (issue 30, item 9).
models::ModelSpec NarrowProbe(models::ModelSpec spec) {
  spec.set_vocab_size(std::min(spec.vocab_size(), 16));
  spec.set_pad_vocab_size_multiple(1);
  spec.set_d_model(16);
  if (spec.d_intermediate() > 0) spec.set_d_intermediate(16);
  for (models::LayerSpec& layer : *spec.mutable_layers()) {
    switch (layer.mixer_case()) {
      case models::LayerSpec::kMamba1:
        layer.mutable_mamba1()->set_d_state(4);
        layer.mutable_mamba1()->set_expand(2);
        layer.mutable_mamba1()->set_dt_rank(0);
        break;
      case models::LayerSpec::kMamba2:
        layer.mutable_mamba2()->set_d_state(4);
        layer.mutable_mamba2()->set_expand(2);
        layer.mutable_mamba2()->set_headdim(8);
        layer.mutable_mamba2()->set_ngroups(1);
        layer.mutable_mamba2()->set_chunk_size(8);
        break;
      case models::LayerSpec::kAttention:
        layer.mutable_attention()->set_num_heads(1);
        layer.mutable_attention()->set_head_dim(0);
        break;
      case models::LayerSpec::kLinearAttention:
        layer.mutable_linear_attention()->set_num_heads(1);
        layer.mutable_linear_attention()->set_head_dim(4);
        break;
      case models::LayerSpec::MIXER_NOT_SET:
        break;
    }
  }
  return spec;
}

// A model's vocab_size of 0 means "the task's token ids" (content + BOS, SEP, EOS, PAD), so that a sweep over
// the task's vocabulary (Fig. 6) needs no second axis for the model. Filled in before the spec is resolved. A
// task that cannot be built is reported here with its own message: left at 0, the vocabulary would be
// refused first as "vocab_size = 0", hiding the task's error (issue 30, item 6).
absl::Status FillVocabFromTask(Experiment* e) {
  bool needed = e->has_model() && e->model().vocab_size() == 0;
  for (const Variant& v : e->variants()) needed = needed || (v.has_model() && v.model().vocab_size() == 0);
  if (!needed) return absl::OkStatus();
  if (!e->has_task())
    return Bad("task", "unset", "one of copy, mqar, mqar_copy, composite, inverse_sequence");
  ASSIGN_OR_RETURN(std::unique_ptr<data::Task> task, MakeTask(e->task()));
  const int vocab = task->model_vocab();
  if (e->has_model() && e->model().vocab_size() == 0) e->mutable_model()->set_vocab_size(vocab);
  for (Variant& v : *e->mutable_variants()) {
    if (v.has_model() && v.model().vocab_size() == 0) v.mutable_model()->set_vocab_size(vocab);
  }
  return absl::OkStatus();
}

// The teacher (experiment.proto): an ordinary experiment of one variant and one seed whose init keeps
// mamba_ssm's parameterization, since its file is read back with its plain spec. Returns its model.
absl::StatusOr<models::ModelSpec> ValidateTeacher(Experiment teacher) {
  auto bad = [](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat("config: teacher: ", what));
  };
  if (teacher.name().empty()) teacher.set_name("teacher");
  if (teacher.has_teacher()) return bad("has a teacher of its own; one stage of teachers only");
  if (teacher.variants_size() != 1 || teacher.seeds_size() != 1 || teacher.sweep().axes_size() != 0) {
    return bad(absl::StrCat("needs one variant, one seed and no sweep (it has ", teacher.variants_size(),
                            " variants, ", teacher.seeds_size(), " seeds, ", teacher.sweep().axes_size(),
                            " sweep axes)"));
  }
  absl::Status s = ValidateExperiment(&teacher);
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat("teacher: ", s.message()));
  const models::ModelSpec spec = VariantModel(teacher, teacher.variants(0));
  ASSIGN_OR_RETURN(init::Transform t, MakeTransform(teacher.variants(0)));
  const models::ModelSpec narrow = NarrowProbe(spec);
  ASSIGN_OR_RETURN(init::Model probe, init::MakeModel(narrow, t, core::Key::FromSeed(0)));
  if (probe.spec.SerializeAsString() != narrow.SerializeAsString()) {
    return bad(
        "its init changes the model's parameterization (mimetic with "
        "reparameterize: true?); its file is "
        "read back with the plain spec, as a mamba_ssm checkpoint is: "
        "use mimetic { reparameterize: false }");
  }
  return spec;
}

// The words and paths of the variant's init entries, each error naming its field: a named transform is
// registered, a checkpoint names a published model and a path by the path rule. Checked before the entries
// are built, whose errors name the entry but not the field.
absl::Status CheckInitFields(const std::string& at, const Variant& v) {
  const init::TransformRegistry& registry = init::GlobalTransformRegistry();
  for (int j = 0; j < v.init_size(); ++j) {
    const InitTransform& t = v.init(j);
    const std::string entry = absl::StrCat(at, ".init[", j, "]");
    if (t.has_named() && registry.Find(t.named().name()) == nullptr) {
      return Bad(entry + ".named.name", Quoted(t.named().name()),
                 absl::StrCat("a registered init transform: ", absl::StrJoin(registry.Names(), ", ")));
    }
    if (IsCheckpointKind(t)) RETURN_IF_ERROR(CheckCheckpointFields(entry, t));
  }
  return absl::OkStatus();
}

// Each variant's name (a directory), model and init; inits are built once on a narrow probe so that a
// transform that does not fit this model fails now.
absl::Status ValidateVariant(int i, const Experiment& e, const std::optional<models::ModelSpec>& teacher,
                             Variant* v) {
  const std::string at = absl::StrCat("variants[", i, "]");
  // The name becomes a directory (points/<name>/...): nothing that could leave the run directory.
  RETURN_IF_ERROR(CheckSafeName(at + ".name", v->name()));
  if (v->has_model()) {
    absl::StatusOr<models::ModelSpec> m = models::ResolveSpec(v->model());
    if (!m.ok())
      return absl::InvalidArgumentError(absl::StrCat("config: ", at, ".model: ", m.status().message()));
    *v->mutable_model() = *m;
  }
  RETURN_IF_ERROR(CheckInitFields(at, *v));
  const models::ModelSpec& spec = VariantModel(e, *v);
  for (const InitTransform& t : v->init()) {
    for (int layer : t.layers()) {
      if (layer < 0 || layer >= spec.layers_size()) {
        return Bad(at + ".init.layers", absl::StrCat(layer),
                   absl::StrCat("a layer index in [0, ", spec.layers_size(), ") of this model"));
      }
    }
  }
  // Entries that read a checkpoint are checked against its spec and file (which a narrow probe cannot load);
  // the file is read once per process (checkpoint_init.h).
  bool reads_checkpoint = false;
  for (int j = 0; j < v->init_size(); ++j) {
    if (!IsCheckpointKind(v->init(j))) continue;
    reads_checkpoint = true;
    absl::Status s = CheckCheckpointInit(v->init(j), spec, teacher ? &*teacher : nullptr);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("config: ", at, ".init[", j, "]: ", s.message()));
  }
  // Build the model once on a throwaway key so transforms that do not fit fail now. Whether a transform fits
  // depends on the layers' kinds and count, not their widths, so the probe is a narrow copy: a paper-sized
  // sweep validates in milliseconds per point instead of seconds.
  ASSIGN_OR_RETURN(init::Transform t, MakeTransform(*v));
  if (reads_checkpoint) return absl::OkStatus();
  absl::StatusOr<init::Model> probe = init::MakeModel(NarrowProbe(spec), t, core::Key::FromSeed(0));
  if (!probe.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("config: ", at, ".init: ", probe.status().message()));
  }
  return absl::OkStatus();
}

absl::Status ValidateVariants(Experiment* e, const std::optional<models::ModelSpec>& teacher) {
  if (e->variants_size() == 0)
    return Bad("variants", "[]", "at least one variant (e.g. default and mimetic)");
  std::vector<std::string> names;
  for (const Variant& v : e->variants()) names.push_back(v.name());
  if (std::optional<int> i = FirstRepeat(names)) {
    return Bad(absl::StrCat("variants[", *i, "].name"), "\"" + names[*i] + "\"",
               "a name no other variant has (two variants with one name would "
               "share one run directory)");
  }
  for (int i = 0; i < e->variants_size(); ++i) {
    RETURN_IF_ERROR(ValidateVariant(i, *e, teacher, e->mutable_variants(i)));
  }
  return absl::OkStatus();
}

// `len` is a length `task` accepts for evaluation; `field` names where it came from.
absl::Status CheckEvalLength(const data::Task& task, const std::string& field, int len,
                             const std::string& expected) {
  absl::StatusOr<data::EvalBatch> probe = task.SampleEval(core::Key::FromSeed(0), 1, len);
  if (!probe.ok()) return Bad(field, absl::StrCat(len), absl::StrCat(expected, probe.status().message()));
  return absl::OkStatus();
}

// Every eval example (and the attention-map example) fits a training row, as in the paper's pipeline
// (Jelassi et al. refuse an eval length whose example exceeds the training context), unless the config
// opts out with eval.allow_longer_than_training_rows. Only packed, copy-like tasks have rows to compare.
absl::Status CheckEvalFitsTrainingRows(const Experiment& e) {
  const EvalSpec& ev = e.eval();
  const std::optional<int64_t> row = TrainingRowTokens(e.task());
  if (ev.allow_longer_than_training_rows() || !row) return absl::OkStatus();
  const TaskSpec& judged = ev.has_task() ? ev.task() : e.task();
  std::vector<std::pair<std::string, int>> lengths;
  for (int len : ev.lengths()) lengths.emplace_back("eval.lengths", len);
  if (ev.map_length() > 0) lengths.emplace_back("eval.map_length", ev.map_length());
  for (const auto& [field, len] : lengths) {
    const std::optional<int64_t> example = ExampleTokens(judged, len);
    if (!example || *example <= *row) continue;
    const std::string context = e.task().has_copy() ? "task.copy.context_len" : "task.mqar_copy.context_len";
    return Bad(field, absl::StrCat(len),
               absl::StrCat("a length whose example fits a training row: at ", len, " an example is ",
                            *example, " token ids, a training row holds ", *row, " (", context, " = ",
                            *row - 1, "); raise ", context, " to at least ", *example - 1,
                            " (lowering train.batch_size keeps the tokens per step), or set "
                            "eval.allow_longer_than_training_rows: true"));
  }
  return absl::OkStatus();
}

// The task builds; the eval task (if any) and the models fit its token ids; every eval length (and the
// attention map's, drawn at the end of training) is one the task accepts, so it fails now rather than after
// the training.
absl::Status ValidateTaskAndEval(const Experiment& e) {
  if (!e.has_task()) return Bad("task", "unset", "one of copy, mqar, mqar_copy, composite, inverse_sequence");
  ASSIGN_OR_RETURN(std::unique_ptr<data::Task> task, MakeTask(e.task()));
  if (e.eval().has_task()) {
    absl::StatusOr<std::unique_ptr<data::Task>> eval_task = MakeTask(e.eval().task());
    if (!eval_task.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("config: eval.task: ", eval_task.status().message()));
    }
    if ((*eval_task)->model_vocab() > task->model_vocab()) {
      return Bad("eval.task", absl::StrCat((*eval_task)->model_vocab(), " token ids"),
                 absl::StrCat("no more token ids than the training task's ", task->model_vocab()));
    }
  }
  for (const Variant& v : e.variants()) {
    const models::ModelSpec& spec = VariantModel(e, v);
    if (models::PaddedVocab(spec) < task->model_vocab() || spec.vocab_size() < task->model_vocab()) {
      return Bad(
          "model.vocab_size", absl::StrCat(spec.vocab_size()),
          absl::StrCat(">= the task's ", task->model_vocab(), " token ids (content + BOS, SEP, EOS, PAD)"));
    }
  }
  const EvalSpec& ev = e.eval();
  if (ev.lengths_size() == 0)
    return Bad("eval.lengths", "[]", "at least one length (e.g. the training length and 2x)");
  if (std::optional<int> i = FirstRepeat(ev.lengths())) {
    return Bad("eval.lengths", absl::StrCat("[", absl::StrJoin(ev.lengths(), ", "), "]"),
               absl::StrCat("distinct lengths (", ev.lengths(*i), " appears twice)"));
  }
  for (int len : ev.lengths())
    RETURN_IF_ERROR(CheckEvalLength(*task, "eval.lengths", len, "a length the task accepts: "));
  if (ev.map_length() > 0) {
    RETURN_IF_ERROR(
        CheckEvalLength(*task, "eval.map_length", ev.map_length(), "0 or a length the task accepts: "));
  }
  return CheckEvalFitsTrainingRows(e);
}

// What relates training fields (each field's own range is CheckFieldRanges').
absl::Status ValidateTrain(const TrainSpec& t) {
  if (t.schedule() != "linear" && t.schedule() != "cosine" && t.schedule() != "constant") {
    return Bad("train.schedule", Quoted(t.schedule()), "\"linear\", \"cosine\" or \"constant\"");
  }
  return MakeSchedule(t).Validate();
}

absl::Status ValidateSeedsDeviceOutput(const Experiment& e) {
  RETURN_IF_ERROR(CheckDistinctSeeds(e.seeds()));
  if (e.device() != "cpu" && e.device() != "cuda")
    return Bad("device", Quoted(e.device()), "\"cpu\" or \"cuda\"");
  return CheckPath("output_dir", e.output_dir());
}

}  // namespace

absl::Status ValidateExperiment(Experiment* e) {
  RETURN_IF_ERROR(CheckFieldRanges(*e));
  // The name is a directory under output_dir (and teacher.name one under it): the variant-name rule,
  // so that "..", "a/b" or an absolute name cannot write outside output_dir.
  RETURN_IF_ERROR(CheckSafeName("name", e->name()));
  if (!e->has_model()) return Bad("model", "unset", "a model spec");
  RETURN_IF_ERROR(FillVocabFromTask(e));
  {
    absl::StatusOr<models::ModelSpec> m = models::ResolveSpec(e->model());
    if (!m.ok()) return absl::InvalidArgumentError(absl::StrCat("config: model: ", m.status().message()));
    *e->mutable_model() = *m;
  }
  std::optional<models::ModelSpec> teacher;
  if (e->has_teacher()) {
    ASSIGN_OR_RETURN(teacher, ValidateTeacher(e->teacher()));
  }
  RETURN_IF_ERROR(ValidateVariants(e, teacher));
  RETURN_IF_ERROR(ValidateTaskAndEval(*e));
  RETURN_IF_ERROR(ValidateTrain(e->train()));
  return ValidateSeedsDeviceOutput(*e);
}

}  // namespace mimetic::experiments
