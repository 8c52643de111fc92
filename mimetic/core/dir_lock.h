// An exclusive lock on a directory that one process writes (a run directory, a grid point's
// directory): the holder's pid is in `<dir>/.lock`, locked with flock(2), so a second writer is refused
// at once, naming the holder, instead of silently replacing the first one's checkpoints. The lock
// ends when the DirLock is destroyed or the process dies (even by kill -9); the file stays behind.
//
//   ASSIGN_OR_RETURN(core::DirLock lock, core::DirLock::Acquire("runs/copy/points/mimetic/seed1"));
//   ... write the directory ...
//
// The file descriptor is close-on-exec: a child process started while the lock is held does not hold
// it. Acquiring also deletes the temporaries that dead writers left in `dir` (file_util.h).
#ifndef MIMETIC_CORE_DIR_LOCK_H_
#define MIMETIC_CORE_DIR_LOCK_H_

#include <string>

#include "absl/status/statusor.h"

namespace mimetic::core {

class DirLock {
 public:
  // Locks `dir` (which must exist). FailedPrecondition naming the holder's pid when another process
  // (or another DirLock of this one) holds it.
  static absl::StatusOr<DirLock> Acquire(const std::string& dir);

  DirLock() = default;
  DirLock(DirLock&& other) noexcept;
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

  const std::string& dir() const { return dir_; }
  bool held() const { return fd_ >= 0; }

 private:
  DirLock(std::string dir, int fd) : dir_(std::move(dir)), fd_(fd) {}
  void Release();

  std::string dir_;
  int fd_ = -1;
};

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_DIR_LOCK_H_
