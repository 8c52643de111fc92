#include "mimetic/train/checkpoint.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/init/safetensors.h"

namespace mimetic::train {
namespace {

using core::ParamTree;
using core::Tensor;

constexpr char kFormat[] = "mimetic-checkpoint-1";
constexpr char kFormatKey[] = "format";
constexpr char kStepKey[] = "step";
constexpr char kDataKeyKey[] = "data_key";
// The digest of checkpoints written before issue 51: FNV-1a-64 over the per-tensor FNV-1a-64 hashes of the
// tensors' bytes in file order, blind to names, shapes and metadata. Such files still load (see the header).
constexpr char kLegacyDigestKey[] = "content_fnv1a64";
constexpr char kMomentPrefix[] = "opt/";
constexpr char kFirstMoment[] = "opt/m/";
constexpr char kSecondMoment[] = "opt/v/";
constexpr char kPrefix[] = "step_";
constexpr char kSuffix[] = ".safetensors";

using core::ErrnoError;
using core::SyncDir;

std::string Join(const std::string& dir, const std::string& name) {
  return absl::EndsWith(dir, "/") ? absl::StrCat(dir, name) : absl::StrCat(dir, "/", name);
}

uint64_t TensorBytesHash(const Tensor& host) {
  const char* bytes = host.bytes() > 0 ? static_cast<const char*>(host.storage()->data()) : "";
  return core::Fnv1a64(std::string_view(bytes, host.bytes()));
}

void AppendU64(std::string* out, uint64_t value) {
  for (int b = 0; b < 8; ++b) out->push_back(static_cast<char>(value >> (8 * b)));
}

// Length-prefixed, so that no two different checkpoints serialise to the same record.
void AppendField(std::string* out, std::string_view text) {
  AppendU64(out, text.size());
  out->append(text);
}

uint64_t LegacyDigest(const std::vector<Tensor>& host_leaves) {
  std::string hashes;
  hashes.reserve(8 * host_leaves.size());
  for (const Tensor& t : host_leaves) AppendU64(&hashes, TensorBytesHash(t));
  return core::Fnv1a64(hashes);
}

std::string ShapeOf(const Tensor& t) {
  return absl::StrCat(core::DTypeName(t.dtype()), core::ShapeString(t.shape()));
}

// Parses "step_<digits>.safetensors"; false for anything else.
bool ParseFileName(const std::string& name, int64_t* step) {
  if (!absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, kSuffix)) return false;
  const std::string digits =
      name.substr(sizeof(kPrefix) - 1, name.size() - (sizeof(kPrefix) - 1) - (sizeof(kSuffix) - 1));
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), absl::ascii_isdigit)) return false;
  return absl::SimpleAtoi(digits, step);
}

absl::Status Damaged(const std::string& path, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("checkpoint '", path, "' is damaged: ", what));
}

// Checks the digest of a file read whole (`metadata` still holding every entry but "format") and removes it
// from `metadata`. The full digest must match; a file from before it (only the legacy digest) is checked
// for its tensor bytes; a file with neither is refused, since every checkpoint was written with one.
absl::Status CheckDigest(const std::string& path, const ParamTree& file,
                         std::map<std::string, std::string>* metadata) {
  auto full = metadata->find(kCheckpointDigestKey);
  auto legacy = metadata->find(kLegacyDigestKey);
  if (full == metadata->end() && legacy == metadata->end()) {
    return Damaged(path, absl::StrCat("metadata has no \"", kCheckpointDigestKey,
                                      "\" (every checkpoint is saved with one; without it nothing shows that "
                                      "the tensors and metadata are what was saved)"));
  }
  std::map<std::string, std::string> covered = *metadata;
  covered[kFormatKey] = kFormat;  // read (and checked) before this
  std::string actual, saved;
  if (full != metadata->end()) {
    actual = CheckpointDigest(file, covered);
    saved = full->second;
  } else {
    actual = absl::StrFormat("%016x", LegacyDigest({file.Leaves().begin(), file.Leaves().end()}));
    saved = legacy->second;
  }
  if (actual != saved) {
    return Damaged(path, absl::StrCat("checksum ", actual, " does not match the saved ", saved,
                                      " (tensor names, shapes, bytes or metadata changed after writing)"));
  }
  if (full != metadata->end()) metadata->erase(full);
  if (legacy != metadata->end()) metadata->erase(legacy);
  return absl::OkStatus();
}

}  // namespace

