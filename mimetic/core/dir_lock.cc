#include "mimetic/core/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"

namespace mimetic::core {
namespace {

// The pid text in the lock file (written by its holder), or "unknown".
std::string HolderOf(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  const std::string text = n > 0 ? std::string(absl::StripAsciiWhitespace(std::string(buf, n))) : "";
  return text.empty() ? "unknown" : text;
}

}  // namespace

absl::StatusOr<DirLock> DirLock::Acquire(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/.lock");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot open the lock file '", path, "'"));
  DirLock lock(dir, fd);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return ErrnoError(errno, absl::StrCat("cannot lock '", path, "'"));
    return absl::FailedPreconditionError(absl::StrCat(
        "'", dir, "' is being written by another process (pid ", HolderOf(fd),
        ", see its .lock); two writers would replace each other's files. Wait for it to finish, stop it, "
        "or use another output_dir or name"));
  }
  const std::string pid = absl::StrCat(::getpid(), "\n");
  if (::ftruncate(fd, 0) != 0) return ErrnoError(errno, absl::StrCat("writing the lock file '", path, "'"));
  RETURN_IF_ERROR(WriteAll(fd, path, pid.data(), pid.size()));
  RETURN_IF_ERROR(RemoveStaleTemps(dir).status());
  return lock;
}

DirLock::DirLock(DirLock&& other) noexcept : dir_(std::move(other.dir_)), fd_(other.fd_) { other.fd_ = -1; }

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    Release();
    dir_ = std::move(other.dir_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

DirLock::~DirLock() { Release(); }

void DirLock::Release() {
  // Closing the descriptor ends the flock; the file (and its stale pid) stays for the next holder.
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

}  // namespace mimetic::core
