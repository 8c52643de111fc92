#include "mimetic/experiments/results/chance.h"

#include <algorithm>
#include <cmath>

#include "mimetic/experiments/config/room.h"

namespace mimetic::experiments {

double ChanceLevel(const TaskSpec& task, int length, Metric metric) {
  const bool token = metric == Metric::kToken;
  if (task.has_mqar()) {
    const double pairs = std::max(1, RecalledItems(task, length));
    return token ? 1 / pairs : std::pow(1 / pairs, pairs);
  }
  if (task.has_mqar_copy()) return token ? 1.0 / std::max(1, length) : 0;
  if (task.has_copy()) {
    const double v = std::max(1, task.copy().vocab());
    return token ? 1 / v : std::pow(1 / v, std::max(1, length));
  }
  return 0;
}

double LearnedFloor(const TaskSpec& task, int length, Metric metric) {
  return ChanceLevel(task, length, metric) + kAboveChance;
}

}  // namespace mimetic::experiments
