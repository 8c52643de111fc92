// Small file-system and subprocess helpers for the figure and report writers: path pieces, relative
// links, and running an external program (gnuplot, chromium) with its output captured. (mkdir -p,
// DirName and errno Statuses are core/file_util.h; whole-file reads and atomic writes are run_files.h.)
//
//   RETURN_IF_ERROR(core::MakeDirs("runs/fig1"));
//   std::string link = RelativePath("runs/paper", "runs/fig1/figure.png");  // "../fig1/figure.png"
//   ASSIGN_OR_RETURN(ProgramResult r, RunProgram({"gnuplot", "figure.gp"}, "runs/fig1"));
//   if (r.exit_code != 0) ... r.output holds its stdout and stderr.
#ifndef MIMETIC_EXPERIMENTS_FILES_H_
#define MIMETIC_EXPERIMENTS_FILES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mimetic::experiments {

// "a/b/c.png" -> "c.png" (the counterpart of core::DirName).
std::string BaseName(const std::string& path);
// `path` made absolute against the current directory and normalised lexically ("." and ".." parts
// and repeated slashes removed); symbolic links are not resolved.
std::string AbsolutePath(const std::string& path);
// The path of `target` relative to the directory `from_dir` ("../fig1/figure.png"), both made absolute
// first; a link a document in `from_dir` can use.
std::string RelativePath(const std::string& from_dir, const std::string& target);

// Whether `path` is a regular file (following symbolic links).
bool FileExists(const std::string& path);

struct ProgramResult {
  int exit_code = 0;   // the exit status, or 128 + signal number when killed by a signal
  std::string output;  // stdout and stderr interleaved
};

// Runs `argv` (argv[0] looked up on PATH unless it holds a '/') in the directory `cwd` with stdin from
// /dev/null, capturing stdout and stderr. FailedPrecondition naming the program and `install_hint`
// (e.g. "Debian: gnuplot-nox") when it is not found; the errno's error when it cannot start.
absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv, const std::string& cwd = ".",
                                         const std::string& install_hint = "");

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_FILES_H_
