#include "mimetic/experiments/figures/saved_results.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
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
bool KeptPointFile(const fs::path& p) {
  return p.filename() == "result.textproto" || p.filename() == kFinalMapsFile;
}

absl::Status Error(const std::string& what, const fs::path& p, const std::error_code& ec) {
  return absl::InternalError(absl::StrCat(what, " '", p.string(), "': ", ec.message()));
}

// Copies `from` to `to`, making its folder.
absl::Status CopyOne(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (ec) return Error("cannot create", to.parent_path(), ec);
  fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
  if (ec) return Error(absl::StrCat("cannot copy '", from.string(), "' to"), to, ec);
  return absl::OkStatus();
}

// Copies every kept point file under from/points to to/points, keeping the relative paths.
absl::Status CopyPoints(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (!fs::is_directory(from / "points", ec)) return absl::OkStatus();
  for (fs::recursive_directory_iterator it(from / "points", ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory()) {
      // Checkpoints and TensorBoard folders hold nothing kept; skipping them saves reading megabytes.
      const std::string name = it->path().filename().string();
      if (name == "checkpoints" || name == "tb" || name == "plots") it.disable_recursion_pending();
      continue;
    }
    if (!KeptPointFile(it->path())) continue;
    RETURN_IF_ERROR(CopyOne(it->path(), to / fs::relative(it->path(), from)));
  }
  if (ec) return Error("cannot list", from / "points", ec);
  return absl::OkStatus();
}

// Copies a run directory's kept files (kTopFiles present, each point's) and those of the run directories
// inside it (a folder with a sweep.textproto: the stand-in teacher of Figs. 10 and 11, teacher.h, whose
// sweep, result and weights --aggregate reads).
absl::Status CopyKept(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  for (const char* f : kTopFiles) {
    if (fs::is_regular_file(from / f, ec)) RETURN_IF_ERROR(CopyOne(from / f, to / f));
  }
  RETURN_IF_ERROR(CopyPoints(from, to));
  for (fs::directory_iterator it(from, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename() == "points" || !fs::is_regular_file(it->path() / "sweep.textproto")) continue;
    RETURN_IF_ERROR(CopyKept(it->path(), to / it->path().filename()));
  }
  if (ec) return Error("cannot list", from, ec);
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
  fs::remove_all(staging, ec);
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
  if (fs::exists(to, ec)) {
    if (!fs::exists(to / kRestoredMarker, ec)) {
      return absl::FailedPreconditionError(
          absl::StrCat("'", run_dir, "' exists and was not made from saved results; not replacing it"));
    }
    fs::remove_all(to, ec);
    if (ec) return Error("cannot replace", to, ec);
  }
  RETURN_IF_ERROR(CopyKept(from, to));
  return core::WriteTextFile((to / kRestoredMarker).string(), results + "\n");
}

}  // namespace mimetic::experiments
