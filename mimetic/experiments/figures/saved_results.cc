#include "mimetic/experiments/figures/saved_results.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/core/untrusted_tree.h"
#include "mimetic/experiments/figures/final_maps_file.h"
#include "mimetic/experiments/runner/teacher.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

// Written into a restored run directory: it may be replaced by the next restore.
constexpr char kRestoredMarker[] = ".restored_from_results";

// The run directory's own files that are kept; the first two are required. A stand-in teacher's run
// directory (teacher.h) has its final weights besides: the sweep's teacher entries read them, so the sweep
// validates (and --aggregate runs) only with the file there (Fig. 10's are 663 KB).
constexpr const char* kTopFiles[] = {"sweep.textproto", "claims.md",  "claims.json",
                                     "summary.csv",     "figure.png", kTeacherWeightsFile};

// A point's files that are kept (its checkpoints, logs and TensorBoard files are not).
// provenance.textproto: where the campaign trained the point (campaign/campaign.proto PointProvenance).
bool KeptPointFile(const std::string& name) {
  return name == "result.textproto" || name == kFinalMapsFile || name == "provenance.textproto";
}

absl::Status Error(const std::string& what, const fs::path& p, const std::error_code& ec) {
  return absl::InternalError(absl::StrCat(what, " '", p.string(), "': ", ec.message()));
}

// Where an entry of a run directory is: in the run directory itself (the root, or a run directory inside it
// such as a stand-in teacher's, teacher.h), or below its points/ folder.
enum class Place { kRun, kPoints };

// The place of the folder holding `e`, from the names above it: "points" below a run directory starts its
// points; any other folder entered from a run directory is a run directory inside it.
Place ParentPlace(const core::TreeEntry& e) {
  Place at = Place::kRun;
  for (size_t i = 0; i + 1 < e.parts.size(); ++i) {
    if (at == Place::kRun && e.parts[i] == "points") at = Place::kPoints;
  }
  return at;
}

// What a run directory keeps (kTopFiles, each point's kept files, and run directories inside it: a folder
// with a sweep.textproto), as a filter for the one safe copy (core/untrusted_tree.h): results come from
// clones and other machines, so a link, loop or device among them is refused, never followed.
core::UntrustedTreeFilter KeptFiles() {
  core::UntrustedTreeFilter f;
  f.keep_file = [](const core::TreeEntry& e) {
    if (ParentPlace(e) == Place::kPoints) return KeptPointFile(e.name());
    for (const char* top : kTopFiles) {
      if (e.name() == top) return true;
    }
    return false;
  };
  f.enter_dir = [](const core::TreeEntry& e) {
    const std::string& n = e.name();
    if (ParentPlace(e) == Place::kPoints) {
      // Checkpoints and TensorBoard folders hold nothing kept; skipping them saves reading megabytes.
      return n != "checkpoints" && n != "tb" && n != "plots";
    }
    if (n == "points") return true;
    struct stat st;  // a run directory inside this one; lstat, so a linked sweep makes none
    return ::lstat((fs::path(e.source) / "sweep.textproto").c_str(), &st) == 0 && S_ISREG(st.st_mode);
  };
  return f;
}

// Copies the kept files of `from` into `to` (which must not exist), refusing anything but plain files and
// folders where a kept file or folder is; errors say which results were refused.
absl::Status CopyKept(const fs::path& from, const fs::path& to) {
  absl::StatusOr<std::vector<std::string>> copied = core::CopyUntrustedTree(from, to, KeptFiles());
  if (!copied.ok()) {
    return absl::Status(copied.status().code(), absl::StrCat("results at '", from.string(),
                                                             "' refused: ", copied.status().message()));
  }
  return absl::OkStatus();
}

}  // namespace

