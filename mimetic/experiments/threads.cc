#include "mimetic/experiments/threads.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>

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

}  // namespace mimetic::experiments
