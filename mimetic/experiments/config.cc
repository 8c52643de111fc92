#include "mimetic/experiments/config.h"

#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "mimetic/data/copy_task.h"
#include "mimetic/data/mqar.h"
#include "mimetic/data/mqar_copy.h"
#include "mimetic/experiments/achilles_tasks.h"
#include "mimetic/experiments/checkpoint_init.h"
#include "mimetic/experiments/field_ranges.h"
#include "mimetic/experiments/init_config.h"
#include "mimetic/experiments/run_files.h"
#include "mimetic/experiments/sweep.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Collects parse errors (line, column, message) instead of printing them.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    errors_.push_back(absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message));
  }
  void AddWarning(int line, int column, const std::string& message) override {
    AddError(line, column, message);
  }
  std::string Joined() const { return absl::StrJoin(errors_, "; "); }

 private:
  std::vector<std::string> errors_;
};

absl::Status Bad(const std::string& field, const std::string& value, const std::string& expected) {
  return absl::InvalidArgumentError(absl::StrCat("config: ", field, " = ", value, "; expected ", expected));
}

// Element `index` (a position, or the value of the element's `name` field) of the repeated message
// field `f` of `msg`.
absl::StatusOr<Message*> RepeatedElement(const std::string& assignment, Message* msg,
                                         const FieldDescriptor* f, const std::string& index) {
  if (!f->is_repeated() || f->type() != FieldDescriptor::TYPE_MESSAGE) {
    return absl::InvalidArgumentError(
        absl::StrCat("override '", assignment, "': '", f->name(),
                     "' is not a repeated message field, so it takes no [index]"));
  }
  const Reflection* r = msg->GetReflection();
  const int size = r->FieldSize(*msg, f);
  int position = -1;
  if (absl::SimpleAtoi(index, &position)) {
    if (position < 0 || position >= size) {
      return absl::InvalidArgumentError(absl::StrCat("override '", assignment, "': ", f->name(), "[", index,
                                                     "] is out of range; it has ", size, " elements"));
    }
    return r->MutableRepeatedMessage(msg, f, position);
  }
  // Map entries (NamedInit.params) are indexed by their key.
  const FieldDescriptor* name = f->message_type()->FindFieldByName(f->is_map() ? "key" : "name");
  std::vector<std::string> names;
  for (int k = 0; name != nullptr && name->type() == FieldDescriptor::TYPE_STRING && k < size; ++k) {
    Message* element = r->MutableRepeatedMessage(msg, f, k);
    const std::string element_name = element->GetReflection()->GetString(*element, name);
    if (element_name == index) return element;
    names.push_back(element_name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("override '", assignment, "': ", f->name(), " has no element named '", index,
                   "'; expected a position in [0, ", size, ")",
                   names.empty() ? "" : " or one of: " + absl::StrJoin(names, ", ")));
}

// "params[c]=4" on a map<string, string> field: sets the entry with key `key`, adding it if absent.
absl::Status SetMapValue(const std::string& assignment, Message* msg, const FieldDescriptor* f,
                         const std::string& key, const std::string& value) {
  const Descriptor* entry_type = f->message_type();
  const FieldDescriptor* key_field = entry_type->FindFieldByName("key");
  const FieldDescriptor* value_field = entry_type->FindFieldByName("value");
  if (key_field->type() != FieldDescriptor::TYPE_STRING ||
      value_field->type() != FieldDescriptor::TYPE_STRING) {
    return absl::InvalidArgumentError(
        absl::StrCat("override '", assignment, "': '", f->name(), "' is not a map from text to text"));
  }
  const Reflection* r = msg->GetReflection();
  Message* entry = nullptr;
  for (int k = 0; k < r->FieldSize(*msg, f) && entry == nullptr; ++k) {
    Message* e = r->MutableRepeatedMessage(msg, f, k);
    if (e->GetReflection()->GetString(*e, key_field) == key) entry = e;
  }
  if (entry == nullptr) {
    entry = r->AddMessage(msg, f);
    entry->GetReflection()->SetString(entry, key_field, key);
  }
  // A value given in quotes is taken without them, as text format would.
  std::string text = value;
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') text = text.substr(1, text.size() - 2);
  entry->GetReflection()->SetString(entry, value_field, text);
  return absl::OkStatus();
}

// `spec` with every width shrunk (same layer kinds and count).
models::ModelSpec NarrowProbe(models::ModelSpec spec) {
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

}  // namespace

absl::StatusOr<Experiment> ParseExperiment(const std::string& text) {
  Experiment e;
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &e)) {
    return absl::InvalidArgumentError(absl::StrCat("config: ", errors.Joined()));
  }
  return e;
}

