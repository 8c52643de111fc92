#include "mimetic/experiments/runner/threads.h"

#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

extern "C" void openblas_set_num_threads(int num_threads);

namespace mimetic::experiments {

int AvailableCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1, omp_get_num_procs());
}

void SetThreadCount(int threads) {
  threads = std::max(1, threads);
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

int ThreadCount() { return omp_get_max_threads(); }

void UseShortSpinWaits(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (setenv("GOMP_SPINCOUNT", kSpinCount, /*overwrite=*/1) != 0) return;
  execv("/proc/self/exe", argv);
  // Only reached when the exec failed: go on with libgomp's default waits, and do not pass the variable
  // on to children as if this process used it.
  unsetenv("GOMP_SPINCOUNT");
}

}  // namespace mimetic::experiments