std::string CheckpointDigest(const ParamTree& tensors, const std::map<std::string, std::string>& metadata) {
  std::string record;
  uint64_t entries = 0;
  for (const auto& [key, value] : metadata) entries += key != kCheckpointDigestKey && key != kLegacyDigestKey;
  AppendU64(&record, entries);
  for (const auto& [key, value] : metadata) {
    if (key == kCheckpointDigestKey || key == kLegacyDigestKey) continue;
    AppendField(&record, key);
    AppendField(&record, value);
  }
  // By name, not file order: what a tensor is called is what a resume uses it as, so two same-shape
  // regions swapped in the header change the digest.
  std::vector<size_t> order(tensors.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return tensors.Paths()[a] < tensors.Paths()[b]; });
  AppendU64(&record, tensors.size());
  for (const size_t i : order) {
    const Tensor& t = tensors.Leaves()[i];
    AppendField(&record, tensors.Paths()[i]);
    AppendField(&record, core::DTypeName(t.dtype()));
    AppendU64(&record, t.shape().size());
    for (const int64_t d : t.shape()) AppendU64(&record, static_cast<uint64_t>(d));
    AppendU64(&record, t.ok() ? TensorBytesHash(t) : 0);
  }
  return absl::StrFormat("%016x", core::Fnv1a64(record));
}

std::string CheckpointFileName(int64_t step) { return absl::StrFormat("%s%08d%s", kPrefix, step, kSuffix); }

