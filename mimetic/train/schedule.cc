#include "mimetic/train/schedule.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace mimetic::train {

double Schedule::LearningRate(int64_t step) const {
  if (step < warmup_steps) {
    return peak_lr * static_cast<double>(step) / static_cast<double>(std::max<int64_t>(1, warmup_steps));
  }
  if (kind == kConstant) return peak_lr;
  const double span = static_cast<double>(std::max<int64_t>(1, total_steps - warmup_steps));
  const double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / span);
  const double factor = kind == kLinear ? 1.0 - progress : 0.5 * (1.0 + std::cos(M_PI * progress));
  return peak_lr * (final_fraction + (1.0 - final_fraction) * std::max(0.0, factor));
}

absl::Status Schedule::Validate() const {
  if (!(peak_lr > 0)) return absl::InvalidArgumentError(absl::StrCat("train.lr = ", peak_lr, "; expected > 0"));
  if (warmup_steps < 0) {
    return absl::InvalidArgumentError(absl::StrCat("train.warmup_steps = ", warmup_steps, "; expected >= 0"));
  }
  if (total_steps < 1) {
    return absl::InvalidArgumentError(absl::StrCat("train.steps = ", total_steps, "; expected >= 1"));
  }
  if (final_fraction < 0 || final_fraction > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("train.final_lr_fraction = ", final_fraction, "; expected in [0, 1]"));
  }
  return absl::OkStatus();
}

}  // namespace mimetic::train
