#include "mimetic/experiments/config/room.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace mimetic::experiments {

std::optional<int> KeyDimension(const models::ModelSpec& spec, int layer) {
  if (layer < 0 || layer >= spec.layers_size()) return std::nullopt;
  const models::LayerSpec& l = spec.layers(layer);
  const int d = spec.d_model();
  switch (l.mixer_case()) {
    case models::LayerSpec::kMamba1:
      return std::min(l.mamba1().d_state(), l.mamba1().expand() * d);
    case models::LayerSpec::kMamba2:
      return std::min(l.mamba2().d_state(), d);
    case models::LayerSpec::kLinearAttention:
      return std::min(l.linear_attention().head_dim(), d);
    case models::LayerSpec::kAttention:
    case models::LayerSpec::MIXER_NOT_SET:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int> MinKeyDimension(const models::ModelSpec& spec) {
  std::optional<int> smallest;
  for (int i = 0; i < spec.layers_size(); ++i) {
    const std::optional<int> k = KeyDimension(spec, i);
    if (k && (!smallest || *k < *smallest)) smallest = k;
  }
  return smallest;
}

std::optional<int> RecallKeyLimit(const models::ModelSpec& spec) {
  for (const models::LayerSpec& l : spec.layers()) {
    if (l.has_attention()) return std::nullopt;
  }
  return MinKeyDimension(spec);
}

std::string KeyDimensionText(const models::ModelSpec& spec) {
  const std::optional<int> smallest = MinKeyDimension(spec);
  if (!smallest) return "";
  for (int i = 0; i < spec.layers_size(); ++i) {
    if (KeyDimension(spec, i) != smallest) continue;
    const models::LayerSpec& l = spec.layers(i);
    const int d = spec.d_model();
    switch (l.mixer_case()) {
      case models::LayerSpec::kMamba1:
        return absl::StrCat("Mamba 1 key min(N ", l.mamba1().d_state(), ", E ", l.mamba1().expand() * d,
                            ") = ", *smallest);
      case models::LayerSpec::kMamba2:
        return absl::StrCat("Mamba 2 key min(N ", l.mamba2().d_state(), ", D ", d, ") = ", *smallest);
      default:
        return absl::StrCat("linear attention key min(head dim ", l.linear_attention().head_dim(), ", D ", d,
                            ") = ", *smallest);
    }
  }
  return "";
}

std::optional<int64_t> ExampleTokens(const TaskSpec& task, int length) {
  if (task.has_copy()) return 2 * static_cast<int64_t>(length) + 3;
  if (task.has_mqar_copy()) return 4 * static_cast<int64_t>(length) + 3;
  return std::nullopt;
}

std::optional<int64_t> TrainingRowTokens(const TaskSpec& task) {
  if (task.has_copy()) return static_cast<int64_t>(task.copy().context_len()) + 1;
  if (task.has_mqar_copy()) return static_cast<int64_t>(task.mqar_copy().context_len()) + 1;
  return std::nullopt;
}

int RecalledItems(const TaskSpec& task, int length) {
  if (!task.has_mqar() || task.mqar().seq_len() <= 0) return length;
  return std::max<int>(1, static_cast<int64_t>(length) * task.mqar().num_kv_pairs() / task.mqar().seq_len());
}

int TrainLength(const TaskSpec& task) {
  if (task.has_copy()) return task.copy().max_len();
  if (task.has_mqar()) return task.mqar().seq_len();
  if (task.has_mqar_copy()) return task.mqar_copy().max_kv();
  return 0;
}

}  // namespace mimetic::experiments
