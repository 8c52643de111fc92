// Child processes, at most N at a time: how --jobs runs grid points side by side on one machine.
// Each child's stdout and stderr go to its own log file, so parallel progress never interleaves.
//
//   std::vector<ChildJob> jobs = {{{"/path/run", "--point=0", ...}, {"OMP_NUM_THREADS=1"},
//   "p0/progress.log"}}; ASSIGN_OR_RETURN(std::vector<int> codes, RunChildren(jobs, 2, [](const ChildEvent&
//   e) { ... }));
#ifndef MIMETIC_EXPERIMENTS_LOCAL_LAUNCHER_H_
#define MIMETIC_EXPERIMENTS_LOCAL_LAUNCHER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace mimetic::experiments {

struct ChildJob {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::vector<std::string> env;  // "NAME=value" entries added to (or replacing in) this process's environment
  std::string log_path;          // stdout and stderr, appended
};

struct ChildEvent {
  int index = 0;        // into the jobs
  bool started = true;  // false: it ended
  int exit_code = 0;    // when ended: the exit status, or 128 + the signal that killed it
};

// Runs every job, at most `parallel` (>= 1) at once, in order; returns each one's exit code (-1 for a job
// never started). A job that cannot be started is an error naming it (jobs already running are waited for
// first). After a stop signal (stop_signal.h) no job starts and the running ones get the signal; they are
// waited for. Each child runs in its own process group. `on_idle`, when given, is called from the wait loop
// every few tens of milliseconds while children run (a progress display).
absl::StatusOr<std::vector<int>> RunChildren(const std::vector<ChildJob>& jobs, int parallel,
                                             const std::function<void(const ChildEvent&)>& on_event,
                                             const std::function<void()>& on_idle = {});

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_LOCAL_LAUNCHER_H_