absl::Status ApplyOverride(const std::string& assignment, Experiment* experiment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("override '", assignment, "': expected field.path=value, e.g. train.lr=5e-4"));
  }
  const std::string path(absl::StripAsciiWhitespace(assignment.substr(0, eq)));
  const std::string value(absl::StripAsciiWhitespace(assignment.substr(eq + 1)));
  // Walk to the parent message, clearing the target if repeated so "[a, b]" replaces it.
  std::vector<std::string> parts = absl::StrSplit(path, '.');
  Message* msg = experiment;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Descriptor* d = msg->GetDescriptor();
    // "variants[1]" or "variants[mimetic]": one element of a repeated message field.
    std::string index;
    if (const size_t open = parts[i].find('['); open != std::string::npos && parts[i].back() == ']') {
      index = parts[i].substr(open + 1, parts[i].size() - open - 2);
      parts[i] = parts[i].substr(0, open);
      if (index.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("override '", assignment, "': empty index in '",
                                                       parts[i], "[]'; expected [position] or [name]"));
      }
    }
    const FieldDescriptor* f = d->FindFieldByName(parts[i]);
    if (f == nullptr) {
      std::vector<std::string> names;
      for (int k = 0; k < d->field_count(); ++k) names.push_back(d->field(k)->name());
      return absl::InvalidArgumentError(absl::StrCat("override '", assignment, "': ", d->name(),
                                                     " has no field '", parts[i],
                                                     "'; fields are: ", absl::StrJoin(names, ", ")));
    }
    const Reflection* r = msg->GetReflection();
    if (!index.empty() && f->is_map() && i + 1 == parts.size())
      return SetMapValue(assignment, msg, f, index, value);
    if (!index.empty()) {
      ASSIGN_OR_RETURN(msg, RepeatedElement(assignment, msg, f, index));
      if (i + 1 == parts.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("override '", assignment, "': '", parts[i], "[", index,
                         "]' is a message; name one of its fields after a '.'"));
      }
      continue;
    }
    if (i + 1 == parts.size()) {
      if (f->is_repeated()) r->ClearField(msg, f);
      // Let the text-format parser convert the value, with the field's own type checks.
      std::string text = absl::StrCat(f->name(), ": ", value);
      if (f->type() == FieldDescriptor::TYPE_MESSAGE && !value.empty() && value[0] == '{') {
        text = absl::StrCat(f->name(), " ", value);
      }
      if (f->type() == FieldDescriptor::TYPE_STRING && !value.empty() && value[0] != '"' && value[0] != '[') {
        text = absl::StrCat(f->name(), ": \"", value, "\"");
      }
      google::protobuf::TextFormat::Parser parser;
      ErrorCollector errors;
      parser.RecordErrorsTo(&errors);
      if (!f->is_repeated() && f->type() != FieldDescriptor::TYPE_MESSAGE) r->ClearField(msg, f);
      if (!parser.MergeFromString(text, msg)) {
        return absl::InvalidArgumentError(absl::StrCat("override '", assignment, "': cannot set ", path,
                                                       " to '", value, "': ", errors.Joined()));
      }
      return absl::OkStatus();
    }
    if (f->type() != FieldDescriptor::TYPE_MESSAGE || f->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat("override '", assignment, "': '", parts[i],
                                                     "' is not a singular message field, so '", path,
                                                     "' cannot be set from the command line"));
    }
    msg = r->MutableMessage(msg, f);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<data::Task>> MakeTask(const TaskSpec& spec) {
  switch (spec.task_case()) {
    case TaskSpec::kCopy: {
      const CopyTask& c = spec.copy();
      if (c.sort()) {
        data::SortTaskConfig s;
        s.vocab = c.vocab();
        s.min_len = c.min_len();
        s.max_len = c.max_len();
        s.context_len = c.context_len();
        return data::MakeSortTask(s);
      }
      data::CopyTaskConfig cc;
      cc.vocab = c.vocab();
      cc.min_len = c.min_len();
      cc.max_len = c.max_len();
      cc.context_len = c.context_len();
      cc.order = c.reverse() ? data::CopyOrder::kReverse : data::CopyOrder::kForward;
      return data::MakeCopyTask(cc);
    }
    case TaskSpec::kMqar: {
      const MqarTask& m = spec.mqar();
      data::MqarZoologyConfig z;
      z.vocab = m.vocab();
      z.input_seq_len = m.seq_len();
      z.num_kv_pairs = m.num_kv_pairs();
      z.power_a = m.power_a();
      z.random_non_queries = m.random_non_queries();
      return data::MakeMqarZoologyTask(z);
    }
    case TaskSpec::kMqarCopy: {
      const MqarCopyTask& m = spec.mqar_copy();
      data::MqarCopyStyleConfig c;
      c.vocab = m.vocab();
      c.min_kv = m.min_kv();
      c.max_kv = m.max_kv();
      c.context_len = m.context_len();
      return data::MakeMqarCopyStyleTask(c);
    }
    case TaskSpec::kComposite:
      return MakeCompositeTask(spec.composite());
    case TaskSpec::kInverseSequence:
      return MakeInverseSequenceTask(spec.inverse_sequence());
    case TaskSpec::TASK_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError(
      "config: task is unset; expected one of copy, mqar, mqar_copy, composite, inverse_sequence");
}

absl::StatusOr<init::Transform> MakeTransform(const Variant& variant) {
  std::vector<init::Transform> parts = {init::DefaultInit()};
  for (int i = 0; i < variant.init_size(); ++i) {
    absl::StatusOr<init::Transform> t = MakeInitTransform(variant.init(i));
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("config: variant '", variant.name(), "' init[", i, "]: ", t.status().message()));
    }
    parts.push_back(*std::move(t));
  }
  return init::Compose(parts);
}

