// Starting a child process that cannot outlive its parent: the one fork-and-exec of the project, used by
// core/subprocess.h (gnuplot, chromium, sbatch, the PyTorch peers) and the --jobs launcher.
//
//   SpawnSpec spec;
//   spec.argv = {"/path/run", "--point_of=runs/x/sweep.textproto", "--point=3"};
//   spec.stdout_path = "runs/x/points/3/progress.log";
//   ASSIGN_OR_RETURN(pid_t pid, core::SpawnChild(spec));   // then waitpid(pid, ...)
//
// Why not posix_spawn: a child must learn of its parent's death however early that comes. The child asks
// for `death_signal` (PR_SET_PDEATHSIG) between fork and exec, and then checks that its parent is still the
// process that forked it; a parent killed before that moment would otherwise leave an orphan that runs a
// whole grid point and holds its directory lock (issue 51). Signals are blocked across the fork and the
// parent's handlers reset to their defaults in the child, so a death signal that arrives before exec kills
// the child rather than running the parent's handler in it.
#ifndef MIMETIC_CORE_SPAWN_H_
#define MIMETIC_CORE_SPAWN_H_

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mimetic::core {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0]: a path, or a name looked up on PATH when it holds no '/'
  // The child's whole environment ("NAME=value"); empty: this process's environment.
  std::vector<std::string> env;
  std::string cwd;                 // the child's working directory; empty: this process's
  std::string stdout_path;         // stdout and stderr appended to this file (created 0644) ...
  int stdout_fd = -1;              // ... or both duplicated from this descriptor; neither: inherited
  bool own_process_group = false;  // a process group of its own (setpgid(0, 0))
  int death_signal = SIGTERM;      // sent to the child when the thread that spawned it ends
};

// Starts `spec` with stdin from /dev/null and returns its pid (the caller reaps it with waitpid). The
// calling thread must outlive the child: the kernel sends `death_signal` when that thread, not the whole
// process, exits. NotFound naming the program when a name without '/' is on no PATH directory;
// InvalidArgument for an empty argv; otherwise the errno of the step that failed in the child (opening the
// log, chdir, exec), naming the program and the step.
absl::StatusOr<pid_t> SpawnChild(const SpawnSpec& spec);

// `name` itself when it holds a '/'; else the first executable regular file of that name on PATH
// ("/usr/bin:/bin" when PATH is unset). NotFound "'<name>' was not found on PATH" otherwise.
absl::StatusOr<std::string> FindProgram(const std::string& name);

// For tests: force the race of issue 51. When on, the next SpawnChild's parent kills itself with SIGKILL
// right after fork, and its child waits (up to 5 s) until it has been re-parented before asking for its
// death signal, so only the parent check can stop it. Call it only in a process the test forked.
void SetParentDiesAfterForkForTest(bool on);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_SPAWN_H_
