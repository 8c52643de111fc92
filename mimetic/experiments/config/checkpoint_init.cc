#include "mimetic/experiments/config/checkpoint_init.h"

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/message_differencer.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/names.h"
#include "mimetic/init/pretrained.h"
#include "mimetic/init/transfer.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

std::string KindName(const InitTransform& t) {
  switch (t.kind_case()) {
    case InitTransform::kPretrained:
      return "pretrained";
    case InitTransform::kTransplant:
      return "transplant";
    default:
      return "transfer_from_attention";
  }
}

// "" when the specs are the same model; else what differs (protobuf's field-by-field report).
std::string SpecDifference(const models::ModelSpec& a, const models::ModelSpec& b) {
  google::protobuf::util::MessageDifferencer d;
  d.set_message_field_comparison(google::protobuf::util::MessageDifferencer::EQUIVALENT);
  std::string report;
  d.ReportDifferencesToString(&report);
  if (d.Compare(a, b)) return "";
  return report.size() > 600 ? report.substr(0, 600) + "..." : report;
}

// The target layers of a layer-wise entry: `layers`, or every layer (transplant) / every Mamba 2 layer
// (transfer_from_attention).
std::vector<int> TargetLayers(const InitTransform& t, const models::ModelSpec& spec) {
  if (!t.layers().empty()) return std::vector<int>(t.layers().begin(), t.layers().end());
  std::vector<int> out;
  for (int i = 0; i < spec.layers_size(); ++i) {
    if (t.has_transplant() || spec.layers(i).mixer_case() == models::LayerSpec::kMamba2) out.push_back(i);
  }
  return out;
}

int SourceLayer(const CheckpointInit& c, int target) {
  return c.has_source_layer() ? c.source_layer() : target;
}

// Spec-level checks of a layer-wise entry (kinds and widths), before any file is read.
absl::Status CheckLayers(const InitTransform& t, const models::ModelSpec& target,
                         const models::ModelSpec& source) {
  const CheckpointInit& c = CheckpointOf(t);
  if (target.d_model() != source.d_model()) {
    return absl::InvalidArgumentError(absl::StrCat(KindName(t), ": the checkpoint's d_model is ",
                                                   source.d_model(), " and the variant's ", target.d_model(),
                                                   "; its layers only fit a model of the same width"));
  }
  const std::vector<int> targets = TargetLayers(t, target);
  if (targets.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(KindName(t), ": no target layer (the variant's model has no Mamba 2 layer)"));
  }
  for (int layer : targets) {
    const int src = SourceLayer(c, layer);
    if (src >= source.layers_size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          KindName(t), ": target layer ", layer, " takes checkpoint layer ", src, " but the checkpoint has ",
          source.layers_size(), " layers", c.has_source_layer() ? "" : " (set source_layer)"));
    }
    const models::LayerSpec& s = source.layers(src);
    const models::LayerSpec& d = target.layers(layer);
    if (t.has_transplant() && s.mixer_case() != d.mixer_case()) {
      return absl::InvalidArgumentError(absl::StrCat("transplant: checkpoint layer ", src, " is ",
                                                     models::MixerKind(s), " but target layer ", layer,
                                                     " is ", models::MixerKind(d)));
    }
    if (t.has_transfer_from_attention() && (d.mixer_case() != models::LayerSpec::kMamba2 ||
                                            (s.mixer_case() != models::LayerSpec::kAttention &&
                                             s.mixer_case() != models::LayerSpec::kLinearAttention))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "transfer_from_attention maps an attention layer onto a Mamba 2 layer; checkpoint layer ", src,
          " is ", models::MixerKind(s), " and target layer ", layer, " is ", models::MixerKind(d)));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsCheckpointKind(const InitTransform& t) {
  return t.has_pretrained() || t.has_transplant() || t.has_transfer_from_attention();
}

const CheckpointInit& CheckpointOf(const InitTransform& t) {
  if (t.has_pretrained()) return t.pretrained();
  if (t.has_transplant()) return t.transplant();
  return t.transfer_from_attention();
}

CheckpointInit* MutableCheckpointOf(InitTransform* t) {
  if (t->has_pretrained()) return t->mutable_pretrained();
  if (t->has_transplant()) return t->mutable_transplant();
  return t->mutable_transfer_from_attention();
}

