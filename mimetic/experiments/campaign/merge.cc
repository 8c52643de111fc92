#include "mimetic/experiments/campaign/merge.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/core/untrusted_tree.h"
#include "mimetic/experiments/campaign/campaign_files.h"
#include "mimetic/experiments/campaign/plan.h"
#include "mimetic/experiments/campaign/readme_coverage.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/figures/figure.h"
#include "mimetic/experiments/figures/final_maps_file.h"
#include "mimetic/experiments/figures/saved_results.h"
#include "mimetic/experiments/runner/point_run.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

// A temporary folder, removed with everything in it when this goes out of scope.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Make(const std::string& what) {
    std::string pattern = (fs::temp_directory_path() / ("mimetic-" + what + ".XXXXXX")).string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("cannot make a temporary folder '", pattern, "'"));
    }
    return TempDir(pattern);
  }
  TempDir(TempDir&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  explicit TempDir(std::string p) : path_(std::move(p)) {}
  fs::path path_;
};

// The files a slice returns (slice.h); anything else in its output is not copied.
bool ReturnedFile(const std::string& name) {
  return name == "sweep.textproto" || name == "config.textproto" || name == "progress.textproto" ||
         name == "result.textproto" || name == kFinalMapsFile || name == kProvenanceFile ||
         !NewestCheckpoint({name}).empty();
}

// The archive a slice's folder holds: OUT/campaign.tgz, or its parts OUT/campaign.tgz.part00, part01, ...
// (campaign.sh splits an archive larger than one part) joined in order into
// `scratch`; "" when it holds neither.
absl::StatusOr<std::string> Archive(const fs::path& folder, const fs::path& scratch) {
  std::error_code ec;
  if (fs::is_regular_file(folder / "campaign.tgz", ec)) return (folder / "campaign.tgz").string();
  std::vector<std::string> parts;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (absl::StartsWith(name, "campaign.tgz.part") && it->is_regular_file())
      parts.push_back(it->path().string());
  }
  if (parts.empty()) return std::string();
  std::sort(parts.begin(), parts.end());
  std::string joined;
  for (const std::string& part : parts) {
    ASSIGN_OR_RETURN(std::string bytes, core::ReadTextFile(part));
    joined += bytes;
  }
  const std::string path = (scratch / "campaign.tgz").string();
  RETURN_IF_ERROR(core::WriteTextFile(path, joined));
  return path;
}

// OK when every member of the archive is a plain file or folder with a relative name without "..": tar
// would otherwise make a link (and could write through it) or write outside the folder it unpacks into,
// before the safe copy ever sees the tree.
absl::Status CheckArchiveMembers(const std::string& archive) {
  ASSIGN_OR_RETURN(core::ProgramResult listed,
                   core::RunProgram({"tar", "--numeric-owner", "-tvzf", core::AbsolutePath(archive)}));
  if (listed.exit_code != 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot read '", archive, "': ", listed.output));
  }
  for (absl::string_view line : absl::StrSplit(listed.output, '\n', absl::SkipEmpty())) {
    // "-rw-r--r-- 0/0 123 2026-12-08 03:10 campaign/...": the name may hold spaces, so the whole line is
    // searched (no other field holds ".." or a space before "/").
    const bool plain = line[0] == '-' || line[0] == 'd';
    if (!plain || absl::StrContains(line, "..") || absl::StrContains(line, " /")) {
      return absl::InvalidArgumentError(absl::StrCat("'", archive, "' refused: its member '", line,
                                                     "' is not a plain file or folder with a relative name"));
    }
  }
  return absl::OkStatus();
}