const models::ModelSpec& VariantModel(const Experiment& e, const Variant& v) {
  return v.has_model() ? v.model() : e.model();
}

// A model's vocab_size of 0 means "the task's token ids" (content + BOS, SEP, EOS, PAD), so that a sweep
// over the task's vocabulary (Fig. 6) needs no second axis for the model. Filled in before the spec is
// resolved; a task that cannot be built is reported by the task check below.
void FillVocabFromTask(Experiment* e) {
  absl::StatusOr<std::unique_ptr<data::Task>> task = MakeTask(e->task());
  if (!e->has_task() || !task.ok()) return;
  const int vocab = (*task)->model_vocab();
  if (e->has_model() && e->model().vocab_size() == 0) e->mutable_model()->set_vocab_size(vocab);
  for (Variant& v : *e->mutable_variants()) {
    if (v.has_model() && v.model().vocab_size() == 0) v.mutable_model()->set_vocab_size(vocab);
  }
}

namespace {

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
        "its init changes the model's parameterization (mimetic with reparameterize: true?); its file is "
        "read back with the plain spec, as a mamba_ssm checkpoint is: use mimetic { reparameterize: false }");
  }
  return spec;
}

}  // namespace

absl::Status ValidateExperiment(Experiment* e) {
  RETURN_IF_ERROR(CheckFieldRanges(*e));
  if (e->name().empty()) return Bad("name", "\"\"", "a non-empty name");
  if (!e->has_model()) return Bad("model", "unset", "a model spec");
  FillVocabFromTask(e);
  {
    absl::StatusOr<models::ModelSpec> m = models::ResolveSpec(e->model());
    if (!m.ok()) return absl::InvalidArgumentError(absl::StrCat("config: model: ", m.status().message()));
    *e->mutable_model() = *m;
  }
  if (e->variants_size() == 0)
    return Bad("variants", "[]", "at least one variant (e.g. default and mimetic)");
  std::optional<models::ModelSpec> teacher;
  if (e->has_teacher()) {
    ASSIGN_OR_RETURN(teacher, ValidateTeacher(e->teacher()));
  }
  for (int i = 0; i < e->variants_size(); ++i) {
    Variant* v = e->mutable_variants(i);
    const std::string at = absl::StrCat("variants[", i, "]");
    if (v->name().empty()) return Bad(at + ".name", "\"\"", "a non-empty name");
    // The name becomes a directory (points/<name>/...): nothing that could leave the run directory.
    if (v->name()[0] == '.' ||
        v->name().find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                    "0123456789._-+") != std::string::npos) {
      return Bad(at + ".name", "\"" + v->name() + "\"",
                 "letters, digits, '.', '_', '-', '+', not starting with '.'");
    }
    for (int j = 0; j < i; ++j) {
      if (e->variants(j).name() == v->name()) {
        return Bad(at + ".name", "\"" + v->name() + "\"",
                   absl::StrCat("a name no other variant has (variants[", j, "] is also \"", v->name(),
                                "\"; two variants with one name would share one run directory)"));
      }
    }
    if (v->has_model()) {
      absl::StatusOr<models::ModelSpec> m = models::ResolveSpec(v->model());
      if (!m.ok())
        return absl::InvalidArgumentError(absl::StrCat("config: ", at, ".model: ", m.status().message()));
      *v->mutable_model() = *m;
    }
    const models::ModelSpec& spec = VariantModel(*e, *v);
    for (const InitTransform& t : v->init()) {
      for (int layer : t.layers()) {
        if (layer < 0 || layer >= spec.layers_size()) {
          return Bad(at + ".init.layers", absl::StrCat(layer),
                     absl::StrCat("a layer index in [0, ", spec.layers_size(), ") of this model"));
        }
      }
    }
    // Entries that read a checkpoint are checked against its spec and file (which a narrow probe
    // cannot load); the file is read once per process (checkpoint_init.h).
    bool reads_checkpoint = false;
    for (int j = 0; j < v->init_size(); ++j) {
      if (!IsCheckpointKind(v->init(j))) continue;
      reads_checkpoint = true;
      absl::Status s = CheckCheckpointInit(v->init(j), spec, teacher ? &*teacher : nullptr);
      if (!s.ok())
        return absl::Status(s.code(), absl::StrCat("config: ", at, ".init[", j, "]: ", s.message()));
    }
    // Build the model once on a throwaway key so transforms that do not fit fail now. Whether a
    // transform fits depends on the layers' kinds and count, not their widths, so the probe is a narrow
    // copy: a paper-sized sweep validates in milliseconds per point instead of seconds.
    ASSIGN_OR_RETURN(init::Transform t, MakeTransform(*v));
    if (reads_checkpoint) continue;
    absl::StatusOr<init::Model> probe = init::MakeModel(NarrowProbe(spec), t, core::Key::FromSeed(0));
    if (!probe.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("config: ", at, ".init: ", probe.status().message()));
    }
  }
  if (!e->has_task())
    return Bad("task", "unset", "one of copy, mqar, mqar_copy, composite, inverse_sequence");
  ASSIGN_OR_RETURN(std::unique_ptr<data::Task> task, MakeTask(e->task()));
  if (e->eval().has_task()) {
    absl::StatusOr<std::unique_ptr<data::Task>> eval_task = MakeTask(e->eval().task());
    if (!eval_task.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("config: eval.task: ", eval_task.status().message()));
    }
    if ((*eval_task)->model_vocab() > task->model_vocab()) {
      return Bad("eval.task", absl::StrCat((*eval_task)->model_vocab(), " token ids"),
                 absl::StrCat("no more token ids than the training task's ", task->model_vocab()));
    }
  }
  for (int i = 0; i < e->variants_size(); ++i) {
    const models::ModelSpec& spec = VariantModel(*e, e->variants(i));
    if (models::PaddedVocab(spec) < task->model_vocab() || spec.vocab_size() < task->model_vocab()) {
      return Bad(
          "model.vocab_size", absl::StrCat(spec.vocab_size()),
          absl::StrCat(">= the task's ", task->model_vocab(), " token ids (content + BOS, SEP, EOS, PAD)"));
    }
  }
  // Every field's own range was checked above (CheckFieldRanges); here, what relates fields.
  const TrainSpec& t = e->train();
  if (t.schedule() != "linear" && t.schedule() != "cosine" && t.schedule() != "constant") {
    return Bad("train.schedule", "\"" + t.schedule() + "\"", "\"linear\", \"cosine\" or \"constant\"");
  }
  RETURN_IF_ERROR(MakeSchedule(t).Validate());
  const EvalSpec& ev = e->eval();
  if (ev.lengths_size() == 0)
    return Bad("eval.lengths", "[]", "at least one length (e.g. the training length and 2x)");
  for (int i = 0; i < ev.lengths_size(); ++i) {
    const int len = ev.lengths(i);
    for (int j = 0; j < i; ++j) {
      if (ev.lengths(j) == len) {
        return Bad("eval.lengths", absl::StrCat("[", absl::StrJoin(ev.lengths(), ", "), "]"),
                   absl::StrCat("distinct lengths (", len, " appears twice)"));
      }
    }
    absl::StatusOr<data::EvalBatch> probe = task->SampleEval(core::Key::FromSeed(0), 1, len);
    if (!probe.ok())
      return Bad("eval.lengths", absl::StrCat(len),
                 absl::StrCat("a length the task accepts: ", probe.status().message()));
  }
  // The attention-map example is drawn at the end of training: a length the task refuses must fail
  // now, not after the training.
  if (ev.map_length() > 0) {
    absl::StatusOr<data::EvalBatch> probe = task->SampleEval(core::Key::FromSeed(0), 1, ev.map_length());
    if (!probe.ok())
      return Bad("eval.map_length", absl::StrCat(ev.map_length()),
                 absl::StrCat("0 or a length the task accepts: ", probe.status().message()));
  }
  if (e->seeds_size() == 0) return Bad("seeds", "[]", "at least one seed");
  for (int i = 0; i < e->seeds_size(); ++i) {
    for (int j = 0; j < i; ++j) {
      if (e->seeds(i) == e->seeds(j)) {
        return Bad("seeds", absl::StrCat("[", absl::StrJoin(e->seeds(), ", "), "]"),
                   absl::StrCat("distinct seeds (", e->seeds(i),
                                " appears twice; a repeated seed would be counted "
                                "twice in the mean and standard error)"));
      }
    }
  }
  if (e->device() != "cpu" && e->device() != "cuda")
    return Bad("device", "\"" + e->device() + "\"", "\"cpu\" or \"cuda\"");
  if (e->output_dir().empty()) return Bad("output_dir", "\"\"", "a directory");
  return absl::OkStatus();
}

