// Stopping a run cleanly on SIGINT / SIGTERM (Ctrl-C, `kill`, a cluster's preemption): the first signal
// asks the training loop to finish its current step, write a checkpoint, say where, and exit with
// 128 + the signal's number; a second signal exits at once. A --jobs parent forwards the signal to its
// child processes and waits for them.
//
//   InstallStopHandlers();                     // once, in main
//   if (StopSignal() != 0) { ...checkpoint...; return StoppedError(StopSignal(), "at step 42"); }
//   ...
//   if (int signo = StopSignalOf(status); signo != 0) return 128 + signo;   // the exit code
//
// Without InstallStopHandlers (tests, library users) StopSignal() stays 0 and signals keep their
// default action.
#ifndef MIMETIC_EXPERIMENTS_STOP_SIGNAL_H_
#define MIMETIC_EXPERIMENTS_STOP_SIGNAL_H_

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"

namespace mimetic::experiments {

// Handlers for SIGINT and SIGTERM (no SA_RESTART, so a blocking waitpid returns EINTR and notices), and
// SIGXFSZ ignored, so that a write past a file-size limit (`ulimit -f`) fails with EFBIG like a full disk
// instead of killing the process. Every runner and figure main calls it first.
void InstallStopHandlers();
// The first stop signal received (0: none).
int StopSignal();
// "SIGTERM", "SIGINT".
std::string SignalName(int signo);

// A Cancelled status that carries `signo` (StopSignalOf reads it back), "stopped by SIGTERM <what>".
absl::Status StoppedError(int signo, const std::string& what);
// The signal of a StoppedError (0 for any other status).
int StopSignalOf(const absl::Status& status);

// Child processes to pass a stop signal on to (the --jobs launcher registers each one it starts). The
// handler of a second signal sends it to them before exiting. At most 256 at once.
void RegisterChild(pid_t pid);
void UnregisterChild(pid_t pid);
// Sends the first stop signal to every registered child (once; later calls do nothing).
void ForwardStopToChildren();

// For tests: behave as if `signo` had been received (0 clears it).
void SetStopSignalForTest(int signo);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_STOP_SIGNAL_H_
