#include "mimetic/experiments/campaign/slice.h"

#include <filesystem>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/core/untrusted_tree.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/figures/figure.h"
#include "mimetic/experiments/figures/saved_results.h"
#include "mimetic/experiments/runner/point_filter.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

// In a run directory PrepareRunDir made: what it restored, one line each, "finished <point dir>" or
// "in_flight <point dir> <checkpoint name>", so that PackRunDir packs only what this slice made.
constexpr char kSliceMarker[] = ".campaign_slice";

// The files a point in flight keeps in the checkout (besides its newest checkpoint).
bool InflightFile(const std::string& name) {
  return name == "sweep.textproto" || name == "config.textproto" || name == "progress.textproto" ||
         name == kProvenanceFile || !NewestCheckpoint({name}).empty();
}

absl::StatusOr<Experiment> LoadSlicePreset(const SliceFigure& f) {
  absl::StatusOr<Experiment> e = LoadPreset(f.preset_root, f.figure, f.preset, {});
  if (!e.ok()) {
    return absl::Status(e.status().code(),
                        absl::StrCat(f.figure, " --preset=", f.preset, ": ", e.status().message()));
  }
  return e;
}

// Moves the in-flight points (already copied safely into `copied`) into `staging`, leaving out those that
// finished meanwhile and those trained with other model code; returns the marker lines.
absl::StatusOr<std::string> AddInflight(const SliceFigure& f, const fs::path& copied, const fs::path& staging,
                                        std::ostream& log) {
  ASSIGN_OR_RETURN(std::vector<std::string> files, ListFiles(copied.string(), InflightFile));
  std::map<std::string, std::vector<std::string>> by_point;
  for (const std::string& rel : files) by_point[PointDirOf(rel)].push_back(rel);
  std::string marker;
  std::error_code ec;
  for (const auto& [point, rels] : by_point) {
    if (!point.empty()) {
      if (fs::exists(staging / point / "result.textproto", ec)) continue;  // finished meanwhile
      absl::StatusOr<PointProvenance> p = ReadProvenance((copied / point).string());
      if (!p.ok() || p->model_digest() != f.model_digest) {
        log << "campaign: " << point << " in flight is not resumed (it starts afresh): "
            << (p.ok() ? absl::StrCat("trained with model code ", p->model_digest(), ", this slice's is ",
                                      f.model_digest)
                       : std::string(p.status().message()))
            << "\n";
        continue;
      }
    } else if (fs::exists(staging / "sweep.textproto", ec)) {
      continue;  // the kept results' sweep
    }
    std::vector<std::string> names;
    for (const std::string& rel : rels) {
      RETURN_IF_ERROR(core::MakeDirs((staging / rel).parent_path().string()));
      fs::rename(copied / rel, staging / rel, ec);
      if (ec) return absl::InternalError(absl::StrCat("cannot move '", rel, "' into place: ", ec.message()));
      names.push_back(core::BaseName(rel));
    }
    if (!point.empty()) absl::StrAppend(&marker, "in_flight ", point, " ", NewestCheckpoint(names), "\n");
  }
  return marker;
}

// The marker's lines as point dir -> "" (finished) or the checkpoint restored with it.
std::map<std::string, std::string> ReadMarker(const fs::path& run_dir) {
  std::map<std::string, std::string> restored;
  absl::StatusOr<std::string> text = core::ReadTextFile((run_dir / kSliceMarker).string());
  if (!text.ok()) return restored;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> parts = absl::StrSplit(line, ' ');
    if (parts.size() >= 2) restored[parts[1]] = parts.size() > 2 ? parts[2] : "";
  }
  return restored;
}

