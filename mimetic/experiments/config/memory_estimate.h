// Refusing a sweep the machine cannot hold, before anything runs: an estimate of the memory one grid
// point's training needs (parameters, gradients and both AdamW moments, plus activations kept for the
// backward pass and the logits), compared with what the machine has.
//
//   MemoryEstimate m = EstimateTrainingMemory(point_experiment);   // m.bytes, m.detail
//   RETURN_IF_ERROR(CheckMemory(experiment, grid, /*limit_bytes=*/0, /*jobs=*/2));
//
// The estimate is deliberately rough (within a factor of ~2 of the measured peak at the sizes we
// train); its job is to stop a 24-layer, width-1024 paper preset from swapping a laptop to death,
// not to budget memory to the byte.
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
