#include "mimetic/experiments/runner/local_launcher.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/runner/stop_signal.h"

extern char** environ;

namespace mimetic::experiments {
namespace {

// This process's environment with `extra` entries added or replacing those of the same name.
std::vector<std::string> MergedEnvironment(const std::vector<std::string>& extra) {
  std::map<std::string, std::string> env;
  std::vector<std::string> order;
  auto put = [&](const std::string& entry) {
    const std::string name = entry.substr(0, entry.find('='));
    if (env.count(name) == 0) order.push_back(name);
    env[name] = entry;
  };
  for (char** e = environ; *e != nullptr; ++e) put(*e);
  for (const std::string& e : extra) put(e);
  std::vector<std::string> out;
  for (const std::string& name : order) out.push_back(env[name]);
  return out;
}

absl::StatusOr<pid_t> Spawn(const ChildJob& job) {
  if (job.argv.empty()) return absl::InvalidArgumentError("a child job has an empty argv");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, job.log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv, envp;
  for (const std::string& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const std::vector<std::string> env = MergedEnvironment(job.env);
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  // Its own process group: a terminal's Ctrl-C reaches only this process, which passes it on once
  // (stop_signal.h); a child that got it twice would stop at once without its checkpoint.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, job.argv[0].c_str(), &actions, &attr, argv.data(), envp.data());
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot start '", job.argv[0], "' (log ", job.log_path, "): ", std::strerror(rc)));
  }
  return pid;
}

}  // namespace

absl::StatusOr<std::vector<int>> RunChildren(const std::vector<ChildJob>& jobs, int parallel,
                                             const std::function<void(const ChildEvent&)>& on_event,
                                             const std::function<void()>& on_idle) {
  if (parallel < 1) return absl::InvalidArgumentError(absl::StrCat("jobs = ", parallel, "; expected >= 1"));
  std::vector<int> codes(jobs.size(), -1);
  std::map<pid_t, int> running;
  size_t next = 0;
  absl::Status failure = absl::OkStatus();
  while ((next < jobs.size() && StopSignal() == 0) || !running.empty()) {
    // After a stop signal no new job starts, and the running ones are told.
    if (StopSignal() != 0) ForwardStopToChildren();
    while (failure.ok() && StopSignal() == 0 && next < jobs.size() &&
           static_cast<int>(running.size()) < parallel) {
      absl::StatusOr<pid_t> pid = Spawn(jobs[next]);
      if (!pid.ok()) {
        failure = pid.status();
        break;
      }
      running[*pid] = static_cast<int>(next);
      RegisterChild(*pid);
      if (on_event) on_event(ChildEvent{static_cast<int>(next), true, 0});
      ++next;
    }
    if (running.empty()) break;
    int status = 0;
    // Polled, so that a stop signal arriving just before a blocking wait is still passed on at once.
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid == 0 || (pid < 0 && errno == EINTR)) {
      if (on_idle) on_idle();
      ::usleep(20000);
      continue;
    }
    if (pid < 0) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
    auto it = running.find(pid);
    if (it == running.end()) continue;
    UnregisterChild(pid);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    codes[it->second] = code;
    if (on_event) on_event(ChildEvent{it->second, false, code});
    running.erase(it);
  }
  RETURN_IF_ERROR(failure);
  return codes;
}

}  // namespace mimetic::experiments