// The plan's first FIGURE item of this figure and preset that selects `p`.
std::string ItemOf(const CampaignPlan& plan, const SliceFigure& f, const GridPoint& p) {
  for (const CampaignItem& item : plan.items()) {
    if (item.kind() == CampaignItem::FIGURE && item.figure() == f.figure && item.preset() == f.preset &&
        SelectPoints({p}, item.points()).ok()) {
      return item.id();
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::string> PrepareRunDir(const SliceFigure& f, std::ostream& log) {
  ASSIGN_OR_RETURN(Experiment e, LoadSlicePreset(f));
  const fs::path run_dir = fs::path(f.runs) / e.name();
  std::error_code ec;
  if (fs::exists(run_dir / kSliceMarker, ec)) return run_dir.string();
  if (fs::exists(fs::symlink_status(run_dir, ec))) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", run_dir.string(), "' exists and was not made by a campaign slice; move it aside"));
  }
  const fs::path staging = run_dir.string() + ".preparing", copied = run_dir.string() + ".inflight";
  fs::remove_all(staging, ec);  // leftovers of a killed prepare; remove_all follows no link
  fs::remove_all(copied, ec);
  const std::string kept = ResultsPath(f.root, f.figure, f.preset);
  RETURN_IF_ERROR(core::CheckNoLinksBelow(f.root, kept));
  if (fs::is_regular_file(fs::path(kept) / "sweep.textproto", ec)) {
    RETURN_IF_ERROR(RestoreResults(kept, staging.string()));
  } else {
    RETURN_IF_ERROR(core::MakeDirs(staging.string()));
  }
  std::string marker;
  ASSIGN_OR_RETURN(std::vector<std::string> finished,
                   ListFiles(staging.string(), [](const std::string& n) { return n == "result.textproto"; }));
  for (const std::string& rel : finished) absl::StrAppend(&marker, "finished ", PointDirOf(rel), "\n");
  const std::string inflight = InflightPath(f.root, f.figure, f.preset);
  RETURN_IF_ERROR(core::CheckNoLinksBelow(f.root, inflight));
  if (fs::is_directory(fs::symlink_status(inflight, ec))) {
    ASSIGN_OR_RETURN(std::vector<std::string> files, ListFiles(inflight, InflightFile));
    RETURN_IF_ERROR(CopyChosenFiles(inflight, copied.string(), {files.begin(), files.end()}).status());
    ASSIGN_OR_RETURN(std::string lines, AddInflight(f, copied, staging, log));
    absl::StrAppend(&marker, lines);
    fs::remove_all(copied, ec);
  }
  RETURN_IF_ERROR(core::WriteTextFile((staging / kSliceMarker).string(), marker));
  RETURN_IF_ERROR(core::MakeDirs(run_dir.parent_path().string()));
  fs::rename(staging, run_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename '", staging.string(), "': ", ec.message()));
  log << "campaign: " << run_dir.string() << ": " << finished.size() << " finished points restored from "
      << kept << ", in flight: " << (marker.size() > 0 ? "see " + std::string(kSliceMarker) : "none") << "\n";
  return run_dir.string();
}

absl::StatusOr<Unfinished> CountUnfinished(const SliceFigure& f, const std::string& run_dir,
                                           const std::string& points) {
  ASSIGN_OR_RETURN(Experiment e, LoadSlicePreset(f));
  ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(e));
  ASSIGN_OR_RETURN(std::vector<GridPoint> selected, SelectPoints(grid, points));
  Unfinished u;
  u.selected = static_cast<int>(selected.size());
  std::error_code ec;
  for (const GridPoint& p : selected) {
    if (!fs::exists(fs::path(run_dir) / p.dir / "result.textproto", ec)) ++u.unfinished;
  }
  return u;
}

absl::StatusOr<PackCount> PackRunDir(const SliceFigure& f, const CampaignPlan& plan,
                                     const PointProvenance& made, const std::string& out,
                                     const PackLimits& limits) {
  ASSIGN_OR_RETURN(Experiment e, LoadSlicePreset(f));
  ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(e));
  const fs::path run_dir = fs::path(f.runs) / e.name();
  const std::map<std::string, std::string> restored = ReadMarker(run_dir);
  std::set<std::string> chosen = {"sweep.textproto"};
  PackCount count;
  std::error_code ec;
  for (const GridPoint& p : grid) {
    const fs::path dir = run_dir / p.dir;
    const auto was = restored.find(p.dir);
    std::vector<std::string> names;
    if (fs::exists(dir / "result.textproto", ec)) {
      if (was != restored.end() && was->second.empty()) continue;  // finished before this slice
      names = {"config.textproto", "result.textproto", "final_maps.pb", kProvenanceFile};
      ++count.finished;
    } else {
      std::vector<std::string> checkpoints;
      for (fs::directory_iterator it(dir / "checkpoints", ec), end; !ec && it != end; it.increment(ec)) {
        checkpoints.push_back(it->path().filename().string());
      }
      const std::string newest = NewestCheckpoint(checkpoints);
      if (newest.empty()) continue;
      const int64_t bytes = static_cast<int64_t>(fs::file_size(dir / "checkpoints" / newest, ec));
      if ((limits.max_checkpoint_bytes > 0 && bytes > limits.max_checkpoint_bytes) ||
          (limits.max_inflight_bytes > 0 && count.checkpoint_bytes + bytes > limits.max_inflight_bytes)) {
        count.skipped.push_back(absl::StrCat(p.dir, " (", bytes, " bytes)"));
        continue;
      }
      count.checkpoint_bytes += bytes;
      names = {"config.textproto", "progress.textproto", "checkpoints/" + newest, kProvenanceFile};
      ++count.in_flight;
      // A point restored in flight and not trained here keeps the provenance of the slice that trained it.
      if (was != restored.end() && was->second == newest) {
        for (const std::string& n : names) chosen.insert(p.dir + "/" + n);
        continue;
      }
    }
    PointProvenance provenance = made;
    provenance.set_item(ItemOf(plan, f, p));
    RETURN_IF_ERROR(WriteProvenance(dir.string(), provenance));
    for (const std::string& n : names) chosen.insert(p.dir + "/" + n);
  }
  if (count.finished + count.in_flight == 0) return count;
  const fs::path dest = fs::path(out) / f.figure / f.preset;
  RETURN_IF_ERROR(core::MakeDirs(dest.parent_path().string()));
  fs::remove_all(dest, ec);  // an earlier pack of this figure in the same output
  RETURN_IF_ERROR(CopyChosenFiles(run_dir.string(), dest.string(), chosen).status());
  return count;
}

}  // namespace mimetic::experiments