std::string RunMarkdown(const RunRecord& r) {
  auto minutes = [](double s) { return absl::StrFormat("%d min %02d s", int(s) / 60, int(s) % 60); };
  std::string how;
  if (r.aggregate_only || r.trained_here == 0) {
    how = absl::StrCat("drawn and judged from ", r.points, " grid points trained earlier (--aggregate or a ",
                       "finished run); this command's wall time (", minutes(r.wall_seconds),
                       ") is not the training's");
  } else {
    how = absl::StrCat("wall time ", minutes(r.wall_seconds), "; this command trained ", r.trained_here,
                       " of ", r.points, " grid points",
                       r.trained_here < r.points ? " (the others had finished before it started)" : "");
  }
  std::string md = absl::StrCat(
      "# ", r.figure, ", ", r.preset, " preset: how these results were made\n\n", "- Command: `", r.command,
      "`\n", "- Finished: ", absl::FormatTime("%Y-%m-%d %H:%M UTC", r.finished, absl::UTCTimeZone()), "; ",
      how, "\n",
      "- Training time summed over the points, each by its own clock: ", minutes(r.training_seconds), "\n",
      "- Machine: ", r.machine, "\n");
  if (!r.note.empty()) absl::StrAppend(&md, "- Note: ", r.note, "\n");
  absl::StrAppend(&md, "\n",
                  "`claims.md`, `claims.json`, `summary.csv` and `figure.png` are the run's own files; "
                  "`sweep.textproto` is the experiment as run, and `points/**/result.textproto` and "
                  "`final_maps.pb` each point's accuracies, curve and final attention maps. "
                  "`tools/bazel run //mimetic/experiments:",
                  r.figure, " -- --preset=", r.preset,
                  " --from_results` draws and judges them again without training.\n");
  return md;
}

int CountFinishedPoints(const std::string& run_dir) {
  int n = 0;
  std::error_code ec;
  const fs::path points = fs::path(run_dir) / "points";
  if (!fs::is_directory(points, ec)) return 0;
  for (fs::recursive_directory_iterator it(points, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory() && it->path().filename() == "checkpoints") it.disable_recursion_pending();
    if (it->path().filename() == "result.textproto") ++n;
  }
  return n;
}

std::string ResultsPath(const std::string& root, const std::string& figure, const std::string& preset) {
  return (fs::path(root) / "mimetic/experiments/figures" / figure / "results" / preset).string();
}

absl::Status SaveResults(const std::string& run_dir, const std::string& dest, const std::string& run_md) {
  const fs::path from(run_dir), to(dest);
  std::error_code ec;
  for (const char* required : {kTopFiles[0], kTopFiles[1]}) {
    if (!fs::is_regular_file(from / required, ec)) {
      return absl::FailedPreconditionError(absl::StrCat("cannot save results: '", run_dir, "' has no ",
                                                        required,
                                                        " (run or --aggregate the figure there first)"));
    }
  }
  const fs::path staging = to.string() + ".saving";
  RETURN_IF_ERROR(core::MakeDirs(fs::absolute(to).parent_path().string()));
  fs::remove_all(staging, ec);  // a leftover of a killed save; remove_all never follows a link
  RETURN_IF_ERROR(CopyKept(from, staging));
  RETURN_IF_ERROR(core::WriteTextFile((staging / "run.md").string(), run_md));
  // The old results are replaced only now that the new ones are complete.
  fs::remove_all(to, ec);
  if (ec) return Error("cannot replace", to, ec);
  fs::rename(staging, to, ec);
  if (ec) return Error(absl::StrCat("cannot rename '", staging.string(), "' to"), to, ec);
  return absl::OkStatus();
}

absl::Status RestoreResults(const std::string& results, const std::string& run_dir) {
  const fs::path from(results), to(run_dir);
  std::error_code ec;
  if (!fs::is_regular_file(from / "sweep.textproto", ec)) {
    return absl::NotFoundError(absl::StrCat("no saved results at '", results,
                                            "' (no sweep.textproto): run the figure with --save_results"));
  }
  if (fs::exists(fs::symlink_status(to, ec)) && !fs::exists(fs::symlink_status(to / kRestoredMarker, ec))) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", run_dir, "' exists and was not made from saved results; not replacing it"));
  }
  // Copied beside it first, so that a refused or failed copy leaves no half-made run directory.
  const fs::path staging = to.string() + ".restoring";
  RETURN_IF_ERROR(core::MakeDirs(fs::absolute(to).parent_path().string()));
  fs::remove_all(staging, ec);  // a leftover of a killed restore; remove_all never follows a link
  RETURN_IF_ERROR(CopyKept(from, staging));
  RETURN_IF_ERROR(core::WriteTextFile((staging / kRestoredMarker).string(), results + "\n"));
  fs::remove_all(to, ec);  // an earlier restore's copy (checked above)
  if (ec) return Error("cannot replace", to, ec);
  fs::rename(staging, to, ec);
  if (ec) return Error(absl::StrCat("cannot rename '", staging.string(), "' to"), to, ec);
  return absl::OkStatus();
}

}  // namespace mimetic::experiments
