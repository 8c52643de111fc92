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

// The spin count this process gives libgomp (GOMP_SPINCOUNT) unless the user chose a wait policy.
inline constexpr char kSpinCount[] = "10000";

// Call first thing in main(). Unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is already set, re-executes this
// binary (/proc/self/exe, same argv) with GOMP_SPINCOUNT=kSpinCount; returns only when nothing is to be
// done or the exec failed (then libgomp keeps its default, which is only slower on a busy machine).
// Why: libgomp's default spins ~300000 times at every barrier before it sleeps. The training step has
// hundreds of small parallel regions, and on a machine busy with other work a thread spinning for a
// descheduled partner burns the core that partner needs: the main job's step with 2 threads went from
// 62 ms idle to 249-297 ms beside two other training processes; with 10000 spins it is 171-189 ms
// there and unchanged idle (2-core AMD EPYC Zen 4, 2026-11-24; README, "Speed"). libgomp reads the
// variable once, when it is loaded, so setting it from main() would be too late: hence the exec.
void UseShortSpinWaits(char** argv);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_THREADS_H_