absl::StatusOr<models::ModelSpec> CheckpointSpec(const CheckpointInit& c) {
  if (c.has_name() == c.has_model()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a checkpoint needs exactly one of name (a published model: ",
        absl::StrJoin(models::PretrainedNames(), ", "), ") or model (its spec)",
        c.teacher() ? "; a teacher entry gets its model from the figure once the teacher has trained" : ""));
  }
  if (c.has_name()) return models::PretrainedSpec(c.name());
  absl::StatusOr<models::ModelSpec> spec = models::ResolveSpec(c.model());
  if (!spec.ok()) return absl::InvalidArgumentError(absl::StrCat("model: ", spec.status().message()));
  return spec;
}

std::string FetchInstructions(const std::string& name) {
  return absl::StrCat(
      "download https://huggingface.co/", name,
      "/resolve/main/pytorch_model.bin (the model's page: https://huggingface.co/", name,
      "), convert it to safetensors keeping mamba_ssm's tensor names (backbone.layers.0.mixer.A_log, ...):\n"
      "  python3 -c \"import torch, safetensors.torch as st; sd = torch.load('pytorch_model.bin', "
      "map_location='cpu'); st.save_file({k: v.contiguous().clone() for k, v in sd.items()}, "
      "'model.safetensors')\"\n"
      "(clone: lm_head.weight shares the embedding's storage, which safetensors refuses), then give its "
      "path: "
      "--pretrained=/path/model.safetensors, or path: \"...\" in the config's init entry");
}

