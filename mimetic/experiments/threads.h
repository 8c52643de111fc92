// The CPU threads a process uses: our OpenMP kernels and OpenBLAS (its OpenMP build shares the same
// pool) use exactly the number set here, so runs side by side (--jobs) never oversubscribe the cores.
//
//   SetThreadCount(1);  // e.g. each of two jobs on a 2-core machine
#ifndef MIMETIC_EXPERIMENTS_THREADS_H_
#define MIMETIC_EXPERIMENTS_THREADS_H_

namespace mimetic::experiments {

// The cores this process may run on (sched_getaffinity; at least 1).
int AvailableCores();
// Sets OpenMP's and OpenBLAS's thread counts to `threads` (>= 1).
void SetThreadCount(int threads);
// OpenMP's current thread count.
int ThreadCount();

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_THREADS_H_
