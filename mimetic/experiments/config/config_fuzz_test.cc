// The config's validation under hostile input, in three groups, each case a load through the same path as
// `--set` (LoadExperiment with overrides) followed by the grid and the memory check the runner does:
//   scalar:     every numeric, bool and enum field set to negative, zero, huge, NaN, ±inf and wrong-type
//   values; string:     every string field set to names with '/', "..", absolute paths, 5,000 characters,
//   non-UTF-8
//               bytes, the empty string, control characters and text that would set a second field;
//   structural: two sweep axes over one field, an axis over seeds / name / output_dir, axis values that parse
//               equal, duplicate names, nesting 8,000 levels deep in a file and through --set.
// A plainly invalid value must be a clean error naming the field; no value may crash or hang the validation;
// a plainly invalid value accepted fails the test. Each case runs in a child process so that a crash or a
// hang is counted, not fatal. Prints one line of counts per group and one for all:
//   config fuzz: tried N / clean error N / crash N / hang N / accepted-invalid N (accepted valid N, ...)
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/field_ranges.h"
#include "mimetic/experiments/config/memory_estimate.h"
#include "mimetic/experiments/config/sweep.h"

namespace mimetic::experiments {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// A valid experiment with an element in every repeated message field, so that each message type is
// reachable by a --set path. The sweep is apart so that structural cases can replace it.
constexpr char kBody[] = R"pb(
  name: "fuzz"
  model {
    vocab_size: 12
    d_model: 16
    n_layer: 2
    default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } }
    layer_overrides {
      index: 1
      layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } }
    }
  }
  variants { name: "default" }
  variants {
    name: "mimetic"
    init { mimetic {} }
  }
  task { copy { vocab: 8 min_len: 2 max_len: 6 context_len: 32 } }
  train { steps: 10 batch_size: 4 }
  eval { lengths: [ 6, 12 ] }
  seeds: [ 1 ]
)pb";
constexpr char kSweep[] = R"pb(
  sweep {
    axes {
      fields: "train.log_every"
      values: [ "5" ]
    }
  }
)pb";

// The --set prefix that reaches each message type.
const std::map<std::string, std::string>& Prefixes() {
  static const auto* m = new std::map<std::string, std::string>{
      {"mimetic.experiments.Experiment", ""},
      {"mimetic.models.ModelSpec", "model."},
      {"mimetic.models.LayerSpec", "model.default_layer."},
      {"mimetic.models.Mamba1Spec", "model.default_layer.mamba1."},
      {"mimetic.models.Mamba2Spec", "model.default_layer.mamba2."},
      {"mimetic.models.AttentionSpec", "model.default_layer.attention."},
      {"mimetic.models.LinearAttentionSpec", "model.default_layer.linear_attention."},
      {"mimetic.models.LayerOverride", "model.layer_overrides[0]."},
      {"mimetic.experiments.Variant", "variants[1]."},
      {"mimetic.experiments.InitTransform", "variants[1].init[0]."},
      {"mimetic.experiments.MimeticInit", "variants[1].init[0].mimetic."},
      {"mimetic.experiments.GammaInit", "variants[1].init[0].gamma."},
      {"mimetic.experiments.NamedInit", "variants[1].init[0].named."},
      {"mimetic.experiments.CheckpointInit", "variants[1].init[0].transplant."},
      {"mimetic.experiments.TaskSpec", "task."},
      {"mimetic.experiments.CopyTask", "task.copy."},
      {"mimetic.experiments.MqarTask", "task.mqar."},
      {"mimetic.experiments.MqarCopyTask", "task.mqar_copy."},
      {"mimetic.experiments.CompositeTask", "task.composite."},
      {"mimetic.experiments.InverseSequenceTask", "task.inverse_sequence."},
      {"mimetic.experiments.TrainSpec", "train."},
      {"mimetic.experiments.EvalSpec", "eval."},
      {"mimetic.experiments.Sweep", "sweep."},
      {"mimetic.experiments.SweepAxis", "sweep.axes[0]."},
  };
  return *m;
}

enum Group { kScalar, kString, kStructural, kGroups };
constexpr const char* kGroupNames[] = {"scalar", "string", "structural"};

