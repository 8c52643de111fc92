// Refusing a sweep the machine cannot hold, before anything runs: an estimate of the peak memory of
// one grid point's training process, compared with what the machine has.
//
//   MemoryEstimate m = EstimateTrainingMemory(point_experiment);   // m.bytes, m.detail
//   RETURN_IF_ERROR(CheckMemory(experiment, grid, /*limit_bytes=*/0, /*jobs=*/2));
//
// The peak is the largest of the run's phases, each counted tensor by tensor from the code that
// allocates them: the first training step, which is traced eagerly and keeps every activation and its
// cotangent until the backward pass ends; its AdamW update; the replayed steps with their buffer plan,
// both output sets and the evaluation plans (logits over the padded vocabulary); the end, with the
// attention maps. memory_estimate_test runs the runner on shapes that stress each term (a wide MLP, a
// wide vocabulary, Mamba 2 with a large state, softmax attention, long rows, Mamba 1) and checks the
// estimate is within 25% of each process's peak resident memory (one thread; glibc's heap keeps up
// to ~15% more than the live tensors after the first step). Not counted: each extra worker thread's
// scratch, mostly OpenBLAS's GEMM packing buffer (up to ~32 MiB a thread).
#ifndef MIMETIC_EXPERIMENTS_MEMORY_ESTIMATE_H_
#define MIMETIC_EXPERIMENTS_MEMORY_ESTIMATE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/experiments/config/sweep.h"

namespace mimetic::experiments {

struct MemoryEstimate {
  int64_t params = 0;  // parameter count
  int64_t bytes = 0;   // estimated peak bytes of one training process
  std::string detail;  // "150.2M parameters with AdamW 2.4 GiB + activations of 32 x 256 tokens 28.8 GiB"
};

// `experiment` must be resolved (a point experiment).
MemoryEstimate EstimateTrainingMemory(const Experiment& experiment);

// The memory this machine has available (MemAvailable in /proc/meminfo), or 0 when unknown.
int64_t AvailableMemoryBytes();

// ResourceExhausted naming the first grid point (and its estimate) that needs more than `limit_bytes`
// / `jobs` (limit 0: the available memory; CUDA experiments are not checked without a limit).
absl::Status CheckMemory(const Experiment& experiment, const std::vector<GridPoint>& grid,
                         int64_t limit_bytes, int jobs);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_MEMORY_ESTIMATE_H_
