#include "mimetic/core/file_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace mimetic::core {
namespace {

namespace fs = std::filesystem;

constexpr char kTempInfix[] = ".tmp.";

// Removes "." and empty parts and folds ".." into its parent; `path` is
// absolute.
std::string NormaliseAbsolute(const std::string& path) {
  std::vector<std::string> parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") continue;
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.emplace_back(part);
  }
  return absl::StrCat("/", absl::StrJoin(parts, "/"));
}

}  // namespace

absl::Status ErrnoError(int err, absl::string_view what) {
  return absl::Status(absl::ErrnoToStatusCode(err), absl::StrCat(what, ": ", std::strerror(err)));
}

absl::Status MakeDirs(const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("directory path is empty");
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError(errno, absl::StrCat("creating directory '", prefix, "'"));
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) return ErrnoError(errno, absl::StrCat("directory '", dir, "'"));
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("'", dir, "' is not a directory"));
  }
  return absl::OkStatus();
}

absl::Status SyncDir(const std::string& dir) {
  ScopedFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return ErrnoError(errno, absl::StrCat("opening directory '", dir, "' to sync it"));
  if (::fsync(fd.get()) != 0) return ErrnoError(errno, absl::StrCat("syncing directory '", dir, "'"));
  return absl::OkStatus();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

int ScopedFd::Close() {
  int rc = 0;
  if (fd_ >= 0) rc = ::close(fd_);
  fd_ = -1;
  return rc;
}

absl::Status WriteAll(int fd, const std::string& path, const void* data, size_t bytes) {
  const char* in = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::write(fd, in, bytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError(errno, absl::StrCat("writing '", path, "'"));
    }
    in += n;
    bytes -= static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

absl::Status WriteAndFlush(std::FILE* file, const std::string& path, absl::string_view bytes) {
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file) != bytes.size() || std::fflush(file) != 0) {
    const int err = errno != 0 ? errno : EIO;
    std::clearerr(file);
    return ErrnoError(err, absl::StrCat("writing '", path, "'"));
  }
  return absl::OkStatus();
}

std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, kTempInfix, ::getpid(), ".", counter.fetch_add(1));
}

bool IsTempName(absl::string_view name, int64_t* pid) {
  const size_t at = name.rfind(kTempInfix);
  if (at == absl::string_view::npos || at == 0) return false;
  const std::vector<absl::string_view> parts = absl::StrSplit(name.substr(at + strlen(kTempInfix)), '.');
  uint64_t counter = 0;
  return parts.size() == 2 && absl::SimpleAtoi(parts[0], pid) && absl::SimpleAtoi(parts[1], &counter);
}

absl::StatusOr<int> RemoveStaleTemps(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) {
    if (errno == ENOENT) return 0;
    return ErrnoError(errno, absl::StrCat("listing '", dir, "'"));
  }
  int removed = 0;
  while (struct dirent* entry = ::readdir(d)) {
    int64_t pid = 0;
    if (!IsTempName(entry->d_name, &pid)) continue;
    // A live writer's temporary (this process's included) is not stale: kill(pid, 0) fails with ESRCH
    // only when no such process exists.
    if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
    const std::string path = absl::StrCat(dir, "/", entry->d_name);
    if (::unlink(path.c_str()) == 0) ++removed;
  }
  ::closedir(d);
  return removed;
}

absl::Status WriteFileAtomically(const std::string& path, absl::Span<const absl::string_view> chunks) {
  // A name of its own (pid and counter): two writers of one path never share or rename each other's
  // temporary.
  const std::string tmp = TempPathFor(path);
  ScopedFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0) return ErrnoError(errno, absl::StrCat("cannot create '", tmp, "'"));
  absl::Status status;
  for (size_t i = 0; status.ok() && i < chunks.size(); ++i) {
    status = WriteAll(fd.get(), tmp, chunks[i].data(), chunks[i].size());
  }
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  if (status.ok() && ::fsync(fd.get()) != 0) status = ErrnoError(errno, absl::StrCat("syncing '", tmp, "'"));
  if (fd.Close() != 0 && status.ok()) status = ErrnoError(errno, absl::StrCat("closing '", tmp, "'"));
  if (status.ok() && std::rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoError(errno, absl::StrCat("renaming '", tmp, "' to '", path, "'"));
  }
  if (!status.ok()) ::unlink(tmp.c_str());
  return status;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string AbsolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return NormaliseAbsolute(path);
  char buffer[4096];
  const char* cwd = ::getcwd(buffer, sizeof(buffer));
  return NormaliseAbsolute(absl::StrCat(cwd != nullptr ? cwd : "/", "/", path));
}

std::string RelativePath(const std::string& from_dir, const std::string& target) {
  const std::vector<std::string> from = absl::StrSplit(AbsolutePath(from_dir), '/', absl::SkipEmpty());
  const std::vector<std::string> to = absl::StrSplit(AbsolutePath(target), '/', absl::SkipEmpty());
  size_t common = 0;
  while (common < from.size() && common < to.size() && from[common] == to[common]) ++common;
  std::vector<std::string> parts(from.size() - common, "..");
  parts.insert(parts.end(), to.begin() + common, to.end());
  return parts.empty() ? "." : absl::StrJoin(parts, "/");
}

bool FileExists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

absl::Status WriteTextFile(const std::string& path, const std::string& text) {
  return core::WriteFileAtomically(path, {absl::string_view(text)});
}

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) return absl::NotFoundError(absl::StrCat("cannot read '", path, "': no such file"));
  if (!fs::is_regular_file(st)) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read '", path, "': not a regular file"));
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot read '", path, "'"));
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = ErrnoError(errno, absl::StrCat("cannot read '", path, "'"));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace mimetic::core
