#include "mimetic/experiments/config/field_ranges.h"

#include <cmath>
#include <iterator>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/init/registry.h"

namespace mimetic::experiments {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Upper bounds are generous (well above the paper's sizes) but finite, so that a huge value is refused
// here, naming its field, instead of ending in std::bad_alloc; memory_estimate.h judges whether the
// sizes together fit the machine.
constexpr double kLen = 1 << 20;    // sequence lengths, vocabularies, batch sizes
constexpr double kWidth = 1 << 16;  // model widths
constexpr double kCount = 1e9;      // step counts
constexpr double kU64 = 18446744073709551615.0;

#define EXP "mimetic.experiments."
#define MOD "mimetic.models."

// {field, lo, hi, lo_open, hi_open, meaning}: plain data (trivially destructible), read through Table().
constexpr FieldRange kTable[] = {
    {EXP "InitTransform.layers", 0, 4096, false, false, "layer index (< the model's layer count)"},
    {EXP "CheckpointInit.source_layer", 0, 4096, false, false, "checkpoint layer index (< its layer count)"},
    {EXP "CopyTask.vocab", 1, kLen, false, false, "content tokens"},
    {EXP "CopyTask.min_len", 1, kLen, false, false, "string length (<= max_len)"},
    {EXP "CopyTask.max_len", 1, kLen, false, false, "string length"},
    {EXP "CopyTask.context_len", 1, kLen, false, false, "tokens per training sequence"},
    {EXP "MqarTask.vocab", 1, 1 << 24, false, false, "token ids"},
    {EXP "MqarTask.seq_len", 1, kLen, false, false, "tokens per sequence"},
    {EXP "MqarTask.num_kv_pairs", 1, kLen, false, false, "key-value pairs per sequence"},
    {EXP "MqarTask.power_a", 0, 100, true, false, "power-law exponent of query gaps"},
    {EXP "MqarCopyTask.vocab", 1, kLen, false, false, "content tokens"},
    {EXP "MqarCopyTask.min_kv", 1, kLen, false, false, "key-value pairs (<= max_kv)"},
    {EXP "MqarCopyTask.max_kv", 1, kLen, false, false, "key-value pairs"},
    {EXP "MqarCopyTask.context_len", 1, kLen, false, false, "tokens per training sequence"},
    {EXP "CompositeTask.seq_len", 3, kLen, false, false, "tokens per row (key, two anchors, fillers)"},
    {EXP "CompositeTask.key_min", 5, 1 << 24, false, false,
     "smallest key (above the anchors 0..4; <= key_max)"},
    {EXP "CompositeTask.key_max", 5, 1 << 24, false, false, "largest key"},
    {EXP "CompositeTask.set2_anchor4_shift", -1000, 1000, false, false, "label shift of anchor 4 in set 2"},
    {EXP "InverseSequenceTask.n_layers", 1, 4096, false, false,
     "the model's depth (filler length 3 n_layers)"},
    {EXP "TrainSpec.steps", 1, kCount, false, false, "optimizer steps"},
    {EXP "TrainSpec.batch_size", 1, kLen, false, false, "sequences per step"},
    {EXP "TrainSpec.lr", 0, 1, true, true, "peak learning rate"},
    {EXP "TrainSpec.warmup_steps", 0, kCount, false, false, "linear warmup steps"},
    {EXP "TrainSpec.final_lr_fraction", 0, 1, false, false, "final lr / peak lr"},
    {EXP "TrainSpec.weight_decay", 0, 100, false, false, "AdamW decoupled weight decay"},
    {EXP "TrainSpec.max_grad_norm", 0, 1e6, false, false, "global gradient-norm clip (0 = off)"},
    {EXP "TrainSpec.beta1", 0, 1, false, true, "AdamW β1"},
    {EXP "TrainSpec.beta2", 0, 1, false, true, "AdamW β2"},
    {EXP "TrainSpec.eps", 0, 1, true, false, "AdamW ε"},
    {EXP "TrainSpec.eval_every", 1, kCount, false, false, "steps between evaluations"},
    {EXP "TrainSpec.checkpoint_every", 1, kCount, false, false, "steps between checkpoints"},
    {EXP "TrainSpec.early_stop_accuracy", 0, 1, false, false, "exact accuracy that stops a run (0 = never)"},
    {EXP "TrainSpec.log_every", 1, kCount, false, false, "steps between log lines"},
    {EXP "EvalSpec.lengths", 1, kLen, false, false, "evaluation string lengths (distinct)"},
    {EXP "EvalSpec.batch_size", 1, kLen, false, false, "sequences per evaluation batch"},
    {EXP "EvalSpec.num_batches", 1, 1e6, false, false, "batches per evaluation during training"},
    {EXP "EvalSpec.final_batches", 1, 1e6, false, false, "batches of the final evaluation"},
    {EXP "EvalSpec.map_length", 0, 4096, false, false,
     "attention-map example length (0 = the first eval length; maps are L x L "
     "per layer)"},
    {EXP "Sweep.select_length", 0, kLen, false, false, "length that picks the best lr (0 = first)"},
    {EXP "Experiment.seeds", 0, kU64, false, false, "any 64-bit seed (distinct)"},
    {MOD "Mamba1Spec.d_state", 1, 4096, false, false, "N"},
    {MOD "Mamba1Spec.d_conv", 1, 1024, false, false, "K"},
    {MOD "Mamba1Spec.expand", 1, 64, false, false, "E / D"},
    {MOD "Mamba1Spec.dt_rank", 0, kWidth, false, false, "R (0 = ceil(D / 16))"},
    {MOD "Mamba1Spec.dt_min", 0, 100, true, false, "smallest initial Δ (<= dt_max)"},
    {MOD "Mamba1Spec.dt_max", 0, 100, true, false, "largest initial Δ"},
    {MOD "Mamba1Spec.dt_init_floor", 0, 100, false, false, "floor of the initial Δ"},
    {MOD "Mamba1Spec.dt_scale", 0, 1e3, true, false, "scale of the Δ projection init"},
    {MOD "Mamba1Spec.a_log_scale", -1e3, 1e3, false, false, "A = -exp(a_log_scale A_log)"},
    {MOD "Mamba1Spec.scan_chunk", 1, kLen, false, false, "backward recomputation chunk"},
    {MOD "Mamba2Spec.d_state", 1, 4096, false, false, "N"},
    {MOD "Mamba2Spec.d_conv", 1, 1024, false, false, "K"},
    {MOD "Mamba2Spec.expand", 1, 64, false, false, "E / D"},
    {MOD "Mamba2Spec.headdim", 1, kWidth, false, false, "P (divides E)"},
    {MOD "Mamba2Spec.ngroups", 1, kWidth, false, false, "G (divides the head count)"},
    {MOD "Mamba2Spec.a_init_min", 0, 1e6, true, false, "smallest initial -A (<= a_init_max)"},
    {MOD "Mamba2Spec.a_init_max", 0, 1e6, true, false, "largest initial -A"},
    {MOD "Mamba2Spec.dt_min", 0, 100, true, false, "smallest initial Δ (<= dt_max)"},
    {MOD "Mamba2Spec.dt_max", 0, 100, true, false, "largest initial Δ"},
    {MOD "Mamba2Spec.dt_init_floor", 0, 100, false, false, "floor of the initial Δ"},
    {MOD "Mamba2Spec.norm_eps", 0, 1, true, false, "gated RMSNorm ε"},
    {MOD "Mamba2Spec.chunk_size", 1, kLen, false, false, "SSD chunk length"},
    {MOD "Mamba2Spec.a_log_scale", -1e3, 1e3, false, false, "A = -exp(a_log_scale A_log)"},
    {MOD "AttentionSpec.num_heads", 1, 4096, false, false, "heads (divide d_model when head_dim is 0)"},
    {MOD "AttentionSpec.head_dim", 0, kWidth, false, false, "per-head width (0 = d_model / num_heads)"},
    {MOD "LinearAttentionSpec.num_heads", 1, 4096, false, false, "heads"},
    {MOD "LinearAttentionSpec.head_dim", 1, kWidth, false, false, "per-head width"},
    {MOD "LayerOverride.index", 0, 4096, false, false, "layer index (< the layer count)"},
    {MOD "ModelSpec.vocab_size", 0, 1 << 24, false, false, "token ids before padding (0 = the task's)"},
    {MOD "ModelSpec.d_model", 1, kWidth, false, false, "D"},
    {MOD "ModelSpec.norm_eps", 0, 1, true, false, "RMSNorm / LayerNorm ε"},
    {MOD "ModelSpec.pad_vocab_size_multiple", 1, kWidth, false, false, "vocab padded to a multiple"},
    {MOD "ModelSpec.d_intermediate", 0, kLen, false, false, "GatedMLP width (0 = no MLP)"},
    {MOD "ModelSpec.n_layer", 0, 4096, false, false, "layers (0 = as listed in layers)"},
    {MOD "ModelSpec.initializer_range", 0, 10, false, false, "std of embedding / linear init"},
    {MOD "ModelSpec.mlp_multiple_of", 1, kWidth, false, false, "d_intermediate rounded up to a multiple"},
};

#undef EXP
#undef MOD

bool IsNumeric(const FieldDescriptor* f);

// A built-in init kind's fields (`mimetic { c: 4 }`, `gamma { gamma: 1 }`) are the parameters of the
// registered transform of the kind's name (init_config.h), so their ranges are the registry's
// (mimetic/init/builtin_transforms.cc): the one table that this check, the registry's own check and
// both documents (docs/config_ranges.md, docs/init_transforms.md) read. The strings are the descriptor
// pool's and the registry's, which live as long as the process.
std::vector<FieldRange> InitKindRanges() {
  std::vector<FieldRange> out;
  const google::protobuf::OneofDescriptor* kinds = InitTransform::descriptor()->FindOneofByName("kind");
  for (int i = 0; i < kinds->field_count(); ++i) {
    const init::TransformInfo* info = init::GlobalTransformRegistry().Find(kinds->field(i)->name());
    if (info == nullptr) continue;  // `named` (checked by name) and the kinds that read a checkpoint
    const google::protobuf::Descriptor* message = kinds->field(i)->message_type();
    for (int k = 0; k < message->field_count(); ++k) {
      const FieldDescriptor* f = message->field(k);
      for (const init::ParamSpec& p : info->params) {
        if (p.name != f->name() || !IsNumeric(f)) continue;
        out.push_back({f->full_name().c_str(), p.range.min, p.range.max, p.range.min_open, p.range.max_open,
                       p.doc.c_str()});
      }
    }
  }
  return out;
}

// The registry's entries first (where experiment.proto declares those messages), then kTable.
const std::vector<FieldRange>& Table() {
  static const std::vector<FieldRange>* table = [] {
    auto* t = new std::vector<FieldRange>(InitKindRanges());
    t->insert(t->end(), std::begin(kTable), std::end(kTable));
    return t;
  }();
  return *table;
}

bool IsNumeric(const FieldDescriptor* f) {
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64:
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64:
    case FieldDescriptor::CPPTYPE_FLOAT:
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return true;
    default:
      return false;
  }
}

bool IsInteger(const FieldDescriptor* f) {
  return f->cpp_type() != FieldDescriptor::CPPTYPE_FLOAT && f->cpp_type() != FieldDescriptor::CPPTYPE_DOUBLE;
}

// Element `index` (-1: the singular field) as a double, and as the text a user wrote.
std::pair<double, std::string> ValueOf(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  const bool rep = index >= 0;
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32: {
      const int32_t v = rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
      return {v, absl::StrCat(v)};
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      const int64_t v = rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
      return {static_cast<double>(v), absl::StrCat(v)};
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      const uint32_t v = rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      return {v, absl::StrCat(v)};
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      const uint64_t v = rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
      return {static_cast<double>(v), absl::StrCat(v)};
    }
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const float v = rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
      return {v, absl::StrCat(v)};
    }
    default: {
      const double v = rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
      return {v, absl::StrCat(v)};
    }
  }
}

