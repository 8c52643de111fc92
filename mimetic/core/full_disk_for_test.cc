#include "mimetic/core/full_disk_for_test.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace mimetic::core {

void LimitFileSize(int64_t bytes, bool ignore_sigxfsz) {
  // Set either way: a disposition of SIG_IGN is inherited from the parent and through exec.
  ::signal(SIGXFSZ, ignore_sigxfsz ? SIG_IGN : SIG_DFL);
  const rlim_t limit = static_cast<rlim_t>(bytes);
  struct rlimit r = {limit, limit};
  ::setrlimit(RLIMIT_FSIZE, &r);
}

int RunWithFileSizeLimit(int64_t bytes, const std::function<int()>& body) {
  const pid_t child = ::fork();
  if (child < 0) return -1;
  if (child == 0) {
    LimitFileSize(bytes);
    // _exit: the parent's atexit handlers and buffered output are not the child's to run or flush.
    ::_exit(body());
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace mimetic::core
