#include "mimetic/init/checkpoint_names.h"

#include <cstring>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/status.h"
#include "mimetic/init/safetensors.h"

namespace mimetic::init {
namespace {

using core::DType;
using core::ParamTree;
using core::Tensor;

constexpr char kBackbone[] = "backbone.";
constexpr char kEmbedding[] = "embedding/weight";
constexpr char kLmHead[] = "lm_head/weight";

bool IsDecimal(absl::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// A CPU tensor in `dtype`: floats convert between f32 and f64; integers must already match.
absl::StatusOr<Tensor> CastFloat(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  if (t.dtype() == DType::kI32 || dtype == DType::kI32) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected dtype ", core::DTypeName(dtype), ", found ", core::DTypeName(t.dtype())));
  }
  ASSIGN_OR_RETURN(Tensor out, Tensor::Uninitialized({t.shape(), dtype, core::Device::kCpu}));
  const int64_t n = t.numel();
  if (dtype == DType::kF32) {
    const double* in = t.data<double>();
    float* o = out.mutable_data<float>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<float>(in[i]);
  } else {
    const float* in = t.data<float>();
    double* o = out.mutable_data<double>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<double>(in[i]);
  }
  return out;
}

// The names a checkpoint may use for `path`, for error messages.
std::string NamesLookedFor(const std::string& path) {
  const std::string mamba = ToMambaSsmName(path);
  const std::string hf = ToHfTransformersName(path);
  return mamba == hf ? absl::StrCat("'", mamba, "'") : absl::StrCat("'", mamba, "' or '", hf, "'");
}

// Tied head: the file's lm_head.weight must be the embedding itself, bit for bit.
absl::Status CheckTiedHead(const std::string& head_name, const Tensor& head, const std::string& emb_name,
                           const Tensor& emb) {
  auto differ = [&](const std::string& how) {
    return absl::InvalidArgumentError(absl::StrCat(
        "checkpoint tensor '", head_name, "' differs from '", emb_name, "' (", how,
        ") but the model ties its LM head to the embedding (no lm_head/weight); load it into a model with "
        "tie_embeddings: false"));
  };
  if (head.shape() != emb.shape()) {
    return differ(
        absl::StrCat("shape ", core::ShapeString(head.shape()), " vs ", core::ShapeString(emb.shape())));
  }
  ASSIGN_OR_RETURN(Tensor head_cast, CastFloat(head, emb.dtype()));
  if (head_cast.bytes() > 0 &&
      std::memcmp(head_cast.storage()->data(), emb.storage()->data(), emb.bytes()) != 0) {
    return differ("values");
  }
  return absl::OkStatus();
}

}  // namespace

std::string ToMambaSsmName(const std::string& path) {
  const std::string dotted = absl::StrReplaceAll(path, {{"/", "."}});
  if (path == "lm_head" || absl::StartsWith(path, "lm_head/")) return dotted;
  return absl::StrCat(kBackbone, dotted);
}

std::string ToHfTransformersName(const std::string& path) {
  if (path == "embedding" || absl::StartsWith(path, "embedding/")) {
    return ToMambaSsmName(absl::StrCat("embeddings", path.substr(std::strlen("embedding"))));
  }
  return ToMambaSsmName(path);
}

absl::StatusOr<std::string> FromCheckpointName(const std::string& name) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat(
        "'", name, "' is not a mamba_ssm or HF transformers Mamba parameter name (", why,
        "); expected backbone.{embedding,embeddings,norm_f}.…, backbone.layers.{i}.… or lm_head.…"));
  };
  const bool slashed = absl::StrContains(name, '/');
  absl::string_view rest = name;
  const bool has_backbone = !slashed && absl::ConsumePrefix(&rest, kBackbone);
  std::vector<std::string> segments = absl::StrSplit(rest, slashed ? '/' : '.');
  for (const std::string& s : segments) {
    if (s.empty()) return bad("empty segment");
  }
  if (segments.size() < 2) return bad("too few segments");
  std::string& top = segments[0];
  if (top == "embeddings") top = "embedding";
  if (top == "layers") {
    if (!IsDecimal(segments[1])) return bad(absl::StrCat("layer index '", segments[1], "' is not a number"));
    if (segments.size() < 3) return bad("nothing after the layer index");
  } else if (top == "lm_head") {
    if (has_backbone) return bad("lm_head is not inside the backbone");
  } else if (top != "embedding" && top != "norm_f") {
    return bad(absl::StrCat("unknown top-level module '", top, "'"));
  }
  return absl::StrJoin(segments, "/");
}