absl::Status CheckMessage(const Message& m, const std::string& prefix) {
  const Reflection* r = m.GetReflection();
  const google::protobuf::Descriptor* d = m.GetDescriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string path = prefix + f->name();
    if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (f->is_repeated()) {
        for (int k = 0; k < r->FieldSize(m, f); ++k) {
          RETURN_IF_ERROR(CheckMessage(r->GetRepeatedMessage(m, f, k), absl::StrCat(path, "[", k, "].")));
        }
      } else if (r->HasField(m, f)) {
        RETURN_IF_ERROR(CheckMessage(r->GetMessage(m, f), path + "."));
      }
      continue;
    }
    if (!IsNumeric(f)) continue;
    const FieldRange* range = FindRange(f);
    if (range == nullptr) {
      return absl::InternalError(
          absl::StrCat("config: ", path, " (", f->full_name(), ") has no valid range in field_ranges.cc"));
    }
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int k = 0; k < n; ++k) {
      const auto [value, text] = ValueOf(m, f, f->is_repeated() ? k : -1);
      if (InRange(*range, value)) continue;
      return absl::InvalidArgumentError(
          absl::StrCat("config: ", path, f->is_repeated() ? absl::StrCat("[", k, "]") : "", " = ", text,
                       "; expected ", RangeText(*range, IsInteger(f)), " (", range->meaning, ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<FieldRange>& FieldRanges() { return Table(); }

const FieldRange* FindRange(const FieldDescriptor* field) {
  static const std::map<std::string, const FieldRange*>* index = [] {
    auto* m = new std::map<std::string, const FieldRange*>;
    for (const FieldRange& r : Table()) (*m)[r.field] = &r;
    return m;
  }();
  auto it = index->find(field->full_name());
  return it == index->end() ? nullptr : it->second;
}

bool InRange(const FieldRange& r, double v) {
  if (!std::isfinite(v)) return false;
  const bool above_lo = r.lo_open ? v > r.lo : v >= r.lo;
  const bool below_hi = r.hi_open ? v < r.hi : v <= r.hi;
  return above_lo && below_hi;
}

std::string RangeText(const FieldRange& r, bool integer) {
  if (integer && r.hi == kU64) return "any integer in [0, 2^64)";
  auto num = [&](double v) { return integer ? absl::StrFormat("%.0f", v) : absl::StrFormat("%g", v); };
  return absl::StrCat(integer ? "an integer" : "a finite number", " in ", r.lo_open ? "(" : "[", num(r.lo),
                      ", ", num(r.hi), r.hi_open ? ")" : "]");
}

absl::Status CheckFieldRanges(const Message& message) { return CheckMessage(message, ""); }

std::string RangesMarkdown() {
  std::string out =
      "# Valid ranges of the config's numeric fields\n\n"
      "Generated from `mimetic/experiments/config/field_ranges.cc`; the fields of the built-in init kinds\n"
      "(`MimeticInit`, `GammaInit`) take the ranges of the init registry "
      "(`mimetic/init/builtin_transforms.cc`,\n"
      "[init_transforms.md](init_transforms.md)), which checks them too. `field_ranges_test` keeps this "
      "file equal to\n"
      "the table; regenerate with `tools/bazel run //mimetic/experiments:print_ranges > "
      "docs/config_ranges.md`.\n"
      "Every value is checked before a run starts; NaN and infinities are never valid. Relations between\n"
      "fields (e.g. `dt_min <= dt_max`, `headdim` dividing the width, an eval length the task accepts)\n"
      "and whether the sizes fit in memory are checked right after.\n\n"
      "| field | valid | meaning |\n|---|---|---|\n";
  for (const FieldRange& r : Table()) {
    const std::string name = r.field;
    const std::string short_name = name.substr(name.find('.', name.find('.') + 1) + 1);
    const google::protobuf::FieldDescriptor* f =
        Experiment::descriptor()->file()->pool()->FindFieldByName(name);
    const bool integer = f == nullptr || IsInteger(f);
    absl::StrAppend(&out, "| `", short_name, "` | ", RangeText(r, integer), " | ", r.meaning, " |\n");
  }
  return out;
}

}  // namespace mimetic::experiments