absl::Status SaveCheckpoint(const std::string& dir, const TrainState& state, core::Key data_key,
                            const std::map<std::string, std::string>& extra_metadata, int keep_last) {
  if (state.step < 0)
    return absl::InvalidArgumentError(absl::StrCat("checkpoint step must be >= 0, got ", state.step));
  if (keep_last < 0)
    return absl::InvalidArgumentError(absl::StrCat("keep_last must be >= 0, got ", keep_last));
  for (const std::string& path : state.params.Paths()) {
    if (absl::StartsWith(path, kMomentPrefix)) {
      return absl::InvalidArgumentError(absl::StrCat("parameter path '", path, "' starts with '",
                                                     kMomentPrefix,
                                                     "', which checkpoints reserve for optimizer moments"));
    }
  }
  if (absl::Status s = state.params.CheckSameStructure(state.m); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("first moments do not match the parameters: ", s.message()));
  }
  if (absl::Status s = state.params.CheckSameStructure(state.v); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("second moments do not match the parameters: ", s.message()));
  }
  for (const char* reserved : {kFormatKey, kStepKey, kDataKeyKey, kCheckpointDigestKey, kLegacyDigestKey}) {
    if (extra_metadata.count(reserved) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("extra checkpoint metadata may not use the reserved key \"", reserved, "\""));
    }
  }

  // One tree: params, then opt/m/*, then opt/v/*, all on the host (hashed, then written as they are).
  std::vector<std::pair<std::string, Tensor>> pairs;
  pairs.reserve(3 * state.params.size());
  auto add = [&](const std::string& prefix, const ParamTree& tree) -> absl::Status {
    for (size_t i = 0; i < tree.size(); ++i) {
      const std::string name = absl::StrCat(prefix, tree.Paths()[i]);
      if (!tree.Leaves()[i].ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "checkpoint leaf '", name, "' holds an error: ", tree.Leaves()[i].status().message()));
      }
      ASSIGN_OR_RETURN(Tensor host, tree.Leaves()[i].ToDevice(core::Device::kCpu));
      pairs.emplace_back(name, std::move(host));
    }
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(add("", state.params));
  RETURN_IF_ERROR(add(kFirstMoment, state.m));
  RETURN_IF_ERROR(add(kSecondMoment, state.v));
  ASSIGN_OR_RETURN(ParamTree all, ParamTree::FromPairs(std::move(pairs)));

  std::map<std::string, std::string> metadata = extra_metadata;
  metadata[kFormatKey] = kFormat;
  metadata[kStepKey] = absl::StrCat(state.step);
  metadata[kDataKeyKey] = absl::StrCat(data_key.words()[0], ",", data_key.words()[1]);
  metadata[kCheckpointDigestKey] = CheckpointDigest(all, metadata);

  if (dir.empty()) return absl::InvalidArgumentError("checkpoint directory is empty");
  if (absl::Status made = core::MakeDirs(dir); !made.ok()) {
    return absl::Status(made.code(), absl::StrCat("checkpoint directory: ", made.message()));
  }
  RETURN_IF_ERROR(init::WriteSafetensors(Join(dir, CheckpointFileName(state.step)), all, metadata));
  RETURN_IF_ERROR(SyncDir(dir));

  if (keep_last > 0) {
    ASSIGN_OR_RETURN(std::vector<CheckpointInfo> existing, ListCheckpoints(dir));
    const size_t keep = static_cast<size_t>(keep_last);
    for (size_t i = 0; i + keep < existing.size(); ++i) {
      if (::unlink(existing[i].path.c_str()) != 0 && errno != ENOENT) {
        return ErrnoError(errno, absl::StrCat("deleting old checkpoint '", existing[i].path, "'"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CheckpointInfo>> ListCheckpoints(const std::string& dir) {
  std::vector<CheckpointInfo> found;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return found;
    return ErrnoError(errno, absl::StrCat("listing checkpoint directory '", dir, "'"));
  }
  while (struct dirent* entry = ::readdir(d)) {
    int64_t step = 0;
    if (ParseFileName(entry->d_name, &step)) found.push_back({step, Join(dir, entry->d_name)});
  }
  ::closedir(d);
  // Ties (step_1 and step_00000001) resolve by name so the order never depends on readdir.
  std::sort(found.begin(), found.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) {
    return std::tie(a.step, a.path) < std::tie(b.step, b.path);
  });
  return found;
}

absl::StatusOr<LoadedCheckpoint> LoadCheckpoint(const std::string& path, const ParamTree& like) {
  std::map<std::string, std::string> metadata;
  absl::StatusOr<ParamTree> read = init::ReadSafetensors(path, &metadata);
  if (!read.ok()) {
    if (absl::IsNotFound(read.status()) || absl::IsPermissionDenied(read.status())) return read.status();
    return Damaged(path, read.status().message());
  }
  const ParamTree& file = *read;

  // Metadata first: a file without it is not a mimetic checkpoint (or lost its header).
  auto get = [&](const char* key) -> absl::StatusOr<std::string> {
    auto it = metadata.find(key);
    if (it == metadata.end()) return Damaged(path, absl::StrCat("metadata has no \"", key, "\""));
    std::string value = it->second;
    metadata.erase(it);
    return value;
  };
  ASSIGN_OR_RETURN(std::string format, get(kFormatKey));
  if (format != kFormat) {
    return absl::InvalidArgumentError(
        absl::StrCat("checkpoint '", path, "': format \"", format, "\", expected \"", kFormat, "\""));
  }
  RETURN_IF_ERROR(CheckDigest(path, file, &metadata));
  LoadedCheckpoint out;
  out.path = path;
  ASSIGN_OR_RETURN(std::string step_text, get(kStepKey));
  if (!absl::SimpleAtoi(step_text, &out.state.step) || out.state.step < 0) {
    return Damaged(path, absl::StrCat("metadata step \"", step_text, "\" is not a step number"));
  }
  int64_t name_step = 0;
  const std::string base = path.substr(path.find_last_of('/') + 1);
  if (ParseFileName(base, &name_step) && name_step != out.state.step) {
    return Damaged(path,
                   absl::StrCat("file name says step ", name_step, " but metadata says ", out.state.step));
  }
  ASSIGN_OR_RETURN(std::string key_text, get(kDataKeyKey));
  std::vector<std::string> words = absl::StrSplit(key_text, ',');
  uint32_t w0 = 0, w1 = 0;
  if (words.size() != 2 || !absl::SimpleAtoi(words[0], &w0) || !absl::SimpleAtoi(words[1], &w1)) {
    return Damaged(path, absl::StrCat("metadata data_key \"", key_text, "\" is not two words \"w0,w1\""));
  }
  out.data_key = core::Key::FromWords({w0, w1});
  out.metadata = std::move(metadata);

  // Structure: exactly like's paths, three times, with like's shapes and dtypes.
  auto take = [&](const std::string& prefix, ParamTree* dst) -> absl::Status {
    std::vector<std::pair<std::string, Tensor>> pairs;
    pairs.reserve(like.size());
    for (size_t i = 0; i < like.size(); ++i) {
      const std::string& p = like.Paths()[i];
      const std::string name = absl::StrCat(prefix, p);
      const Tensor& want = like.Leaves()[i];
      absl::StatusOr<Tensor> got = file.Get(name);
      if (!got.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("checkpoint '", path, "' has no tensor '", name,
                                                       "' (expected ", ShapeOf(want), ")"));
      }
      if (got->shape() != want.shape() || got->dtype() != want.dtype()) {
        return absl::InvalidArgumentError(absl::StrCat("checkpoint '", path, "': tensor '", name, "' is ",
                                                       ShapeOf(*got), ", expected ", ShapeOf(want)));
      }
      pairs.emplace_back(p, *got);
    }
    ASSIGN_OR_RETURN(*dst, ParamTree::FromPairs(std::move(pairs)));
    return absl::OkStatus();
  };
  // A run never saves a non-finite state (train_step.h CheckFinite), so one in a file is damage; loaded,
  // it would only be reported as a divergence of the resumed run.
  ASSIGN_OR_RETURN(std::optional<core::NonFiniteLeaf> bad, core::FindNonFinite(file));
  if (bad.has_value()) {
    return Damaged(path, absl::StrCat("tensor '", bad->path, "' holds ", bad->count, " of ", bad->numel,
                                      " values that are NaN or infinite"));
  }
  RETURN_IF_ERROR(take("", &out.state.params));
  RETURN_IF_ERROR(take(kFirstMoment, &out.state.m));
  RETURN_IF_ERROR(take(kSecondMoment, &out.state.v));
  if (file.size() != 3 * like.size()) {
    for (const std::string& name : file.Paths()) {
      absl::string_view p = name;
      if (absl::StartsWith(p, kFirstMoment))
        p.remove_prefix(sizeof(kFirstMoment) - 1);
      else if (absl::StartsWith(p, kSecondMoment))
        p.remove_prefix(sizeof(kSecondMoment) - 1);
      if (!like.Contains(p)) {
        return absl::InvalidArgumentError(absl::StrCat("checkpoint '", path, "' has tensor '", name, "' of ",
                                                       ShapeOf(*file.Get(name)),
                                                       ", which the model does not have"));
      }
    }
  }
  return out;
}

absl::StatusOr<LoadedCheckpoint> LoadLatestCheckpoint(const std::string& dir, const ParamTree& like,
                                                      const LoadCheckpointOptions& options) {
  ASSIGN_OR_RETURN(std::vector<CheckpointInfo> found, ListCheckpoints(dir));
  std::vector<std::string> skipped;
  bool damaged = false;  // a damaged file was skipped (not only names that lead nowhere)
  for (auto it = found.rbegin(); it != found.rend(); ++it) {
    absl::StatusOr<LoadedCheckpoint> loaded = LoadCheckpoint(it->path, like);
    if (loaded.ok()) {
      loaded->skipped = std::move(skipped);
      return loaded;
    }
    // A name that leads nowhere (a dangling symlink, a file deleted since the listing) is no
    // checkpoint: the older ones are still good, and starting over from step 0 would lose them.
    if (absl::IsNotFound(loaded.status())) {
      skipped.push_back(absl::StrCat(it->path, ": ", loaded.status().message()));
      continue;
    }
    if (!absl::IsDataLoss(loaded.status())) return loaded.status();
    if (!options.fall_back_on_corrupt) {
      // Name an older checkpoint to resume from only after checking that it reads.
      std::string advice = "; no older checkpoint reads either";
      for (auto older = std::next(it); older != found.rend(); ++older) {
        if (LoadCheckpoint(older->path, like).ok()) {
          advice = absl::StrCat("; the newest older checkpoint that reads is '", older->path,
                                "' (move the damaged file away to resume from it)");
          break;
        }
      }
      return absl::DataLossError(absl::StrCat(loaded.status().message(), advice));
    }
    damaged = true;
    skipped.push_back(absl::StrCat(it->path, ": ", loaded.status().message()));
  }
  if (!damaged) {
    return absl::NotFoundError(absl::StrCat("no checkpoints (step_*.safetensors) in '", dir, "'",
                                            skipped.empty() ? "" : ": " + absl::StrJoin(skipped, "; ")));
  }
  return absl::DataLossError(
      absl::StrCat("every checkpoint in '", dir, "' is damaged: ", absl::StrJoin(skipped, "; ")));
}

}  // namespace mimetic::train
