#include "mimetic/core/subprocess.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/spawn.h"

namespace mimetic::core {

absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv, const std::string& cwd,
                                         const std::string& install_hint) {
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("RunProgram: no program given");
  // Checked before anything starts, so that the message names the missing directory plainly.
  struct stat st;
  if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run '", argv[0], "': directory '", cwd, "' does not exist"));
  }
  // The output goes to an unlinked temporary file rather than a pipe: no reader thread, no deadlock when the
  // program writes more than a pipe holds.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string log_template =
      absl::StrCat(tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp", "/mimetic_run_XXXXXX");
  const int log_fd = ::mkstemp(log_template.data());
  if (log_fd < 0) return ErrnoError(errno, absl::StrCat("creating a temporary file '", log_template, "'"));
  ::unlink(log_template.c_str());

  // SpawnChild ties the child to this thread: a figure killed while gnuplot or a PyTorch peer runs takes
  // the child with it.
  SpawnSpec spec;
  spec.argv = argv;
  spec.cwd = cwd;
  spec.stdout_fd = log_fd;
  absl::StatusOr<pid_t> spawned = SpawnChild(spec);
  if (!spawned.ok()) {
    ::close(log_fd);
    if (spawned.status().code() == absl::StatusCode::kNotFound) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", argv[0], "' was not found on PATH",
          install_hint.empty() ? std::string() : absl::StrCat("; install it (", install_hint, ")")));
    }
    return spawned.status();
  }
  const pid_t pid = *spawned;
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      const int err = errno;
      ::close(log_fd);
      return ErrnoError(err, absl::StrCat("waiting for '", argv[0], "'"));
    }
  }
  ProgramResult result;
  result.exit_code = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
  ::lseek(log_fd, 0, SEEK_SET);
  char buffer[65536];
  ssize_t n = 0;
  while ((n = ::read(log_fd, buffer, sizeof(buffer))) > 0)
    result.output.append(buffer, static_cast<size_t>(n));
  ::close(log_fd);
  return result;
}

}  // namespace mimetic::core