// `returned` as a folder holding campaign/: a .tgz (given, or in the folder) is unpacked into `scratch`,
// never into the checkout; whatever the archive holds is then copied out of it by the safe routine only.
absl::StatusOr<fs::path> Unpacked(const std::string& returned, const fs::path& scratch) {
  std::string archive = returned;
  if (!absl::EndsWith(returned, ".tgz") && !absl::EndsWith(returned, ".tar.gz")) {
    std::error_code ec;
    if (fs::is_directory(fs::symlink_status(fs::path(returned) / "campaign", ec))) return fs::path(returned);
    ASSIGN_OR_RETURN(archive, Archive(returned, scratch));
    if (archive.empty()) {
      return absl::NotFoundError(
          absl::StrCat("'", returned,
                       "' holds no campaign/ folder, campaign.tgz or campaign.tgz.part* "
                       "(what tools/gpu/campaign.sh writes)"));
    }
  }
  RETURN_IF_ERROR(CheckArchiveMembers(archive));
  const fs::path into = scratch / "unpacked";
  RETURN_IF_ERROR(core::MakeDirs(into.string()));
  ASSIGN_OR_RETURN(core::ProgramResult r,
                   core::RunProgram({"tar", "--no-same-owner", "--no-same-permissions", "-xzf",
                                     core::AbsolutePath(archive), "-C", into.string()}));
  if (r.exit_code != 0) {
    return absl::InvalidArgumentError(absl::StrCat("cannot unpack '", archive, "': ", r.output));
  }
  return into;
}

// Whether `p` exists, never throwing (an unreadable folder is "no").
bool Exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// The folders in `dir` (the staging copy, made by this process), sorted; a file there is refused: a slice
// returns campaign/<figure>/<preset>/ and nothing beside them. An absent `dir` holds none.
absl::StatusOr<std::vector<std::string>> SubDirs(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory(ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat("returned '", it->path().filename().string(),
                       "' is a file where campaign/<figure>/<preset>/ folders are"));
    }
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The point experiment's trained state less its device (CPU and CUDA train the same function; the
// device is where it ran, in the provenance).
Experiment Trained(const Experiment& e) {
  Experiment t = TrainedState(e);
  t.clear_device();
  return t;
}

// One returned figure and preset, checked.
struct Returned {
  const FigureDef* def = nullptr;
  std::string preset;
  Experiment experiment;
  fs::path dir;  // in the staging copy
  std::vector<const GridPoint*> finished, in_flight;
  std::vector<GridPoint> grid;
};

// Every check of one returned point (merge.h lists them); errors name the point and both values.
absl::Status CheckPoint(const Returned& r, const GridPoint& p, const std::string& digest) {
  const fs::path dir = r.dir / p.dir;
  const std::string name = absl::StrCat(r.def->id, " --preset=", r.preset, " ", p.dir);
  ASSIGN_OR_RETURN(Experiment want, PointExperiment(r.experiment, p));
  absl::StatusOr<std::string> text = core::ReadTextFile((dir / "config.textproto").string());
  Experiment got;
  if (!text.ok() || !MergeConfigText(*text, &got).ok()) {
    return absl::DataLossError(
        absl::StrCat(name, ": no readable config.textproto; expected the point's config"));
  }
  if (const std::string d = FirstDifference(Trained(want), Trained(got)); !d.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " was trained from another config than the checkout's preset (first difference, ",
                     "checkout -> returned: ", d, ")"));
  }
  absl::StatusOr<PointProvenance> made = ReadProvenance(dir.string());
  if (!made.ok()) return absl::DataLossError(absl::StrCat(name, ": ", made.status().message()));
  if (made->model_digest() != digest) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " was trained with other model code: its provenance says model digest '",
                     made->model_digest(), "' (commit ", made->commit(), "), the checkout's is '", digest,
                     "' (tools/gpu/model_digest.sh); train it again with this checkout's bundle"));
  }
  if (Exists(dir / "result.textproto")) {
    absl::Status ok = ReadPointResult(dir.string(), want).status();
    if (!ok.ok()) return absl::Status(ok.code(), absl::StrCat(name, ": ", ok.message()));
  }
  return absl::OkStatus();
}

