#include "mimetic/core/spawn.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "mimetic/core/file_util.h"

extern char** environ;

namespace mimetic::core {
namespace {

std::atomic<bool> parent_dies_after_fork{false};

// What the child failed at, sent to the parent through a close-on-exec pipe (nothing arrives when exec
// succeeds, since the pipe closes with it).
enum class ChildStep : int { kLog, kStdin, kChdir, kExec };
struct ChildFailure {
  ChildStep step;
  int err;
};

const char* StepName(ChildStep step) {
  switch (step) {
    case ChildStep::kLog:
      return "opening its log";
    case ChildStep::kStdin:
      return "opening /dev/null";
    case ChildStep::kChdir:
      return "changing to its directory";
    case ChildStep::kExec:
      return "executing it";
  }
  return "?";
}

// Everything the child needs, prepared before fork: after it only async-signal-safe calls are allowed.
struct ChildPlan {
  const char* program;
  char* const* argv;
  char* const* envp;
  const char* cwd;          // nullptr: unchanged
  const char* stdout_path;  // nullptr: see stdout_fd
  int stdout_fd;
  bool own_process_group;
  int death_signal;
  pid_t parent;
  sigset_t parent_mask;
  int report_fd;
  bool wait_for_orphaning;  // the test race
};

[[noreturn]] void ChildFail(const ChildPlan& plan, ChildStep step) {
  const ChildFailure failure{step, errno};
  (void)!::write(plan.report_fd, &failure, sizeof(failure));
  ::_exit(127);
}

// The child between fork and exec. Order matters: handlers reset before signals are unblocked, the death
// signal requested before the parent check (a parent that dies after the check signals us; one that died
// before it has re-parented us, which the check sees).
[[noreturn]] void RunChild(const ChildPlan& plan) {
  for (int signo = 1; signo < NSIG; ++signo) {
    struct sigaction sa;
    if (::sigaction(signo, nullptr, &sa) != 0) continue;
    if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) continue;
    sa.sa_handler = SIG_DFL;
    sa.sa_flags = 0;
    ::sigaction(signo, &sa, nullptr);
  }
  if (plan.wait_for_orphaning) {
    const struct timespec one_ms = {0, 1000000};
    for (int i = 0; i < 5000 && ::getppid() == plan.parent; ++i) ::nanosleep(&one_ms, nullptr);
  }
  ::prctl(PR_SET_PDEATHSIG, plan.death_signal);
  if (::getppid() != plan.parent) ::_exit(127);
  if (plan.own_process_group) ::setpgid(0, 0);
  const int null_fd = ::open("/dev/null", O_RDONLY);
  if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0) ChildFail(plan, ChildStep::kStdin);
  int out_fd = plan.stdout_fd;
  if (plan.stdout_path != nullptr) {
    out_fd = ::open(plan.stdout_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (out_fd < 0) ChildFail(plan, ChildStep::kLog);
  }
  if (out_fd >= 0 && (::dup2(out_fd, STDOUT_FILENO) < 0 || ::dup2(out_fd, STDERR_FILENO) < 0)) {
    ChildFail(plan, ChildStep::kLog);
  }
  if (plan.cwd != nullptr && ::chdir(plan.cwd) != 0) ChildFail(plan, ChildStep::kChdir);
  ::sigprocmask(SIG_SETMASK, &plan.parent_mask, nullptr);
  ::execve(plan.program, plan.argv, plan.envp);
  ChildFail(plan, ChildStep::kExec);
}

// Reads the child's report: OK when exec succeeded (the pipe closed empty).
absl::Status AwaitExec(int report_fd, pid_t pid, const std::string& program) {
  ChildFailure failure;
  ssize_t n = 0;
  while ((n = ::read(report_fd, &failure, sizeof(failure))) < 0 && errno == EINTR) {
  }
  ::close(report_fd);
  if (n != static_cast<ssize_t>(sizeof(failure))) return absl::OkStatus();
  while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  return ErrnoError(failure.err, absl::StrCat("starting '", program, "': ", StepName(failure.step)));
}

}  // namespace

// Resolved here, not by execvp in the child: after fork only async-signal-safe calls are allowed, and
// execvp may allocate.
absl::StatusOr<std::string> FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  for (absl::string_view dir : absl::StrSplit(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", name);
    struct stat st;
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return absl::NotFoundError(absl::StrCat("'", name, "' was not found on PATH"));
}

void SetParentDiesAfterForkForTest(bool on) { parent_dies_after_fork = on; }

absl::StatusOr<pid_t> SpawnChild(const SpawnSpec& spec) {
  if (spec.argv.empty() || spec.argv[0].empty())
    return absl::InvalidArgumentError("SpawnChild: no program given");
  absl::StatusOr<std::string> program = FindProgram(spec.argv[0]);
  if (!program.ok()) return program.status();
  std::vector<char*> argv, envp;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) return ErrnoError(errno, "SpawnChild: pipe2");

  ChildPlan plan;
  plan.program = program->c_str();
  plan.argv = argv.data();
  plan.envp = spec.env.empty() ? environ : envp.data();
  plan.cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();
  plan.stdout_path = spec.stdout_path.empty() ? nullptr : spec.stdout_path.c_str();
  plan.stdout_fd = spec.stdout_fd;
  plan.own_process_group = spec.own_process_group;
  plan.death_signal = spec.death_signal;
  plan.parent = ::getpid();
  plan.report_fd = report[1];
  plan.wait_for_orphaning = parent_dies_after_fork.load();
  sigset_t all;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &plan.parent_mask);
  const pid_t pid = ::fork();
  if (pid == 0) RunChild(plan);
  const int fork_errno = errno;
  if (pid > 0 && plan.wait_for_orphaning) ::kill(::getpid(), SIGKILL);
  ::pthread_sigmask(SIG_SETMASK, &plan.parent_mask, nullptr);
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    return ErrnoError(fork_errno, absl::StrCat("starting '", spec.argv[0], "': fork"));
  }
  absl::Status started = AwaitExec(report[0], pid, spec.argv[0]);
  if (!started.ok()) return started;
  return pid;
}

}  // namespace mimetic::core
