#include "mimetic/experiments/runner/local_launcher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "absl/strings/str_cat.h"
#include "mimetic/core/spawn.h"
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
  core::SpawnSpec spec;
  spec.argv = job.argv;
  spec.env = MergedEnvironment(job.env);
  spec.stdout_path = job.log_path;
  // Its own process group: a terminal's Ctrl-C reaches only this process, which passes it on once
  // (stop_signal.h); a child that got it twice would stop at once without its checkpoint.
  spec.own_process_group = true;
  // A parent that dies, even by kill -9 while it starts the child, stops it the way a first SIGTERM does
  // (a checkpoint, then exit): an orphan would run the whole point and hold its lock (issue 51).
  spec.death_signal = SIGTERM;
  absl::StatusOr<pid_t> pid = core::SpawnChild(spec);
  if (!pid.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(pid.status().message(), " (log ", job.log_path, ")"));
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
