#include "mimetic/experiments/files.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/file_util.h"

extern char** environ;

namespace mimetic::experiments {
namespace {

// Removes "." and empty parts and folds ".." into its parent; `path` is absolute.
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

absl::StatusOr<ProgramResult> RunProgram(const std::vector<std::string>& argv, const std::string& cwd,
                                         const std::string& install_hint) {
  if (argv.empty() || argv[0].empty()) return absl::InvalidArgumentError("RunProgram: no program given");
  // Checked here: a failed chdir inside posix_spawn reports ENOENT, indistinguishable from "no program".
  struct stat st;
  if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot run '", argv[0], "': directory '", cwd, "' does not exist"));
  }
  // The output goes to an unlinked temporary file rather than a pipe: no reader thread, no deadlock
  // when the program writes more than a pipe holds.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string log_template =
      absl::StrCat(tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp", "/mimetic_run_XXXXXX");
  const int log_fd = ::mkstemp(log_template.data());
  if (log_fd < 0)
    return core::ErrnoError(errno, absl::StrCat("creating a temporary file '", log_template, "'"));
  ::unlink(log_template.c_str());

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 1);
  posix_spawn_file_actions_adddup2(&actions, log_fd, 2);
  posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ::close(log_fd);
    if (rc == ENOENT) {
      return absl::FailedPreconditionError(absl::StrCat(
          "'", argv[0], "' was not found on PATH",
          install_hint.empty() ? std::string() : absl::StrCat("; install it (", install_hint, ")")));
    }
    return core::ErrnoError(rc, absl::StrCat("starting '", argv[0], "' in '", cwd, "'"));
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0) {
    if (errno != EINTR) {
      const int err = errno;
      ::close(log_fd);
      return core::ErrnoError(err, absl::StrCat("waiting for '", argv[0], "'"));
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

}  // namespace mimetic::experiments
