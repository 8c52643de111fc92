// Every scalar field of the experiment and model protos, set through the same path as `--set`
// (LoadExperiment with an override), to negative, zero, huge, NaN, ±inf and wrong-type values. A value
// that is plainly invalid (outside the field's range in field_ranges.cc, NaN, an infinity, or not of
// the field's type) must be a clean error naming the field; no value may crash or hang the validation.
// Each case runs in a child process so that a crash or a hang is counted, not fatal. Prints the totals.
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
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
// reachable by a --set path.
constexpr char kBase[] = R"pb(
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

struct Case {
  std::string path;   // "train.lr"
  std::string value;  // as after --set path=
  bool plainly_invalid = false;
};

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

// The values tried on `f`, each with whether it is plainly invalid.
std::vector<Case> CasesFor(const FieldDescriptor* f, const std::string& path) {
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
  } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
    for (const char* v : {"-1", "99", "nan", "inf", "BOGUS"}) values.push_back({v, true});
    values.push_back({"0", false});
  } else {  // strings: no range of their own; their validators decide (none may crash or hang)
    for (const char* v : {"", "-1", "0", "2147483647", "nan", "inf", "../../etc", "\"unterminated"})
      values.push_back({v, false});
  }
  std::vector<Case> out;
  for (auto& [v, invalid] : values) {
    // A repeated field takes a list.
    const std::string value = f->is_repeated() && v != "[1]" ? absl::StrCat("[", v, "]") : v;
    out.push_back({path, value, invalid});
  }
  return out;
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  std::set<const Descriptor*> seen;
  std::function<void(const Descriptor*)> walk = [&](const Descriptor* d) {
    if (!seen.insert(d).second) return;
    auto it = Prefixes().find(d->full_name());
    EXPECT_NE(it, Prefixes().end()) << d->full_name() << " has no --set prefix in this test";
    if (it == Prefixes().end()) return;
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->is_map()) continue;  // string -> string parameters (NamedInit.params): no path to --set
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        walk(f->message_type());
        continue;
      }
      for (Case& c : CasesFor(f, it->second + f->name())) cases.push_back(std::move(c));
    }
  };
  walk(Experiment::descriptor());
  return cases;
}

enum class Outcome { kAccepted, kError, kCrash, kHang };

struct Result {
  Outcome outcome = Outcome::kAccepted;
  std::string message;
};

// LoadExperiment (as `--set`), then the grid and the memory check the runner does before a run.
absl::Status Validate(const std::string& config, const std::string& assignment) {
  ASSIGN_OR_RETURN(Experiment e, LoadExperiment(config, {assignment}));
  ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(e));
  return CheckMemory(e, grid, int64_t{8} << 30, 1);
}

Result RunCase(const std::string& config, const std::string& assignment) {
  int fds[2];
  if (::pipe(fds) != 0) return {Outcome::kCrash, "pipe failed"};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const absl::Status s = Validate(config, assignment);
    const std::string out = s.ok() ? "" : absl::StrCat("E", s.message());
    (void)!::write(fds[1], out.data(), out.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  Result r;
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
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {Outcome::kCrash, absl::StrCat("status ", status)};
  }
  if (text.empty()) return {Outcome::kAccepted, ""};
  return {Outcome::kError, text.substr(1)};
}

TEST(ConfigFuzzTest, EveryPlainlyInvalidValueIsACleanErrorNamingTheField) {
  const std::string config = ::testing::TempDir() + "/fuzz_base.textproto";
  std::ofstream(config) << kBase;
  ASSERT_TRUE(Validate(config, "name=fuzz").ok()) << Validate(config, "name=fuzz");
  const std::vector<Case> cases = AllCases();
  std::set<std::string> fields;
  std::string accepted_list;
  int tried = 0, clean = 0, refused_valid = 0, accepted = 0, crash = 0, hang = 0, invalid = 0;
  for (const Case& c : cases) {
    const std::string assignment = absl::StrCat(c.path, "=", c.value);
    const Result r = RunCase(config, assignment);
    ++tried;
    fields.insert(c.path);
    invalid += c.plainly_invalid ? 1 : 0;
    switch (r.outcome) {
      case Outcome::kCrash:
        ++crash;
        ADD_FAILURE() << assignment << ": crashed (" << r.message << ")";
        break;
      case Outcome::kHang:
        ++hang;
        ADD_FAILURE() << assignment << ": hung";
        break;
      case Outcome::kAccepted:
        ++accepted;
        absl::StrAppend(&accepted_list, accepted_list.empty() ? "" : ", ", assignment);
        EXPECT_FALSE(c.plainly_invalid) << assignment << ": accepted";
        break;
      case Outcome::kError:
        if (c.plainly_invalid) {
          const bool names_field = absl::StrContains(r.message, c.path);
          clean += names_field ? 1 : 0;
          EXPECT_TRUE(names_field) << assignment << ": the error does not name " << c.path << ": "
                                   << r.message;
        } else {
          ++refused_valid;  // a value in range refused by a relation (e.g. dt_min > dt_max) or memory
        }
        break;
    }
  }
  std::printf(
      "config fuzz: tried %d values on %zu scalar fields; plainly invalid %d, of which clean errors "
      "naming the field %d; in-range values refused by a relation between fields %d; crash %d; hang %d; "
      "accepted %d\n",
      tried, fields.size(), invalid, clean, refused_valid, crash, hang, accepted);
  std::printf("accepted (in range): %s\n", accepted_list.c_str());
  EXPECT_GT(tried, 500);
  EXPECT_EQ(clean, invalid);
}

TEST(ConfigFuzzTest, AttentionMapsThatDoNotFitAreRefusedBeforeTraining) {
  // A 2048-token map example in a 24-layer model: 24 L x L maps of about 4100 tokens, ~13 GiB.
  const std::string config = ::testing::TempDir() + "/fuzz_maps.textproto";
  // The map example is longer than the training rows; allowed here, where memory is what is tested.
  std::ofstream(config) << absl::StrReplaceAll(kBase,
                                               {{"eval {", "eval { allow_longer_than_training_rows: true"}});
  ASSERT_TRUE(Validate(config, "eval.map_length=2048").ok());
  absl::StatusOr<Experiment> e = LoadExperiment(config, {"eval.map_length=2048", "model.n_layer=24"});
  ASSERT_TRUE(e.ok()) << e.status();
  absl::Status s = CheckMemory(*e, ExpandGrid(*e).value(), int64_t{8} << 30, 1);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_TRUE(absl::StrContains(s.message(), "attention maps")) << s;
}

}  // namespace
}  // namespace mimetic::experiments
