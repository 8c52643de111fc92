// A full disk for tests, without root: RLIMIT_FSIZE with SIGXFSZ ignored, so that every write past the
// limit fails with EFBIG as it would with ENOSPC, instead of killing the process.
//
//   // In a forked child; its return value is the child's exit status.
//   int code = core::RunWithFileSizeLimit(64, [&] { return WriteTextFile(path, big).ok() ? 1 : 0; });
//   EXPECT_EQ(code, 0);
#ifndef MIMETIC_CORE_FULL_DISK_FOR_TEST_H_
#define MIMETIC_CORE_FULL_DISK_FOR_TEST_H_

#include <cstdint>
#include <functional>

namespace mimetic::core {

// Limits the files this process (and what it execs) writes to `bytes`. With `ignore_sigxfsz` a write past
// the limit fails with EFBIG; without it the kernel's SIGXFSZ kills the writer unless it ignores the signal
// itself (what a shell's `ulimit -f` does to a program).
void LimitFileSize(int64_t bytes, bool ignore_sigxfsz = true);

// Forks; the child runs `body` under LimitFileSize(bytes) and exits with its return value. Returns that
// exit status, or 128 + the signal that killed the child, or -1 when the fork failed.
int RunWithFileSizeLimit(int64_t bytes, const std::function<int()>& body);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_FULL_DISK_FOR_TEST_H_
