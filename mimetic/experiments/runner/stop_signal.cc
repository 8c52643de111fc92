#include "mimetic/experiments/runner/stop_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace mimetic::experiments {
namespace {

constexpr char kStopUrl[] = "type.mimetic/experiments.Stop";
constexpr int kMaxChildren = 256;

// Lock-free atomics only: the handler reads and writes them.
std::atomic<int> g_signal{0};
std::atomic<bool> g_forwarded{false};
std::atomic<pid_t> g_children[kMaxChildren];

void SendToChildren(int signo) {
  for (std::atomic<pid_t>& c : g_children) {
    const pid_t pid = c.load();
    if (pid > 0) ::kill(pid, signo);
  }
}

void OnSignal(int signo) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, signo)) {
    // The first: stop after this step. Said at once, since a long evaluation or checkpoint may take a
    // while before the stop shows.
    constexpr char kFirst[] =
        "\nstop signal: finishing the current step or evaluation, then checkpointing (a second signal "
        "exits at once)\n";
    (void)!::write(STDERR_FILENO, kFirst, sizeof(kFirst) - 1);
    return;
  }
  // The second: stop now (children too). Only async-signal-safe calls here.
  SendToChildren(signo);
  constexpr char kMsg[] = "\nsecond stop signal: exiting at once (the last checkpoint is kept)\n";
  (void)!::write(STDERR_FILENO, kMsg, sizeof(kMsg) - 1);
  ::_exit(128 + signo);
}

}  // namespace

void InstallStopHandlers() {
  static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free);
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR so the launcher can forward the signal
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);
  // A write past `ulimit -f` raises SIGXFSZ, whose default action kills the run without a word. Ignored,
  // the write fails with EFBIG instead and is reported like a full disk: an error naming the file, the old
  // files kept. (Inherited through exec: --jobs children and gnuplot see EFBIG too.)
  ::signal(SIGXFSZ, SIG_IGN);
}

int StopSignal() { return g_signal.load(); }

std::string SignalName(int signo) {
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return absl::StrCat("signal ", signo);
  }
}

absl::Status StoppedError(int signo, const std::string& what) {
  absl::Status s = absl::CancelledError(absl::StrCat("stopped by ", SignalName(signo), " ", what));
  s.SetPayload(kStopUrl, absl::Cord(absl::StrCat(signo)));
  return s;
}

int StopSignalOf(const absl::Status& status) {
  const auto p = status.GetPayload(kStopUrl);
  int signo = 0;
  return p.has_value() && absl::SimpleAtoi(std::string(*p), &signo) ? signo : 0;
}

void RegisterChild(pid_t pid) {
  for (std::atomic<pid_t>& c : g_children) {
    pid_t empty = 0;
    if (c.compare_exchange_strong(empty, pid)) break;
  }
  // A child that starts after the first signal is told at once.
  if (g_forwarded.load() && g_signal.load() != 0) ::kill(pid, g_signal.load());
}

void UnregisterChild(pid_t pid) {
  for (std::atomic<pid_t>& c : g_children) {
    pid_t expected = pid;
    if (c.compare_exchange_strong(expected, 0)) break;
  }
}

void ForwardStopToChildren() {
  const int signo = g_signal.load();
  if (signo == 0 || g_forwarded.exchange(true)) return;
  SendToChildren(signo);
}

void SetStopSignalForTest(int signo) {
  g_signal.store(signo);
  g_forwarded.store(false);
}

}  // namespace mimetic::experiments