// The returned figure at <staging>/<figure>/<preset>, every point checked.
absl::StatusOr<Returned> CheckFigure(const fs::path& dir, const std::string& figure,
                                     const std::string& preset, const MergeOptions& o) {
  Returned r;
  ASSIGN_OR_RETURN(r.def, FindFigure(figure));
  r.preset = preset;
  r.dir = dir;
  ASSIGN_OR_RETURN(r.experiment, LoadPreset(o.preset_root, figure, preset, {}));
  ASSIGN_OR_RETURN(r.grid, ExpandGrid(r.experiment));
  std::map<std::string, const GridPoint*> by_dir;
  for (const GridPoint& p : r.grid) by_dir[p.dir] = &p;
  ASSIGN_OR_RETURN(std::vector<std::string> files, ListFiles(dir.string(), ReturnedFile));
  std::set<std::string> points;
  for (const std::string& f : files) {
    if (!PointDirOf(f).empty()) points.insert(PointDirOf(f));
  }
  for (const std::string& p : points) {
    auto it = by_dir.find(p);
    if (it == by_dir.end()) {
      return absl::FailedPreconditionError(absl::StrCat(figure, " --preset=", preset, ": returned '", p,
                                                        "' is not a grid point of the checkout's preset"));
    }
    RETURN_IF_ERROR(CheckPoint(r, *it->second, o.model_digest));
    (Exists(dir / p / "result.textproto") ? r.finished : r.in_flight).push_back(it->second);
  }
  return r;
}

absl::Status CopyFile(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  RETURN_IF_ERROR(core::MakeDirs(to.parent_path().string()));
  if (!fs::exists(from, ec)) return absl::OkStatus();
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot copy '", from.string(), "': ", ec.message()));
  return absl::OkStatus();
}

// The kept results with the returned finished points added, judged and saved again.
absl::Status SaveJudged(const Returned& r, const MergeOptions& o, const fs::path& scratch,
                        MergedFigure* out) {
  std::ostream& log = o.log != nullptr ? *o.log : std::cerr;
  Experiment e = r.experiment;
  e.set_output_dir((scratch / "runs" / r.def->id / r.preset).string());
  const fs::path run_dir = fs::path(e.output_dir()) / e.name();
  const std::string kept = ResultsPath(o.root, r.def->id, r.preset);
  RETURN_IF_ERROR(core::CheckNoLinksBelow(o.root, kept));
  if (Exists(fs::path(kept) / "sweep.textproto")) {
    RETURN_IF_ERROR(RestoreResults(kept, run_dir.string()));
  } else {
    RETURN_IF_ERROR(CopyFile(r.dir / "sweep.textproto", run_dir / "sweep.textproto"));
  }
  for (const GridPoint* p : r.finished) {
    if (Exists(run_dir / p->dir / "result.textproto")) {
      log << "campaign: " << r.def->id << " " << p->dir
          << " is kept already; the returned copy is not used\n";
      continue;
    }
    for (const char* f : {"result.textproto", kFinalMapsFile, kProvenanceFile}) {
      RETURN_IF_ERROR(CopyFile(r.dir / p->dir / f, run_dir / p->dir / f));
    }
    ++out->new_finished;
  }
  RunOptions options;
  options.aggregate_only = true;
  options.progress = &log;
  ASSIGN_OR_RETURN(ReportFigure judged, RunFigure(*r.def, r.preset, e, options));
  RunRecord record;
  record.figure = r.def->id;
  record.preset = r.preset;
  record.command = o.command;
  record.machine =
      absl::StrCat("trained by the campaign on the device each point's provenance.textproto names; ",
                   "judged on ", MachineLine());
  record.finished = absl::Now();
  record.aggregate_only = true;
  record.points = CountFinishedPoints(run_dir.string());
  record.note = absl::StrCat("merged from a campaign slice (", out->new_finished, " new points)");
  RETURN_IF_ERROR(SaveResults(run_dir.string(), kept, RunMarkdown(record)));
  out->kept = record.points;
  out->tallies = TalliesLine(judged.claims);
  return absl::OkStatus();
}

