// File and path helpers for everything that reads or writes disk, in one place: errno as a Status, mkdir -p,
// path pieces, whole-file reads, complete writes, and atomic replacement of a file (write a temporary, fsync,
// close, rename), with every step checked so that a full disk or a failed close is an error and never a
// silent truncation. (Child processes are core/subprocess.h.)
//
//   RETURN_IF_ERROR(core::MakeDirs("runs/copy/tb"));
//   RETURN_IF_ERROR(core::WriteTextFile("runs/copy/summary.md", table));
//   ASSIGN_OR_RETURN(std::string text, core::ReadTextFile("runs/copy/sweep.textproto"));
//   RETURN_IF_ERROR(core::SyncDir("runs/copy"));   // make the rename itself durable
//   std::string link = core::RelativePath("runs/paper", "runs/fig1/figure.png");  // "../fig1/figure.png"
#ifndef MIMETIC_CORE_FILE_UTIL_H_
#define MIMETIC_CORE_FILE_UTIL_H_

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace mimetic::core {

// The Status for errno `err`: its canonical code and "<what>: <strerror>".
absl::Status ErrnoError(int err, absl::string_view what);

// mkdir -p: creates `dir` and its missing parents (mode 0755). An error names the component that
// could not be made; FailedPrecondition when `dir` exists but is not a directory; InvalidArgument
// for an empty path.
absl::Status MakeDirs(const std::string& dir);

// fsync of a directory, which makes a completed rename inside it durable.
absl::Status SyncDir(const std::string& dir);

// The directory part of `path`: "a/b" for "a/b/c", "." for "c", "/" for "/c".
std::string DirName(const std::string& path);
// "a/b/c.png" -> "c.png" (the counterpart of DirName).
std::string BaseName(const std::string& path);
// `path` made absolute against the current directory and normalised lexically ("." and ".." parts and
// repeated slashes removed); symbolic links are not resolved.
std::string AbsolutePath(const std::string& path);
// The path of `target` relative to the directory `from_dir` ("../fig1/figure.png"), both made absolute first;
// a link a document in `from_dir` can use.
std::string RelativePath(const std::string& from_dir, const std::string& target);
// Whether `path` is a regular file (following symbolic links).
bool FileExists(const std::string& path);

// The whole of a small text file (configs, results, summaries). NotFound when `path` does not exist;
// FailedPrecondition when it is not a regular file (a directory or a FIFO, which would otherwise hang or
// mislead).
absl::StatusOr<std::string> ReadTextFile(const std::string& path);
// WriteFileAtomically of one string: a failed write (a full disk, say) returns an error and leaves the old
// file as it was.
absl::Status WriteTextFile(const std::string& path, const std::string& text);

// A file descriptor closed on scope exit; Close() reports the close's own result.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() { Close(); }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }
  // 0, or -1 with errno set; closing twice is a no-op returning 0.
  int Close();

 private:
  int fd_;
};

// Writes all `bytes` to `fd` (retrying short writes and EINTR); errors name `path`.
absl::Status WriteAll(int fd, const std::string& path, const void* data, size_t bytes);

// fwrite of all of `bytes` then fflush; errors name `path` and clear the stream's error flag.
absl::Status WriteAndFlush(std::FILE* file, const std::string& path, absl::string_view bytes);

// Replaces `path` atomically with the concatenation of `chunks`: writes a temporary of its own
// (TempPathFor), fsyncs and closes it, then renames it over `path`. On any failure the temporary is
// removed and `path` is left as it was. The directory is not synced (SyncDir when the rename must
// survive a crash).
absl::Status WriteFileAtomically(const std::string& path, absl::Span<const absl::string_view> chunks);

// A temporary name for writing `path` that no other writer uses: "<path>.tmp.<pid>.<counter>".
std::string TempPathFor(const std::string& path);
// Whether `name` (a file name) is such a temporary; sets the pid that wrote it.
bool IsTempName(absl::string_view name, int64_t* pid);
// Deletes the temporaries in `dir` (not below it) whose writing process no longer exists (a kill -9
// mid-write leaves one); returns how many. A missing `dir` is 0.
absl::StatusOr<int> RemoveStaleTemps(const std::string& dir);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_FILE_UTIL_H_
