#include "mimetic/experiments/config/config.h"

#include <iostream>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "mimetic/core/file_util.h"
#include "mimetic/data/copy_task.h"
#include "mimetic/data/mqar.h"
#include "mimetic/data/mqar_copy.h"
#include "mimetic/experiments/config/achilles_tasks.h"
#include "mimetic/experiments/config/checkpoint_init.h"
#include "mimetic/experiments/config/field_ranges.h"
#include "mimetic/experiments/config/init_config.h"
#include "mimetic/experiments/config/names.h"
#include "mimetic/experiments/config/sweep.h"
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

// `text` cut to a length fit for an error message: an override may be arbitrarily long.
std::string Shortened(const std::string& text) {
  constexpr size_t kMaxShown = 120;
  return text.size() <= kMaxShown ? text : absl::StrCat(text.substr(0, kMaxShown), "...");
}

// Element `index` (a position, or the value of the element's `name` field) of the repeated message field `f`
// of `msg`.
absl::StatusOr<Message*> RepeatedElement(Message* msg, const FieldDescriptor* f, const std::string& index) {
  if (!f->is_repeated() || f->type() != FieldDescriptor::TYPE_MESSAGE) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", f->name(), "' is not a repeated message field, so it takes no [index]"));
  }
  const Reflection* r = msg->GetReflection();
  const int size = r->FieldSize(*msg, f);
  int position = -1;
  if (absl::SimpleAtoi(index, &position)) {
    if (position < 0 || position >= size) {
      return absl::InvalidArgumentError(
          absl::StrCat(f->name(), "[", index, "] is out of range; it has ", size, " elements"));
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
      absl::StrCat(f->name(), " has no element named '", Shortened(index), "'; expected a position in [0, ",
                   size, ")", names.empty() ? "" : " or one of: " + absl::StrJoin(names, ", ")));
}

// "params[c]=4" on a map<string, string> field: sets the entry with key `key`, adding it if absent.
absl::Status SetMapValue(Message* msg, const FieldDescriptor* f, const std::string& key,
                         const std::string& value) {
  const Descriptor* entry_type = f->message_type();
  const FieldDescriptor* key_field = entry_type->FindFieldByName("key");
  const FieldDescriptor* value_field = entry_type->FindFieldByName("value");
  if (key_field->type() != FieldDescriptor::TYPE_STRING ||
      value_field->type() != FieldDescriptor::TYPE_STRING) {
    return absl::InvalidArgumentError(absl::StrCat("'", f->name(), "' is not a map from text to text"));
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

// MergeConfigText (merge: fields given twice, the last wins) or a parse into an empty `message` that refuses
// a singular field given twice.
absl::Status ParseConfigText(const std::string& text, bool merge, Message* message) {
  google::protobuf::TextFormat::Parser parser;
  parser.SetRecursionLimit(kMaxConfigDepth);
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!(merge ? parser.MergeFromString(text, message) : parser.ParseFromString(text, message)))
    return absl::InvalidArgumentError(errors.Joined());
  return absl::OkStatus();
}

// Where a field path leads: the message holding the field and the field; for a map entry ("params[c]") its
// key.
struct FieldTarget {
  Message* parent = nullptr;
  const FieldDescriptor* field = nullptr;
  std::optional<std::string> map_key;
};

// Walks `path` ("variants[mimetic].init[0].mimetic.c") from `root`, creating the messages on the way as
// setting would. Errors say what is wrong with the path; the caller names the assignment.
absl::StatusOr<FieldTarget> FindTarget(const std::string& path, Message* root) {
  std::vector<std::string> parts = absl::StrSplit(path, '.');
  if (parts.size() > kMaxConfigDepth) {
    return absl::InvalidArgumentError(absl::StrCat("the field path nests ", parts.size(),
                                                   " messages deep, past the limit of ", kMaxConfigDepth));
  }
  Message* msg = root;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Descriptor* d = msg->GetDescriptor();
    const bool last = i + 1 == parts.size();
    // "variants[1]" or "variants[mimetic]": one element of a repeated message field.
    std::string index;
    if (const size_t open = parts[i].find('['); open != std::string::npos && parts[i].back() == ']') {
      index = parts[i].substr(open + 1, parts[i].size() - open - 2);
      parts[i] = parts[i].substr(0, open);
      if (index.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("empty index in '", parts[i], "[]'; expected [position] or [name]"));
      }
    }
    const FieldDescriptor* f = d->FindFieldByName(parts[i]);
    if (f == nullptr) {
      std::vector<std::string> names;
      for (int k = 0; k < d->field_count(); ++k) names.push_back(d->field(k)->name());
      return absl::InvalidArgumentError(absl::StrCat(d->name(), " has no field '", Shortened(parts[i]),
                                                     "'; fields are: ", absl::StrJoin(names, ", ")));
    }
    if (!index.empty() && f->is_map() && last) return FieldTarget{msg, f, index};
    if (!index.empty()) {
      ASSIGN_OR_RETURN(msg, RepeatedElement(msg, f, index));
      if (last) {
        return absl::InvalidArgumentError(absl::StrCat(
            "'", parts[i], "[", Shortened(index), "]' is a message; name one of its fields after a '.'"));
      }
      continue;
    }
    if (last) return FieldTarget{msg, f, std::nullopt};
    if (f->type() != FieldDescriptor::TYPE_MESSAGE || f->is_repeated()) {
      return absl::InvalidArgumentError(absl::StrCat("'", parts[i], "' is not a singular message field, so '",
                                                     Shortened(path),
                                                     "' cannot be set from the command line"));
    }
    msg = msg->GetReflection()->MutableMessage(msg, f);
  }
  return absl::InvalidArgumentError("an empty field path");  // not reached: StrSplit gives one part or more
}

