// Reading and writing the small text files of a run directory (configs, results, summaries).
//
//   RETURN_IF_ERROR(WriteTextFile("runs/copy/summary.md", table));
//   ASSIGN_OR_RETURN(std::string text, ReadTextFile("runs/copy/sweep.textproto"));
//
// WriteTextFile is core::WriteFileAtomically: it writes a temporary of its own, checks every write
// through fsync and close, and renames it over the target, so a failed write (a full disk, say)
// returns an error and leaves the old file as it was. (A run directory has one writer, held by a
// core::DirLock.)
#ifndef MIMETIC_EXPERIMENTS_RUN_FILES_H_
#define MIMETIC_EXPERIMENTS_RUN_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace mimetic::experiments {

absl::Status WriteTextFile(const std::string& path, const std::string& text);
// NotFound when `path` does not exist; FailedPrecondition when it is not a regular file (a directory or
// a FIFO, which would otherwise hang or mislead).
absl::StatusOr<std::string> ReadTextFile(const std::string& path);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUN_FILES_H_
