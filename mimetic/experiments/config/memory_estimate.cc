#include "mimetic/experiments/config/memory_estimate.h"

#include <fstream>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

struct LayerCost {
  int64_t params = 0;
  int64_t floats_per_token = 0;  // activations kept for the backward pass
};

LayerCost CostOf(const models::LayerSpec& layer, int64_t D, int64_t T) {
  LayerCost c;
  switch (layer.mixer_case()) {
    case models::LayerSpec::kMamba1: {
      const models::Mamba1Dims d = models::Mamba1DimsOf(layer.mamba1(), D);
      c.params =
          D * 2 * d.E + d.E * (d.K + 1) + d.E * (d.R + 2 * d.N) + d.R * d.E + d.E + d.E * d.N + d.E + d.E * D;
      // in_proj, conv in/out, x_proj, Δ, y, gate; chunk-boundary states (E x N every scan_chunk tokens).
      c.floats_per_token = 8 * d.E + d.R + 2 * d.N + d.E * d.N / std::max(1, layer.mamba1().scan_chunk());
      break;
    }
    case models::LayerSpec::kMamba2: {
      const models::Mamba2Dims d = models::Mamba2DimsOf(layer.mamba2(), D);
      const models::Mamba2InProj in_proj = models::Mamba2InProjOf(d);
      const int64_t rows = in_proj.rows(), conv_dim = in_proj.xBC().size;
      c.params = D * rows + conv_dim * (d.K + 1) + 3 * d.H + d.E + d.E * D;
      const int64_t chunk = std::max(1, layer.mamba2().chunk_size());
      c.floats_per_token = rows + 2 * conv_dim + 4 * d.E + d.H * d.P * d.N / chunk + d.H * chunk;
      break;
    }
    case models::LayerSpec::kAttention: {
      const models::AttentionDims d = models::AttentionDimsOf(layer.attention(), D);
      c.params = 4 * D * d.H * d.P + 4 * D;
      c.floats_per_token = 5 * d.H * d.P + d.H * std::min<int64_t>(T, 128);
      break;
    }
    case models::LayerSpec::kLinearAttention: {
      const models::AttentionDims d = models::LinearAttentionDimsOf(layer.linear_attention(), D);
      c.params = 4 * D * d.H * d.P;
      c.floats_per_token = 5 * d.H * d.P;
      break;
    }
    case models::LayerSpec::MIXER_NOT_SET:
      break;
  }
  c.floats_per_token += 6 * D;  // norm, residual, mixer output
  return c;
}

std::string GiB(double bytes) { return absl::StrFormat("%.1f GiB", bytes / (1024.0 * 1024 * 1024)); }

}  // namespace

MemoryEstimate EstimateTrainingMemory(const Experiment& e) {
  const models::ModelSpec& spec = VariantModel(e, e.variants(0));
  const int64_t D = spec.d_model(), V = models::PaddedVocab(spec);
  int64_t T = 0;
  switch (e.task().task_case()) {
    case TaskSpec::kCopy:
      T = e.task().copy().context_len();
      break;
    case TaskSpec::kMqar:
      T = e.task().mqar().seq_len();
      break;
    case TaskSpec::kMqarCopy:
      T = e.task().mqar_copy().context_len();
      break;
    default:
      break;
  }
  const int64_t B = e.train().batch_size();
  int64_t eval_len = 0;
  for (int len : e.eval().lengths()) eval_len = std::max<int64_t>(eval_len, 2 * len + 3);
  MemoryEstimate m;
  m.params = V * D + (spec.tie_embeddings() ? 0 : V * D) + 2 * D;
  int64_t per_token = 3 * V;  // logits, their softmax and gradient
  int64_t widest_layer = 0;
  for (const models::LayerSpec& layer : spec.layers()) {
    const LayerCost c = CostOf(layer, D, T);
    const int64_t mlp = spec.d_intermediate() > 0 ? 4 * spec.d_intermediate() : 0;
    m.params += c.params + 2 * D + (spec.d_intermediate() > 0 ? 3 * D * spec.d_intermediate() : 0);
    per_token += 2 * c.floats_per_token + mlp;
    widest_layer = std::max(widest_layer, 2 * c.floats_per_token + mlp);
  }
  // Training keeps every layer's activations for the backward pass; evaluation runs forward only, so
  // the buffer plan holds about one layer's tensors (and the logits) at a time.
  const double train_floats = static_cast<double>(B) * T * per_token;
  const double eval_floats =
      static_cast<double>(e.eval().batch_size()) * eval_len * (3 * V + 2 * widest_layer);
  // Parameters, gradients, two moments, and the jitted step's second copy of its outputs.
  const double state = 4.0 * 6 * m.params;
  const double activations = 4.0 * std::max(train_floats, eval_floats);
  // The attention maps at the end: an L x L map and mask (doubles) per layer, kept together, and as
  // much again while one is computed; L is the map example's length (prompt and answer).
  const int64_t map_len =
      2 * static_cast<int64_t>(e.eval().map_length() > 0
                                   ? e.eval().map_length()
                                   : (e.eval().lengths().empty() ? 0 : e.eval().lengths(0))) +
      3;
  const double maps = 32.0 * spec.layers_size() * static_cast<double>(map_len) * map_len;
  m.bytes = static_cast<int64_t>(state + std::max(activations, maps));
  m.detail = absl::StrFormat("%.1fM parameters with AdamW %s + activations of %d x %d tokens %s",
                             m.params / 1e6, GiB(state), B, T, GiB(activations));
  if (maps > activations)
    absl::StrAppend(&m.detail, absl::StrFormat(" (attention maps of length %d: %s)", map_len, GiB(maps)));
  return m;
}

int64_t AvailableMemoryBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit) {
    if (key == "MemAvailable:") return kb * 1024;
  }
  return 0;
}

absl::Status CheckMemory(const Experiment& e, const std::vector<GridPoint>& grid, int64_t limit, int jobs) {
  if (limit <= 0) {
    if (e.device() == "cuda") return absl::OkStatus();
    limit = AvailableMemoryBytes();
    if (limit <= 0) return absl::OkStatus();
  }
  const int64_t per_job = limit / std::max(1, jobs);
  std::set<std::string> seen;
  for (const GridPoint& p : grid) {
    const std::string key = absl::StrCat(p.variant, "|", absl::StrJoin(p.overrides, "|"));
    if (!seen.insert(key).second) continue;
    absl::StatusOr<Experiment> one = PointExperiment(e, p);
    if (!one.ok()) return one.status();
    const MemoryEstimate m = EstimateTrainingMemory(*one);
    if (m.bytes > per_job) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "grid point ", p.dir, " needs about ", GiB(m.bytes), " (", m.detail, ") but ",
          jobs > 1 ? absl::StrCat(GiB(per_job), " per job (", jobs, " jobs) of ") : "", GiB(limit),
          " is available; lower train.batch_size or the model size, use fewer --jobs, run on a GPU "
          "(device: cuda), or raise the limit with --max_memory_gb"));
    }
  }
  return absl::OkStatus();
}

}  // namespace mimetic::experiments