absl::StatusOr<Experiment> LoadExperiment(const std::string& path,
                                          const std::vector<std::string>& overrides) {
  // A directory or a FIFO is refused before it is opened (a FIFO would block the open forever).
  absl::StatusOr<std::string> text = ReadTextFile(path);
  if (!text.ok())
    return absl::Status(text.status().code(), absl::StrCat("config: ", text.status().message()));
  if (absl::StripAsciiWhitespace(*text).empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config: '", path, "' is empty; expected a text-format Experiment (see configs/)"));
  }
  absl::StatusOr<Experiment> e = ParseExperiment(*text);
  if (!e.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.status().message()));
  for (const std::string& o : overrides) RETURN_IF_ERROR(ApplyOverride(o, &*e));
  RETURN_IF_ERROR(CheckFieldRanges(*e));
  // Checked on a copy: the experiment stays unresolved (default_layer, layer_overrides kept) so that
  // sweep axes over model fields still apply to every point; each point resolves its own copy. A
  // sweep's template need not be valid by itself (an axis may supply what it lacks): its points are.
  if (!e->has_sweep() || e->sweep().axes().empty()) {
    Experiment check = *e;
    RETURN_IF_ERROR(ValidateExperiment(&check));
  }
  RETURN_IF_ERROR(ExpandGrid(*e).status());
  return e;
}

train::OptimizerConfig MakeOptimizerConfig(const TrainSpec& t) {
  train::OptimizerConfig c;
  c.adamw = ops::AdamWHyper{t.beta1(), t.beta2(), t.eps(), t.weight_decay()};
  c.max_grad_norm = t.max_grad_norm();
  if (t.mamba_no_decay())
    c.no_decay_globs = {"**/A_log", "**/D", "**/dt_bias", "**/dt_proj/bias", "**/norm*/**", "norm_f/**"};
  return c;
}

train::Schedule MakeSchedule(const TrainSpec& t) {
  train::Schedule s;
  s.kind = t.schedule() == "cosine"     ? train::Schedule::kCosine
           : t.schedule() == "constant" ? train::Schedule::kConstant
                                        : train::Schedule::kLinear;
  s.peak_lr = t.lr();
  s.warmup_steps = t.warmup_steps();
  s.total_steps = t.steps();
  s.final_fraction = t.final_lr_fraction();
  return s;
}

}  // namespace mimetic::experiments