namespace {

// The file is named and there: else what to give, and for a published model where to get it.
absl::Status CheckFilePresent(const CheckpointInit& c) {
  const std::string fetch = c.has_name() ? absl::StrCat("; ", FetchInstructions(c.name())) : "";
  if (c.path().empty()) {
    if (c.teacher()) {
      return absl::FailedPreconditionError(
          "a teacher entry's file is written by the figure that trains the teacher (experiment.teacher); run "
          "the config through its figure target");
    }
    return absl::InvalidArgumentError(
        absl::StrCat("no checkpoint file given", c.has_name() ? absl::StrCat(" for ", c.name()) : "", fetch));
  }
  std::error_code ec;
  if (!fs::is_regular_file(c.path(), ec)) {
    return absl::NotFoundError(absl::StrCat("checkpoint file '", c.path(), "' does not exist", fetch));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckCheckpointFields(const std::string& entry, const InitTransform& t) {
  const CheckpointInit& c = CheckpointOf(t);
  const std::string at = absl::StrCat(entry, ".", KindName(t), ".");
  if (c.has_name() && !models::PretrainedSpec(c.name()).ok()) {
    return Bad(at + "name", Quoted(c.name()),
               absl::StrCat("a published model: ", absl::StrJoin(models::PretrainedNames(), ", ")));
  }
  if (c.has_path()) RETURN_IF_ERROR(CheckPath(at + "path", c.path()));
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const init::Model>> LoadCheckpointCached(const CheckpointInit& c) {
  RETURN_IF_ERROR(CheckFilePresent(c));
  std::error_code ec;
  ASSIGN_OR_RETURN(models::ModelSpec spec, CheckpointSpec(c));
  const auto mtime = fs::last_write_time(c.path(), ec).time_since_epoch().count();
  const std::string key =
      absl::StrCat(c.path(), "\n", fs::file_size(c.path(), ec), "\n", mtime, "\n", spec.SerializeAsString());
  static std::mutex* mu = new std::mutex;
  static auto* cache = new std::map<std::string, std::shared_ptr<const init::Model>>;
  std::lock_guard<std::mutex> lock(*mu);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  ASSIGN_OR_RETURN(init::Model m, init::LoadPretrained(spec, c.path()));
  // One file per process is the common case: keep only the newest, so a rewritten file does not pile up.
  cache->clear();
  auto loaded = std::make_shared<const init::Model>(std::move(m));
  (*cache)[key] = loaded;
  return loaded;
}

absl::Status CheckCheckpointInit(const InitTransform& t, const models::ModelSpec& variant,
                                 const models::ModelSpec* teacher) {
  const CheckpointInit& c = CheckpointOf(t);
  models::ModelSpec source;
  if (c.teacher()) {
    if (teacher == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(KindName(t), ": teacher: true but the experiment has no teacher to train"));
    }
    if (!c.path().empty() || c.has_name() || c.has_model()) {
      return absl::InvalidArgumentError(absl::StrCat(
          KindName(t), ": a teacher entry takes its path and model from the teacher; give neither"));
    }
    source = *teacher;
  } else {
    RETURN_IF_ERROR(CheckFilePresent(c));
    ASSIGN_OR_RETURN(source, CheckpointSpec(c));
  }
  if (t.has_pretrained()) {
    if (!t.layers().empty() || c.has_source_layer()) {
      return absl::InvalidArgumentError(
          "pretrained: replaces the whole model; layers and source_layer are for transplant");
    }
    if (const std::string diff = SpecDifference(source, variant); !diff.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pretrained: the variant's model is not the checkpoint's (set the variant's model to the "
          "checkpoint's spec); differences (checkpoint, then variant):\n",
          diff));
    }
  } else {
    RETURN_IF_ERROR(CheckLayers(t, variant, source));
  }
  if (c.teacher()) return absl::OkStatus();  // the file comes once the teacher has trained
  return LoadCheckpointCached(c).status();
}

absl::StatusOr<init::Transform> MakeCheckpointTransform(const InitTransform& t) {
  const CheckpointInit c = CheckpointOf(t);
  const std::string what = absl::StrCat(KindName(t), "(", c.path(), ")");
  if (t.has_pretrained()) {
    if (!t.layers().empty())
      return absl::InvalidArgumentError("pretrained: refuses layers (it is the whole model)");
    return init::Transform(what, [c](const init::Model& m, core::Key) -> absl::StatusOr<init::Model> {
      ASSIGN_OR_RETURN(std::shared_ptr<const init::Model> loaded, LoadCheckpointCached(c));
      if (const std::string diff = SpecDifference(loaded->spec, m.spec); !diff.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("pretrained: the model is not the checkpoint's ('",
                                                       c.path(), "'); differences:\n", diff));
      }
      return *loaded;
    });
  }
  const InitTransform entry = t;
  return init::Transform(
      what, [entry, c](const init::Model& m, core::Key key) -> absl::StatusOr<init::Model> {
        ASSIGN_OR_RETURN(std::shared_ptr<const init::Model> loaded, LoadCheckpointCached(c));
        RETURN_IF_ERROR(CheckLayers(entry, m.spec, loaded->spec));
        init::Model out = m;
        for (int layer : TargetLayers(entry, m.spec)) {
          const int src = SourceLayer(c, layer);
          const init::LayerTransform lt = entry.has_transplant() ? init::Transplant(*loaded, src)
                                                                 : init::TransferFromAttention(*loaded, src);
          ASSIGN_OR_RETURN(out, lt(out, layer, core::FoldIn(key, static_cast<uint32_t>(layer))));
        }
        return out;
      });
}

absl::StatusOr<std::vector<std::string>> PretrainedPathOverrides(const Experiment& e,
                                                                 const std::string& flag) {
  std::map<std::string, std::string> by_name;  // "" = every published model
  for (absl::string_view item : absl::StrSplit(flag, ',', absl::SkipEmpty())) {
    const size_t eq = item.find('=');
    if (eq == absl::string_view::npos) {
      by_name[""] = std::string(item);
    } else {
      by_name[std::string(item.substr(0, eq))] = std::string(item.substr(eq + 1));
    }
  }
  std::vector<std::string> out;
  std::set<std::string> used;
  for (int i = 0; i < e.variants_size(); ++i) {
    for (int j = 0; j < e.variants(i).init_size(); ++j) {
      const InitTransform& t = e.variants(i).init(j);
      if (!IsCheckpointKind(t) || !CheckpointOf(t).has_name() || !CheckpointOf(t).path().empty()) continue;
      const std::string& name = CheckpointOf(t).name();
      auto it = by_name.count(name) ? by_name.find(name) : by_name.find("");
      if (it == by_name.end()) continue;
      used.insert(it->first);
      out.push_back(absl::StrCat("variants[", i, "].init[", j, "].", KindName(t), ".path=", it->second));
    }
  }
  for (const auto& [name, path] : by_name) {
    if (!name.empty() && !used.count(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pretrained: no init entry of experiment '", e.name(), "' uses ", name));
    }
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pretrained=", flag, ": experiment '", e.name(),
        "' has no init entry of a published model without a file (pretrained / transplant with name:)"));
  }
  return out;
}

}  // namespace mimetic::experiments