struct Case {
  Group group = kScalar;
  std::string config;                  // structural: the file loaded (others load the base)
  std::vector<std::string> overrides;  // as after --set
  std::string shown;                   // the case in messages
  bool plainly_invalid = false;
  std::vector<std::string> names;  // a clean error contains one of these (the field, or what it refuses)
};

// `text` cut and escaped for the report: a value, and so a message quoting it, may be 5,000 bytes or binary.
std::string Shown(const std::string& text, size_t max) {
  return absl::CHexEscape(
      text.size() > max ? absl::StrCat(text.substr(0, max), "...(", text.size(), " bytes)") : text);
}

Case SetCase(Group group, const std::string& path, const std::string& value, bool invalid) {
  Case c;
  c.group = group;
  c.overrides = {absl::StrCat(path, "=", value)};
  // Long or binary values are shown cut and escaped: the report must stay readable.
  const std::string cut =
      value.size() > 40 ? absl::StrCat(value.substr(0, 12), "...(", value.size(), " bytes)") : value;
  c.shown = absl::StrCat(path, "=", absl::CHexEscape(cut));
  c.plainly_invalid = invalid;
  c.names = {path};
  return c;
}

bool IsInt(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

// The values tried on the numeric, bool or enum field `f`, each with whether it is plainly invalid.
std::vector<Case> ScalarCases(const FieldDescriptor* f, const std::string& path) {
  std::vector<std::pair<std::string, bool>> values;  // value, invalid whatever the range
  const FieldRange* range = FindRange(f);
  auto numeric = [&](const std::string& v) {
    double d = 0;
    const bool parsed = absl::SimpleAtod(v, &d);
    const bool unsigned_negative = parsed && d < 0 &&
                                   (f->cpp_type() == FieldDescriptor::CPPTYPE_UINT64 ||
                                    f->cpp_type() == FieldDescriptor::CPPTYPE_UINT32);
    values.push_back({v, !parsed || unsigned_negative || range == nullptr || !InRange(*range, d)});
  };
  if (IsInt(f)) {
    for (const char* v : {"-1", "0", "2147483647", "9223372036854775807"}) numeric(v);
    for (const char* v : {"nan", "inf", "-inf", "abc", "1.5", "true"}) values.push_back({v, true});
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE ||
             f->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
    for (const char* v : {"-1.5", "0", "1e300", "-1e300", "nan", "inf", "-inf"}) numeric(v);
    for (const char* v : {"abc", "\"1\"", "[1]"}) values.push_back({v, true});
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_BOOL) {
    for (const char* v : {"-1", "2", "2147483647", "nan", "inf", "abc"}) values.push_back({v, true});
    for (const char* v : {"0", "true"}) values.push_back({v, false});
  } else {  // enum
    for (const char* v : {"-1", "99", "nan", "inf", "BOGUS"}) values.push_back({v, true});
    values.push_back({"0", false});
  }
  std::vector<Case> out;
  for (auto& [v, invalid] : values) {
    // A repeated field takes a list.
    out.push_back(
        SetCase(kScalar, path, f->is_repeated() && v != "[1]" ? absl::StrCat("[", v, "]") : v, invalid));
  }
  return out;
}

// How a string field's value is judged.
enum class StringKind {
  kName,  // becomes a directory component: plainly invalid when empty, over 255 bytes (no file system
          // takes a longer one), starting with '.' or holding '/', a control or a non-ASCII byte
  kWord,  // one of a list (device, schedule, split, a published model, a registered transform, a variant, a
          // field path, a value of the swept field): no fuzz value is in any list, so every one is invalid
  kPath,  // a file or directory path: slashes, "..", any bytes but NUL; plainly invalid when empty, holding
          // NUL, with a part over 255 bytes or over 4095 in all (Linux's NAME_MAX and PATH_MAX)
};

// Every string field of the experiment, by kind. A string field missing here fails the test: say how its
// values are judged.
const std::map<std::string, StringKind>& StringKinds() {
  static const auto* m = new std::map<std::string, StringKind>{
      {"mimetic.experiments.Experiment.name", StringKind::kName},
      {"mimetic.experiments.Variant.name", StringKind::kName},
      {"mimetic.experiments.SweepAxis.name", StringKind::kName},
      {"mimetic.experiments.SweepAxis.value_names", StringKind::kName},
      {"mimetic.experiments.Experiment.output_dir", StringKind::kPath},
      {"mimetic.experiments.CheckpointInit.path", StringKind::kPath},
      {"mimetic.experiments.Experiment.device", StringKind::kWord},
      {"mimetic.experiments.NamedInit.name", StringKind::kWord},
      {"mimetic.experiments.CheckpointInit.name", StringKind::kWord},
      {"mimetic.experiments.CompositeTask.variant", StringKind::kWord},
      {"mimetic.experiments.CompositeTask.split", StringKind::kWord},
      {"mimetic.experiments.CompositeTask.pair43_label", StringKind::kWord},
      {"mimetic.experiments.InverseSequenceTask.split", StringKind::kWord},
      {"mimetic.experiments.TrainSpec.schedule", StringKind::kWord},
      {"mimetic.experiments.SweepAxis.fields", StringKind::kWord},
      {"mimetic.experiments.SweepAxis.values", StringKind::kWord},
      {"mimetic.experiments.SweepAxis.variants", StringKind::kWord},
  };
  return *m;
}

struct StringValue {
  std::string text;                  // as after --set field=
  std::optional<std::string> bytes;  // what reaches the field; nullopt: the text is malformed
};

std::vector<StringValue> StringValues() {
  return {
      {"a/b", "a/b"},
      {"..", ".."},
      {".", "."},
      {"../x", "../x"},
      {"/abs/path", "/abs/path"},
      {std::string(5000, 'a'), std::string(5000, 'a')},
      {"\xff\xfe", "\xff\xfe"},       // raw bytes, as a shell passes them
      {R"("\xff\xfe")", "\xff\xfe"},  // a text-format escape
      {R"("")", ""},                  // the empty string
      {"", std::nullopt},             // nothing after '=': not a string literal
      {"a\001b", "a\001b"},           // a control character
      {"a\tb", "a\tb"},
      {R"("a\0b")", std::string("a\0b", 3)},  // NUL, which a C path would silently end at
      {"a\nb", std::nullopt},                 // a string literal cannot span lines
      {"0", "0"},
      {"nan", "nan"},
      {"\"unterminated", std::nullopt},
      {"x\" device: \"cuda", std::nullopt},  // would set a second field
  };
}

bool PlainlyInvalid(StringKind kind, const std::string& v, bool empty_is_default) {
  switch (kind) {
    case StringKind::kWord:
      return true;
    case StringKind::kName:
      if (v.empty()) return !empty_is_default;
      if (v[0] == '.' || v.size() > 255) return true;
      for (unsigned char c : v) {
        if (c == '/' || c < 0x20 || c >= 0x7f) return true;
      }
      return false;
    case StringKind::kPath:
      if (v.empty() || v.size() > 4095 || absl::StrContains(v, absl::string_view("\0", 1))) return true;
      for (absl::string_view part : absl::StrSplit(v, '/')) {
        if (part.size() > 255) return true;
      }
      return false;
  }
  return true;
}

std::vector<Case> StringCases(const FieldDescriptor* f, const std::string& path) {
  auto kind = StringKinds().find(f->full_name());
  EXPECT_NE(kind, StringKinds().end()) << f->full_name() << ": a string field this test does not classify";
  if (kind == StringKinds().end()) return {};
  std::vector<Case> out;
  for (const StringValue& v : StringValues()) {
    std::string text = v.text;
    if (f->is_repeated()) {
      if (text.empty()) continue;  // "[]": the empty list, not a string
      // The same text as one element of a list.
      text =
          !text.empty() && text[0] == '"' ? absl::StrCat("[", text, "]") : absl::StrCat("[\"", text, "\"]");
    }
    const bool invalid = !v.bytes || PlainlyInvalid(kind->second, *v.bytes,
                                                    f->full_name() == "mimetic.experiments.SweepAxis.name");
    Case c = SetCase(kString, path, text, invalid);
    // A swept value is judged as a value of the field it sets.
    if (f->name() == "values") c.names.push_back("train.log_every");
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<Case> FieldCases() {
  std::vector<Case> cases;
  std::set<const Descriptor*> seen;
  std::function<void(const Descriptor*)> walk = [&](const Descriptor* d) {
    if (!seen.insert(d).second) return;
    auto it = Prefixes().find(d->full_name());
    EXPECT_NE(it, Prefixes().end()) << d->full_name() << " has no --set prefix in this test";
    if (it == Prefixes().end()) return;
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      // NamedInit.params (string -> string): the registry converts and checks them (init_config_test); not
      // fuzzed here.
      if (f->is_map()) continue;
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        walk(f->message_type());
        continue;
      }
      const std::string path = it->second + f->name();
      for (Case& c :
           f->cpp_type() == FieldDescriptor::CPPTYPE_STRING ? StringCases(f, path) : ScalarCases(f, path))
        cases.push_back(std::move(c));
    }
  };
  walk(Experiment::descriptor());
  return cases;
}

// A structural case: `body` (the base without its sweep) followed by `extra`, loaded with `overrides`; always
// plainly invalid, its clean error containing `must_name`.
Case Structural(const std::string& shown, const std::string& extra, std::vector<std::string> overrides,
                const std::string& must_name) {
  Case c;
  c.group = kStructural;
  c.config = absl::StrCat(kBody, extra);
  c.overrides = std::move(overrides);
  c.shown = shown;
  c.plainly_invalid = true;
  c.names = {must_name};
  return c;
}

// One sweep axis as text.
std::string Axis(const std::string& fields, const std::string& values, const std::string& more = "") {
  return absl::StrCat(" axes { fields: [", fields, "] values: [", values, "] ", more, " } ");
}

std::vector<Case> StructuralCases() {
  const std::string log_every = Axis("\"train.log_every\"", "\"5\"");
  const auto sweep = [](const std::string& axes) { return absl::StrCat("sweep {", axes, "}"); };
  std::vector<Case> out = {
      Structural("two axes set train.log_every",
                 sweep(log_every + Axis("\"train.log_every\"", "\"6\"", "name: \"b\"")), {},
                 "sweep.axes[1].fields[0]"),
      Structural("two axes set train.log_every, through --set", "",
                 {"sweep={" + log_every + Axis("\"train.log_every\"", "\"6\"", "name: \"b\"") + "}"},
                 "sweep.axes[1].fields[0]"),
      Structural("two axes set one field, by name and by position",
                 sweep(Axis("\"variants[mimetic].init[0].mimetic.c\"", "\"4\"") +
                       Axis("\"variants[1].init[0].mimetic.c\"", "\"2\"", "name: \"c2\"")),
                 {}, "sweep.axes[1].fields[0]"),
      Structural("two axes named alike",
                 sweep(log_every + Axis("\"train.eval_every\"", "\"5\"", "name: \"log_every\"")), {},
                 "sweep.axes[1].name"),
      Structural("axis values 4 and 04", sweep(Axis("\"train.log_every\"", "\"4\", \"04\"")), {},
                 "sweep.axes[0].values"),
      Structural("axis values 1e-3 and 0.001", sweep(Axis("\"train.lr\"", "\"1e-3\", \"0.001\"")), {},
                 "sweep.axes[0].values"),
      Structural("axis value names alike",
                 sweep(Axis("\"train.log_every\"", "\"4\", \"5\"", "value_names: [\"a\", \"a\"]")), {},
                 "sweep.axes[0].values"),
      Structural("two variants named alike", "variants { name: \"default\" }", {}, "variants[2].name"),
      Structural("seeds [1, 1]", "", {"seeds=[1, 1]"}, "seeds"),
      Structural("eval.lengths [6, 6]", "", {"eval.lengths=[6, 6]"}, "eval.lengths"),
  };
  // Fields that every point sets itself.
  for (const char* field : {"seeds", "name", "output_dir", "sweep.select_length"}) {
    out.push_back(Structural(
        absl::StrCat("an axis over ", field),
        sweep(Axis(absl::StrCat("\"", field, "\""), "\"[1]\", \"[2]\"", "value_names: [\"v1\", \"v2\"]")), {},
        "sweep.axes[0].fields[0]"));
  }
  // Nesting past the parser's limit (config.h, kMaxConfigDepth): in the file, through --set, in a field path.
  constexpr int kDepth = 8000;
  std::string nested;
  for (int i = 0; i < kDepth; ++i) nested += "teacher { ";
  nested += std::string(kDepth, '}');
  std::string deep_path = "teacher";
  for (int i = 1; i < kDepth; ++i) deep_path += ".teacher";
  const std::string brackets(kDepth, '[');
  out.push_back(Structural("teacher nested 8000 deep in the file", nested, {}, "limit of 64"));
  out.push_back(Structural("teacher nested 8000 deep through --set", "", {"teacher=" + nested.substr(8)},
                           "limit of 64"));
  out.push_back(Structural("a field path 8000 deep", "", {deep_path + ".name=x"}, "limit of 64"));
  out.push_back(
      Structural("teacher nested 60 deep", nested.substr(0, 60 * 10) + std::string(60, '}'), {}, "teacher"));
  out.push_back(Structural("8000 '[' through --set", "", {"eval.lengths=" + brackets}, "eval.lengths"));
  out.push_back(Structural("8000 '[' in the file", "eval { lengths: " + brackets + " }", {}, "column"));
  return out;
}

enum class Outcome { kAccepted, kError, kCrash, kHang };

struct Result {
  Outcome outcome = Outcome::kAccepted;
  std::string message;
};

// LoadExperiment (as `--set`), then the grid and the memory check the runner does before a run.
absl::Status Validate(const std::string& config, const std::vector<std::string>& overrides) {
  ASSIGN_OR_RETURN(Experiment e, LoadExperiment(config, overrides));
  ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(e));
  return CheckMemory(e, grid, int64_t{8} << 30, 1);
}