// The returned in-flight points replace the checkout's; none left removes the folder.
absl::Status ReplaceInflight(const Returned& r, const MergeOptions& o, MergedFigure* out) {
  const fs::path dest = InflightPath(o.root, r.def->id, r.preset);
  RETURN_IF_ERROR(core::CheckNoLinksBelow(o.root, dest.string()));
  std::set<std::string> chosen = {"sweep.textproto"};
  ASSIGN_OR_RETURN(std::vector<std::string> files, ListFiles(r.dir.string(), ReturnedFile));
  std::set<std::string> in_flight;
  for (const GridPoint* p : r.in_flight) in_flight.insert(p->dir);
  for (const std::string& f : files) {
    if (in_flight.count(PointDirOf(f)) > 0) chosen.insert(f);
  }
  out->in_flight = static_cast<int>(in_flight.size());
  std::error_code ec;
  const fs::path staging = dest.string() + ".merging";
  fs::remove_all(staging, ec);
  if (!in_flight.empty()) {
    RETURN_IF_ERROR(core::MakeDirs(dest.parent_path().string()));
    RETURN_IF_ERROR(CopyChosenFiles(r.dir.string(), staging.string(), chosen).status());
  }
  fs::remove_all(dest, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot replace '", dest.string(), "': ", ec.message()));
  if (!in_flight.empty()) fs::rename(staging, dest, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot rename '", staging.string(), "': ", ec.message()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<MergedFigure>> MergeCampaign(const std::string& returned, const MergeOptions& o) {
  ASSIGN_OR_RETURN(TempDir scratch, TempDir::Make("merge"));
  ASSIGN_OR_RETURN(fs::path unpacked, Unpacked(returned, scratch.path()));
  // Only plain files and folders, only the names a slice returns: one safe copy before anything is read.
  const fs::path staging = scratch.path() / "returned";
  core::UntrustedTreeFilter filter;
  filter.keep_file = [](const core::TreeEntry& e) { return ReturnedFile(e.name()); };
  filter.enter_dir = [](const core::TreeEntry&) { return true; };
  absl::StatusOr<std::vector<std::string>> copied =
      core::CopyUntrustedTree((unpacked / "campaign").string(), staging.string(), filter);
  if (!copied.ok()) {
    return absl::Status(copied.status().code(),
                        absl::StrCat("'", returned, "' refused: ", copied.status().message()));
  }
  // Every figure is checked before the checkout changes: one refused point refuses the merge.
  std::vector<Returned> figures;
  ASSIGN_OR_RETURN(std::vector<std::string> figure_dirs, SubDirs(staging));
  for (const std::string& figure : figure_dirs) {
    ASSIGN_OR_RETURN(std::vector<std::string> presets, SubDirs(staging / figure));
    for (const std::string& preset : presets) {
      ASSIGN_OR_RETURN(Returned r, CheckFigure(staging / figure / preset, figure, preset, o));
      figures.push_back(std::move(r));
    }
  }
  if (figures.empty()) return absl::NotFoundError(absl::StrCat("'", returned, "' holds no returned figure"));
  std::vector<MergedFigure> merged;
  for (const Returned& r : figures) {
    MergedFigure m;
    m.figure = r.def->id;
    m.preset = r.preset;
    m.grid = static_cast<int>(r.grid.size());
    if (!r.finished.empty()) {
      RETURN_IF_ERROR(SaveJudged(r, o, scratch.path(), &m));
    } else {  // only points in flight: the kept results and their verdicts stay as they are
      m.kept = CountFinishedPoints(ResultsPath(o.root, r.def->id, r.preset));
      m.tallies = "no new finished point: the kept results are unchanged";
    }
    RETURN_IF_ERROR(ReplaceInflight(r, o, &m));
    merged.push_back(m);
  }
  ASSIGN_OR_RETURN(CampaignPlan plan, LoadPlan((fs::path(o.root) / kPlanPath).string()));
  RETURN_IF_ERROR(WriteReadmeCoverage(o.root, o.preset_root, plan));
  return merged;
}

}  // namespace mimetic::experiments
