// For threads_test: applies UseShortSpinWaits, then prints the waits libgomp actually uses (its own
// report of the variables it read when it was loaded) and whether this process was re-executed.
#include <omp.h>

#include <cstdio>
#include <cstdlib>

#include "mimetic/experiments/runner/threads.h"

int main(int argc, char** argv) {
  // A marker that survives the exec only through the environment: set before, seen after.
  const bool reexecuted = std::getenv("SPIN_WAIT_PROBE_STARTED") != nullptr;
  setenv("SPIN_WAIT_PROBE_STARTED", "1", 1);
  mimetic::experiments::UseShortSpinWaits(argv);
  std::printf("reexecuted=%d argc=%d last=%s\n", reexecuted ? 1 : 0, argc, argv[argc - 1]);
  std::fflush(stdout);
  omp_display_env(/*verbose=*/1);  // to stderr
  return 0;
}