absl::StatusOr<ParamTree> LoadCheckpointInto(const ParamTree& like, const ParamTree& loaded,
                                             std::vector<std::string>* unused) {
  // mimetic path -> index into `loaded`.
  absl::flat_hash_map<std::string, size_t> by_path;
  if (unused != nullptr) unused->clear();
  const bool tied = !like.Contains(kLmHead);
  for (size_t i = 0; i < loaded.size(); ++i) {
    const std::string& name = loaded.Paths()[i];
    absl::StatusOr<std::string> path = FromCheckpointName(name);
    if (!path.ok() || !(like.Contains(*path) || (tied && *path == kLmHead))) {
      if (unused != nullptr) unused->push_back(name);
      continue;
    }
    auto [it, inserted] = by_path.emplace(*path, i);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint has both '", loaded.Paths()[it->second],
                                                     "' and '", name, "' for '", *path, "'"));
    }
  }

  std::vector<Tensor> leaves;
  leaves.reserve(like.size());
  for (size_t i = 0; i < like.size(); ++i) {
    const std::string& path = like.Paths()[i];
    const Tensor& want = like.Leaves()[i];
    auto it = by_path.find(path);
    if (it == by_path.end()) {
      std::string hint;
      if (path == kLmHead && by_path.contains(kEmbedding)) {
        hint =
            "; the checkpoint ties its LM head to the embedding, so load it into a model with "
            "tie_embeddings: true";
      }
      return absl::NotFoundError(absl::StrCat("checkpoint has no tensor for '", path, "' (looked for ",
                                              NamesLookedFor(path), ")", hint));
    }
    const std::string& name = loaded.Paths()[it->second];
    const Tensor& found = loaded.Leaves()[it->second];
    RETURN_IF_ERROR(found.status());
    if (found.shape() != want.shape()) {
      return absl::InvalidArgumentError(absl::StrCat("checkpoint tensor '", name, "' for '", path,
                                                     "': expected shape ", core::ShapeString(want.shape()),
                                                     ", found ", core::ShapeString(found.shape())));
    }
    ASSIGN_OR_RETURN(Tensor host, found.ToDevice(core::Device::kCpu));
    absl::StatusOr<Tensor> cast = CastFloat(host, want.dtype());
    if (!cast.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("checkpoint tensor '", name, "' for '", path, "': ", cast.status().message()));
    }
    ASSIGN_OR_RETURN(Tensor placed, cast->ToDevice(want.device()));
    leaves.push_back(std::move(placed));
  }

  auto head = by_path.find(kLmHead);
  auto emb = by_path.find(kEmbedding);
  if (tied && head != by_path.end() && emb != by_path.end()) {
    ASSIGN_OR_RETURN(Tensor head_host, loaded.Leaves()[head->second].ToDevice(core::Device::kCpu));
    ASSIGN_OR_RETURN(Tensor emb_host, loaded.Leaves()[emb->second].ToDevice(core::Device::kCpu));
    RETURN_IF_ERROR(
        CheckTiedHead(loaded.Paths()[head->second], head_host, loaded.Paths()[emb->second], emb_host));
  }
  return like.WithLeaves(std::move(leaves));
}

absl::StatusOr<ParamTree> LoadMambaCheckpoint(const std::string& safetensors_path, const ParamTree& like,
                                              std::vector<std::string>* unused) {
  ASSIGN_OR_RETURN(ParamTree loaded, ReadSafetensors(safetensors_path));
  // Weights that are not finite would train to nothing and be reported as a divergence; refused here,
  // the error names the file's tensor.
  ASSIGN_OR_RETURN(std::optional<core::NonFiniteLeaf> bad, core::FindNonFinite(loaded));
  if (bad.has_value()) {
    return absl::DataLossError(absl::StrCat("loading '", safetensors_path, "': tensor '", bad->path,
                                            "' holds ", bad->count, " of ", bad->numel,
                                            " values that are NaN or infinite"));
  }
  absl::StatusOr<ParamTree> tree = LoadCheckpointInto(like, loaded, unused);
  if (!tree.ok()) {
    return absl::Status(tree.status().code(),
                        absl::StrCat("loading '", safetensors_path, "': ", tree.status().message()));
  }
  return tree;
}

absl::Status WriteMambaCheckpoint(const std::string& path, const ParamTree& tree,
                                  const std::map<std::string, std::string>& metadata) {
  ParamTree to_write = tree;
  if (!tree.Contains(kLmHead) && tree.Contains(kEmbedding)) {
    ASSIGN_OR_RETURN(Tensor emb, tree.Get(kEmbedding));
    ASSIGN_OR_RETURN(to_write, tree.With(kLmHead, emb));
  }
  SafetensorsWriteOptions options;
  options.metadata = metadata;
  options.tensor_name = [](const std::string& p) { return ToMambaSsmName(p); };
  return WriteSafetensorsWithOptions(path, to_write, options);
}

}  // namespace mimetic::init
