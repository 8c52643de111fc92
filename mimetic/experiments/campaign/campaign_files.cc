#include "mimetic/experiments/campaign/campaign_files.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/text_format.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/core/untrusted_tree.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

// A checkpoint's name as the trainer writes it (train/checkpoint.cc): step_ and eight digits.
bool IsCheckpointName(const std::string& name) {
  if (!absl::StartsWith(name, "step_") || !absl::EndsWith(name, ".safetensors")) return false;
  const std::string digits = name.substr(5, name.size() - 5 - 12);
  return !digits.empty() && digits.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

std::string InflightPath(const std::string& root, const std::string& figure, const std::string& preset) {
  return (fs::path(root) / "mimetic/experiments/campaign/inflight" / (figure + "_" + preset)).string();
}

absl::StatusOr<PointProvenance> ReadProvenance(const std::string& point_dir) {
  const std::string path = (fs::path(point_dir) / kProvenanceFile).string();
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(path, ec))) {
    return absl::NotFoundError(absl::StrCat("no ", kProvenanceFile, " in '", point_dir, "'"));
  }
  ASSIGN_OR_RETURN(std::string text, core::ReadTextFile(path));
  PointProvenance p;
  if (!google::protobuf::TextFormat::ParseFromString(text, &p)) {
    return absl::DataLossError(absl::StrCat("'", path, "' is not a PointProvenance (campaign.proto)"));
  }
  return p;
}

absl::Status WriteProvenance(const std::string& point_dir, const PointProvenance& p) {
  std::string text;
  google::protobuf::TextFormat::PrintToString(p, &text);
  return core::WriteTextFile((fs::path(point_dir) / kProvenanceFile).string(), text);
}

std::string PointDirOf(const std::string& rel) {
  std::string dir = core::DirName(rel);
  if (core::BaseName(dir) == "checkpoints") dir = core::DirName(dir);
  return dir == "." || dir.empty() ? "" : dir;
}

std::string NewestCheckpoint(const std::vector<std::string>& names) {
  std::string newest;
  for (const std::string& n : names) {
    if (IsCheckpointName(n) && n > newest) newest = n;
  }
  return newest;
}

absl::StatusOr<std::vector<std::string>> CopyChosenFiles(const std::string& from, const std::string& to,
                                                         const std::set<std::string>& rel) {
  std::set<std::string> dirs;  // every folder above a chosen file
  for (const std::string& r : rel) {
    for (size_t slash = r.find('/'); slash != std::string::npos; slash = r.find('/', slash + 1)) {
      dirs.insert(r.substr(0, slash));
    }
  }
  core::UntrustedTreeFilter f;
  f.keep_file = [&](const core::TreeEntry& e) { return rel.count(e.rel()) > 0; };
  f.enter_dir = [&](const core::TreeEntry& e) { return dirs.count(e.rel()) > 0; };
  return core::CopyUntrustedTree(from, to, f);
}

absl::StatusOr<std::vector<std::string>> ListFiles(const std::string& root,
                                                   const std::function<bool(const std::string&)>& keep) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(root, ec))) return std::vector<std::string>{};
  core::UntrustedTreeFilter f;
  f.keep_file = [&](const core::TreeEntry& e) { return keep(e.name()); };
  f.enter_dir = [](const core::TreeEntry& e) { return e.name() != "tb" && e.name() != "plots"; };
  return core::ListUntrustedTree(root, f);
}

}  // namespace mimetic::experiments
