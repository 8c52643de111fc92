// Learning-rate schedules, as Hugging Face's get_scheduler lambdas (Jelassi et al. use "linear"
// with 100 warmup steps; Jelassi et al. 2024, train_utils.py): the update with 0-based index `step` uses
// LearningRate(step), so the very first update has lr 0 under warmup, exactly as the PyTorch pipeline.
//
//   Schedule s{Schedule::kLinear, /*peak_lr=*/1e-3, /*warmup_steps=*/100, /*total_steps=*/5000};
//   double lr = s.LearningRate(step);
#ifndef MIMETIC_TRAIN_SCHEDULE_H_
#define MIMETIC_TRAIN_SCHEDULE_H_

#include <cstdint>

#include "absl/status/status.h"

namespace mimetic::train {

struct Schedule {
  enum Kind { kConstant, kLinear, kCosine };
  Kind kind = kLinear;
  double peak_lr = 1e-3;
  int64_t warmup_steps = 100;
  int64_t total_steps = 1000;
  // Decay ends at peak_lr * final_fraction (0 = HF's schedules; the Achilles setup uses a floor).
  double final_fraction = 0.0;

  double LearningRate(int64_t step) const;
  // InvalidArgument naming the field when a value is out of range.
  absl::Status Validate() const;
};

}  // namespace mimetic::train

#endif  // MIMETIC_TRAIN_SCHEDULE_H_