// Sets `f` of `msg` from `value` (text as after --set path=), converted by the text-format parser with the
// field's own type checks. The text must set that field alone, once: a string `x" device: "cuda` would
// otherwise also set device, unseen (or, for device itself, set it twice, the last winning), and a sweep
// value could set fields no axis names.
absl::Status SetField(Message* msg, const FieldDescriptor* f, const std::string& value) {
  std::string text = absl::StrCat(f->name(), ": ", value);
  if (f->type() == FieldDescriptor::TYPE_MESSAGE && !value.empty() && value[0] == '{') {
    text = absl::StrCat(f->name(), " ", value);
  }
  if (f->type() == FieldDescriptor::TYPE_STRING && !value.empty() && value[0] != '"' && value[0] != '[') {
    text = absl::StrCat(f->name(), ": \"", value, "\"");
  }
  std::unique_ptr<Message> alone(msg->New());
  RETURN_IF_ERROR(ParseConfigText(text, /*merge=*/false, alone.get()));
  std::vector<const FieldDescriptor*> set;
  alone->GetReflection()->ListFields(*alone, &set);
  for (const FieldDescriptor* other : set) {
    if (other != f) {
      return absl::InvalidArgumentError(
          absl::StrCat("the value also sets '", other->name(), "'; it may set only '", f->name(),
                       "' (a string holding '\"' is written quoted, with \\\")"));
    }
  }
  // A repeated field is replaced ("[a, b]"), a singular one overwritten; a message is merged into.
  if (f->is_repeated() || f->type() != FieldDescriptor::TYPE_MESSAGE)
    msg->GetReflection()->ClearField(msg, f);
  return MergeConfigText(text, msg);
}

}  // namespace

absl::Status MergeConfigText(const std::string& text, Message* message) {
  return ParseConfigText(text, /*merge=*/true, message);
}

std::string OneLineText(const Message& message) {
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.SetSingleLineMode(true);
  printer.PrintToString(message, &text);
  absl::StripTrailingAsciiWhitespace(&text);
  return text;
}

std::string FirstDifference(const Message& saved, const Message& given) {
  std::string report;
  {
    // The reporter writes `report` when the differencer goes out of scope.
    google::protobuf::util::MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&report);
    differencer.Compare(saved, given);
  }
  std::string first = report.substr(0, report.find('\n'));
  return first.size() > 300 ? first.substr(0, 300) + "..." : first;
}

absl::StatusOr<Experiment> ParseExperiment(const std::string& text) {
  Experiment e;
  if (absl::Status s = MergeConfigText(text, &e); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("config: ", s.message()));
  }
  return e;
}

absl::Status ApplyOverride(const std::string& full_assignment, Experiment* experiment) {
  const std::string assignment = Shortened(full_assignment);  // as messages quote it
  const size_t eq = full_assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("override '", assignment, "': expected field.path=value, e.g. train.lr=5e-4"));
  }
  const std::string path(absl::StripAsciiWhitespace(full_assignment.substr(0, eq)));
  const std::string value(absl::StripAsciiWhitespace(full_assignment.substr(eq + 1)));
  absl::StatusOr<FieldTarget> target = FindTarget(path, experiment);
  absl::Status s = target.status();
  if (s.ok() && target->map_key) s = SetMapValue(target->parent, target->field, *target->map_key, value);
  if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("override '", assignment, "': ", s.message()));
  if (target->map_key) return absl::OkStatus();
  if (absl::Status set = SetField(target->parent, target->field, value); !set.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("override '", assignment, "': cannot set ",
                                                   Shortened(path), " to '", Shortened(value),
                                                   "': ", set.message()));
  }
  return absl::OkStatus();
}

absl::Status CheckFieldPath(const Experiment& e, const std::string& path) {
  Experiment scratch = e;  // the walk creates the messages on its way
  return FindTarget(path, &scratch).status();
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

absl::StatusOr<Experiment> LoadExperiment(const std::string& path,
                                          const std::vector<std::string>& overrides) {
  // A directory or a FIFO is refused before it is opened (a FIFO would block the open forever).
  absl::StatusOr<std::string> text = core::ReadTextFile(path);
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
  // A large sweep says what it is doing here, where a run spends its first seconds (sweep.h).
  RETURN_IF_ERROR(ExpandGrid(*e, &std::cerr).status());
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
