// Small file-system and subprocess helpers for the figure, claims and report writers: mkdir -p, path
// pieces, whole-file reads, atomic writes (temporary file renamed over the target), and running an
// external program (gnuplot, chromium) with its output captured.
//
//   RETURN_IF_ERROR(MakeDirs("runs/fig1"));
//   RETURN_IF_ERROR(WriteFileAtomically("runs/fig1/claims.md", markdown));
//   ASSIGN_OR_RETURN(std::string bytes, ReadFileToString("runs/fig1/figure.png"));
//   ASSIGN_OR_RETURN(ProgramResult r, RunProgram({"gnuplot", "figure.gp"}, "runs/fig1"));
//   if (r.exit_code != 0) ... r.output holds its stdout and stderr.
#ifndef MIMETIC_EXPERIMENTS_FILES_H_
#define MIMETIC_EXPERIMENTS_FILES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mimetic::experiments {

// mkdir -p: creates `dir` and its missing parents. FailedPrecondition when a part is not a directory.
absl::Status MakeDirs(const std::string& dir);

// "a/b/c.png" -> "a/b"; "c.png" -> "."; "/c.png" -> "/".
std::string DirName(const std::string& path);
// "a/b/c.png" -> "c.png".
std::string BaseName(const std::string& path);
// `path` made absolute against the current directory and normalised lexically ("." and ".." parts
// and repeated slashes removed); symbolic links are not resolved.
std::string AbsolutePath(const std::string& path);
// The path of `target` relative to the directory `from_dir` ("../fig1/figure.png"), both made absolute
// first; a link a document in `from_dir` can use.
std::string RelativePath(const std::string& from_dir, const std::string& target);

// The whole file. NotFound (or the errno's code) naming the path when it cannot be read.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);
bool FileExists(const std::string& path);

// Writes `contents` to `path + ".tmp"`, then renames it over `path`, so readers never see half a file
// and a failed write leaves the old file intact. Creates the parent directories.
absl::Status WriteFileAtomically(const std::string& path, const std::string& contents);

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