// Validate in a child process: its crash or hang is an outcome, not this test's end.
Result RunCase(const std::string& config, const std::vector<std::string>& overrides) {
  int fds[2];
  if (::pipe(fds) != 0) return {Outcome::kCrash, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const absl::Status s = Validate(config, overrides);
    const std::string out = s.ok() ? "" : absl::StrCat("E", s.message());
    (void)!::write(fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string text;
  struct pollfd p = {fds[0], POLLIN, 0};
  bool hung = false;
  while (true) {
    const int ready = ::poll(&p, 1, 20000);  // validation takes milliseconds; 20 s is a hang
    if (ready == 0) {
      hung = true;
      ::kill(pid, SIGKILL);
      break;
    }
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (hung) return {Outcome::kHang, ""};
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return {Outcome::kCrash, absl::StrCat("status ", status)};
  if (text.empty()) return {Outcome::kAccepted, ""};
  return {Outcome::kError, text.substr(1)};
}

struct Counts {
  int tried = 0, clean = 0, crash = 0, hang = 0, accepted_invalid = 0;
  int accepted_valid = 0, unnamed = 0;  // accepted and not plainly invalid; an error not naming the field
  double seconds = 0;                   // forks included: the test runs in CI on 2 cores
  std::vector<std::string> accepted;    // the valid values accepted, for the report

  void Add(const Counts& o) {
    tried += o.tried, clean += o.clean, crash += o.crash, hang += o.hang,
        accepted_invalid += o.accepted_invalid;
    accepted_valid += o.accepted_valid, unnamed += o.unnamed, seconds += o.seconds;
  }
  std::string Line(const std::string& label) const {
    return absl::StrCat("config fuzz", label, ": tried ", tried, " / clean error ", clean, " / crash ", crash,
                        " / hang ", hang, " / accepted-invalid ", accepted_invalid, " (accepted valid ",
                        accepted_valid, ", error not naming the field ", unnamed, "; ",
                        absl::StrFormat("%.1f", seconds), " s)");
  }
};

// Counts `r`, the result of `c`, and fails the test on a crash, a hang, a plainly invalid value accepted or
// an error for one that does not name the field.
void Judge(const Case& c, const Result& r, Counts* n) {
  ++n->tried;
  switch (r.outcome) {
    case Outcome::kCrash:
      ++n->crash;
      ADD_FAILURE() << c.shown << ": crashed (" << r.message << ")";
      return;
    case Outcome::kHang:
      ++n->hang;
      ADD_FAILURE() << c.shown << ": hung";
      return;
    case Outcome::kAccepted:
      if (c.plainly_invalid) {
        ++n->accepted_invalid;
        ADD_FAILURE() << c.shown << ": accepted though plainly invalid";
      } else {
        ++n->accepted_valid;
        n->accepted.push_back(c.shown);
      }
      return;
    case Outcome::kError: {
      // A valid value may still be refused by a relation between fields (dt_min > dt_max) or memory.
      bool named = !c.plainly_invalid;
      for (const std::string& name : c.names) named = named || absl::StrContains(r.message, name);
      ++(named ? n->clean : n->unnamed);
      EXPECT_TRUE(named) << c.shown << ": the error names none of " << absl::StrJoin(c.names, ", ") << ": "
                         << Shown(r.message, 400);
      return;
    }
  }
}

TEST(ConfigFuzzTest, EveryPlainlyInvalidValueIsACleanErrorNamingTheField) {
  const std::string base = ::testing::TempDir() + "/fuzz_base.textproto";
  std::ofstream(base) << kBody << kSweep;
  ASSERT_TRUE(Validate(base, {}).ok()) << Validate(base, {});
  std::vector<Case> cases = FieldCases();
  for (Case& c : StructuralCases()) cases.push_back(std::move(c));
  Counts counts[kGroups];
  std::set<std::string> fields[kGroups];
  const std::string structural = ::testing::TempDir() + "/fuzz_structural.textproto";
  for (const Case& c : cases) {
    if (c.group == kStructural) std::ofstream(structural) << c.config;
    const absl::Time start = absl::Now();
    Judge(c, RunCase(c.group == kStructural ? structural : base, c.overrides), &counts[c.group]);
    counts[c.group].seconds += absl::ToDoubleSeconds(absl::Now() - start);
    if (c.group != kStructural) fields[c.group].insert(c.overrides[0].substr(0, c.overrides[0].find('=')));
  }
  Counts all;
  for (int g = 0; g < kGroups; ++g) {
    std::printf("%s\n", counts[g].Line(absl::StrCat(" [", kGroupNames[g], "]")).c_str());
    all.Add(counts[g]);
  }
  std::printf("%s\n", all.Line("").c_str());
  std::printf("fields: %zu scalar, %zu string\n", fields[kScalar].size(), fields[kString].size());
  for (int g : {kScalar, kString}) {
    std::printf("accepted (%s, not plainly invalid): %s\n", kGroupNames[g],
                absl::StrJoin(counts[g].accepted, ", ").c_str());
  }
  EXPECT_GT(counts[kScalar].tried, 500);
  EXPECT_GT(counts[kString].tried, 200);
  EXPECT_GT(counts[kStructural].tried, 15);
}

TEST(ConfigFuzzTest, AttentionMapsThatDoNotFitAreRefusedBeforeTraining) {
  // A 2048-token map example in a 24-layer model: 24 L x L maps of about 4100 tokens, ~13 GiB.
  const std::string config = ::testing::TempDir() + "/fuzz_maps.textproto";
  // The map example is longer than the training rows; allowed here, where memory is what is tested.
  std::ofstream(config) << absl::StrReplaceAll(absl::StrCat(kBody, kSweep),
                                               {{"eval {", "eval { allow_longer_than_training_rows: true"}});
  ASSERT_TRUE(Validate(config, {"eval.map_length=2048"}).ok());
  absl::StatusOr<Experiment> e = LoadExperiment(config, {"eval.map_length=2048", "model.n_layer=24"});
  ASSERT_TRUE(e.ok()) << e.status();
  absl::Status s = CheckMemory(*e, ExpandGrid(*e).value(), int64_t{8} << 30, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(s.message(), "attention maps")) << s;
}

}  // namespace
}  // namespace mimetic::experiments
