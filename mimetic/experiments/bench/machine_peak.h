// What the CPU can do in fp32, measured in this process, so that a benchmark can say how close to the
// machine's limit a training step runs: an OpenBLAS sgemm of a large square size (the best a tuned
// library reaches on real data) and a register-only FMA loop (the arithmetic peak: independent vector
// FMAs on registers, no memory traffic).
//
//   const double peak = FmaPeakGflops(/*threads=*/2);
//   const double blas = SgemmGflops(/*n=*/2048, /*threads=*/2);
//   std::cout << CpuModel() << ": " << achieved / peak << " of the FMA peak\n";
#ifndef MIMETIC_EXPERIMENTS_MACHINE_PEAK_H_
#define MIMETIC_EXPERIMENTS_MACHINE_PEAK_H_

#include <string>

namespace mimetic::experiments {

// The "model name" line of /proc/cpuinfo ("unknown CPU" where there is none).
std::string CpuModel();

// The vector instructions the FMA loop was compiled to: "avx512f", "avx2+fma" or "scalar fma".
std::string FmaIsa();

// GFLOP/s of `threads` OpenMP threads each running a register-only FMA loop (2 flops per lane per
// FMA), the best of `repeats` runs of about `iterations` x 12 vector FMAs per thread.
double FmaPeakGflops(int threads, long iterations = 20'000'000, int repeats = 3);

// GFLOP/s (2 n^3 per product) of OpenBLAS's sgemm C = A B on n x n matrices with `threads` threads,
// the best of `repeats` products after one warm-up. Leaves OpenBLAS and OpenMP at `threads` threads.
double SgemmGflops(int n, int threads, int repeats = 3);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_MACHINE_PEAK_H_
