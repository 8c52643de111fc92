#include "mimetic/experiments/config/memory_estimate.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/key.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/models/proj_layout.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

constexpr double kFloat = 4;  // bytes: every tensor of a run is f32
// The process before its tensors: code, shared libraries, protobuf descriptors, the first thread's
// stack and OpenBLAS's state; a one-layer width-16 model peaks at 15 MB.
constexpr double kProcessBytes = 16.0 * 1024 * 1024;

// What one block (a layer's mixer, or its MLP) holds per token while the first training step is
// traced (core/jit.h): the step runs eagerly once under the autodiff tape, which keeps every output
// of every op it recorded until the backward pass ends (core/autodiff.cc), and the backward keeps
// each of those outputs' cotangents in its map until it returns. Views (reshapes) share storage and
// cost nothing; a bias add is an op of its own, while its cotangent is its input's.
struct Block {
  int64_t params = 0;
  int64_t forward = 0;    // floats per token of the block's recorded outputs
  int64_t cotangent = 0;  // floats per token of their cotangents
  int64_t live = 0;       // floats per token a forward-only (evaluation) plan holds at once; for
                          // the mixers all their outputs, a bound (it frees parts as it goes)
  int64_t scratch = 0;    // floats of per-thread scratch outside the tensors, one thread
};

// T: the row length; a scan's last_state (one state per row) is spread over the row's tokens.
Block Mamba2Block(const models::Mamba2Spec& s, int64_t D, int64_t T) {
  const models::Mamba2Dims d = models::Mamba2DimsOf(s, D);
  const models::Mamba2InProj in_proj = models::Mamba2InProjOf(d);
  const int64_t rows = in_proj.rows(), conv = in_proj.xBC().size;
  Block b;
  b.params = D * rows + conv * (d.K + 1) + 3 * d.H + d.E + d.E * D;
  // norm; in_proj's parts [z|x|B|C|dt] (+ their bias adds); the conv's SiLU and its pre-activation
  // (kept for the backward); the scan's y and last_state; the gated norm; out_proj (+ bias); the
  // residual add.
  b.forward = D + rows * (s.bias() ? 2 : 1) + 2 * conv + d.E + d.H * d.P * d.N / std::max<int64_t>(T, 1) +
              d.E + D * (s.bias() ? 2 : 1) + D;
  // The same less the conv's pre-activation, last_state (neither gets a cotangent) and the adds.
  b.cotangent = D + rows + conv + d.E + d.E + D;
  b.live = b.forward;
  // The scan's chunk-boundary states are per-thread scratch of one (row, head group), not per token.
  return b;
}

Block Mamba1Block(const models::Mamba1Spec& s, int64_t D, int64_t T) {
  const models::Mamba1Dims d = models::Mamba1DimsOf(s, D);
  Block b;
  b.params =
      D * 2 * d.E + d.E * (d.K + 1) + d.E * (d.R + 2 * d.N) + d.R * d.E + d.E + d.E * d.N + d.E + d.E * D;
  // norm; in_proj's x and z (+ bias adds); the conv's SiLU and pre-activation; x_proj's [dt|B|C];
  // dt_proj; the scan's y and last_state; out_proj (+ bias); the residual add.
  b.forward = D + 2 * d.E * (s.bias() ? 2 : 1) + 2 * d.E + d.R + 2 * d.N + d.E + d.E +
              d.E * d.N / std::max<int64_t>(T, 1) + D * (s.bias() ? 2 : 1) + D;
  b.cotangent = D + 2 * d.E + d.E + d.R + 2 * d.N + d.E + d.E + D;
  b.live = b.forward;
  // The scan's backward recomputes its states in per-thread scratch of a few chunks x N, not per token.
  return b;
}

Block AttentionBlock(const models::AttentionSpec& s, int64_t D, int64_t T) {
  const models::AttentionDims d = models::AttentionDimsOf(s, D);
  const int64_t hp = d.H * d.P;
  Block b;
  b.params = 3 * hp * D + (s.qkv_bias() ? 3 * hp : 0) + D * hp + (s.out_bias() ? D : 0);
  // norm; in_proj (+ bias add); q, k, v split off as copies; the output; out_proj (+ bias); the add.
  b.forward = D + 3 * hp * (s.qkv_bias() ? 2 : 1) + 3 * hp + hp + D * (s.out_bias() ? 2 : 1) + D;
  // norm; in_proj's (the concatenation of dq, dk, dv) and dq, dk, dv themselves; the output; out_proj.
  b.cotangent = D + 3 * hp + 3 * hp + hp + D;
  b.live = b.forward;
  // The backward recomputes one head's (L, L) probabilities next to their gradient, per thread
  // (ops/attention/attention_cpu.cc); no (B, H, L, L) tensor is kept.
  b.scratch = 2 * T * T;
  return b;
}

Block LinearAttentionBlock(const models::LinearAttentionSpec& s, int64_t D) {
  const models::AttentionDims d = models::LinearAttentionDimsOf(s, D);
  const int64_t hp = d.H * d.P;
  Block b;
  b.params = 4 * D * hp;
  b.forward = D + 3 * hp + hp + D + D;  // norm; q, k, v projections; output; out_proj; the add
  b.cotangent = D + 3 * hp + hp + D;
  b.live = b.forward;
  return b;
}

Block MixerBlock(const models::LayerSpec& layer, int64_t D, int64_t T) {
  switch (layer.mixer_case()) {
    case models::LayerSpec::kMamba1:
      return Mamba1Block(layer.mamba1(), D, T);
    case models::LayerSpec::kMamba2:
      return Mamba2Block(layer.mamba2(), D, T);
    case models::LayerSpec::kAttention:
      return AttentionBlock(layer.attention(), D, T);
    case models::LayerSpec::kLinearAttention:
      return LinearAttentionBlock(layer.linear_attention(), D);
    case models::LayerSpec::MIXER_NOT_SET:
      break;
  }
  return Block{};
}

// GatedMLP (models/lm.cc): norm2; fc1's (2I); its halves y and gate, split off as copies (2I);
// SiLU(gate) (I); y * SiLU(gate) (I); fc2; the add. Cotangents: norm2, fc1's (the concatenation of
// the halves' cotangents), the halves', SiLU's, the product's, fc2's. A forward-only plan holds fc1's
// output and its halves at once (at the split), as SiLU and the product reuse their buffers.
Block MlpBlock(int64_t D, int64_t I) {
  Block b;
  b.params = 3 * D * I + 2 * D;
  b.forward = D + 2 * I + 2 * I + I + I + D + D;
  b.cotangent = D + 2 * I + 2 * I + I + I + D;
  b.live = 4 * I + D;
  return b;
}

// The whole model per token, summed over its blocks.
struct ModelCost {
  int64_t params = 0;
  int64_t forward = 0, cotangent = 0;  // floats per token
  int64_t widest_live = 0;             // the largest block's forward-only floats per token
  int64_t scratch = 0;                 // the largest block's per-thread scratch (floats)
};

ModelCost CostOf(const models::ModelSpec& spec, int64_t T) {
  const int64_t D = spec.d_model(), V = models::PaddedVocab(spec);
  ModelCost m;
  m.params = V * D + (spec.tie_embeddings() ? 0 : V * D) + 2 * D;
  // The embedding's output and the final norm's, then the logits over the padded vocabulary (the
  // cross-entropy's gradient flows to them whole).
  m.forward = D + D + V;
  m.cotangent = D + D + V;
  std::vector<Block> blocks;
  for (const models::LayerSpec& layer : spec.layers()) {
    blocks.push_back(MixerBlock(layer, D, T));
    blocks.back().params += 2 * D;  // its norm
    if (spec.d_intermediate() > 0) blocks.push_back(MlpBlock(D, spec.d_intermediate()));
  }
  for (const Block& b : blocks) {
    m.params += b.params;
    m.forward += b.forward;
    m.cotangent += b.cotangent;
    m.widest_live = std::max(m.widest_live, b.live);
    m.scratch = std::max(m.scratch, b.scratch);
  }
  return m;
}

// The row lengths an evaluation runs at (one jitted plan each, kept for the whole run) and the
// attention-map example's length, from one sampled example per length of the task that judges.
struct EvalShapes {
  std::set<int64_t> rows;
  int64_t map_length = 0;
};

EvalShapes EvalShapesOf(const Experiment& e) {
  EvalShapes s;
  absl::StatusOr<std::unique_ptr<data::Task>> task =
      MakeTask(e.eval().has_task() ? e.eval().task() : e.task());
  if (!task.ok()) return s;
  for (int len : e.eval().lengths()) {
    absl::StatusOr<data::EvalBatch> eb = (*task)->SampleEval(core::Key::FromSeed(0), 1, len);
    if (eb.ok()) s.rows.insert(eb->batch.tokens.dim(1));
  }
  // The map example (eval.map_length, else the first eval length) is cut after its answer.
  const int map_len = e.eval().map_length() > 0 ? e.eval().map_length()
                                                : (e.eval().lengths().empty() ? 0 : e.eval().lengths(0));
  absl::StatusOr<data::EvalBatch> eb = (*task)->SampleEval(core::Key::FromSeed(0), 1, map_len);
  if (eb.ok()) {
    s.map_length = eb->batch.tokens.dim(1);
    if (!eb->answer_positions.empty() && !eb->answer_positions[0].empty())
      s.map_length = std::min(s.map_length, eb->answer_positions[0].back() + 2);
  }
  return s;
}

std::string GiB(double bytes) { return absl::StrFormat("%.1f GiB", bytes / (1024.0 * 1024 * 1024)); }

// The bytes of each phase of a point's run; the process peaks in the largest.
struct Phases {
  int64_t params = 0, batch = 0, row = 0, map_length = 0;
  double weights = 0;  // one copy of the parameters
  double trace = 0, update = 0, steady = 0, end = 0;
  double kept = 0, evaluation = 0, maps = 0;  // parts of steady and end, for the message
};

Phases PhasesOf(const Experiment& e) {
  const models::ModelSpec& spec = VariantModel(e, e.variants(0));
  const int64_t D = spec.d_model(), V = models::PaddedVocab(spec);
  absl::StatusOr<std::unique_ptr<data::Task>> task = MakeTask(e.task());
  Phases p;
  p.batch = e.train().batch_size();
  p.row = task.ok() ? (*task)->seq_len() : 0;
  const ModelCost c = CostOf(spec, p.row);
  const EvalShapes eval = EvalShapesOf(e);
  const double tokens = static_cast<double>(p.batch) * p.row, P = kFloat * c.params;
  const double scratch = kFloat * c.scratch;
  p.params = c.params;
  p.weights = P;
  // The first step, traced (see Block): the weights (shared with the trainer's copy) and both zero
  // moments, every activation and its cotangent, the gradients, and with tied embeddings the head's
  // weight gradient next to its sum with the embedding's.
  const double tied_head = spec.tie_embeddings() ? 2 * kFloat * V * D : 0;
  p.trace = 3 * P + P + kFloat * tokens * (c.forward + c.cotangent) + tied_head + scratch;
  // Its AdamW update, after the tape is gone: old weights and moments, gradients, new ones.
  p.update = 7 * P;
  // Evaluation: each row length's forward plan holds its logits and the widest block's outputs for
  // the whole run; Score copies the logits to the host vector it ranks.
  double score = 0;
  for (int64_t rows : eval.rows) {
    const double eval_tokens = static_cast<double>(e.eval().batch_size()) * rows;
    p.evaluation += kFloat * eval_tokens * (V + c.widest_live);
    score = std::max(score, kFloat * eval_tokens * V);
  }
  p.evaluation += score;
  // Replayed steps: the trainer's initial weights, the step's two output sets (used alternately) and
  // its plan, which keeps the forward values the backward reads (about every one), the logits'
  // gradient next to them, and the gradients; the evaluation plans stay too.
  p.kept = kFloat * tokens * (c.forward + V) + scratch;
  p.steady = P + 6 * P + P + p.kept + p.evaluation;
  // The end: the step's plan is gone; the attention maps come on top of the evaluation plans. Each
  // layer's L x L map and mask (doubles) are kept together, 16 L^2 bytes; counted twice over for what
  // computing one takes (softmax weights, host copies). memory_estimate_test draws no maps.
  p.map_length = eval.map_length;
  p.maps = 32.0 * spec.layers_size() * static_cast<double>(p.map_length) * p.map_length;
  p.end = 4 * P + p.evaluation - score + std::max(score, p.maps);
  return p;
}

std::string Describe(const Phases& p, int eval_batch) {
  const double peak = std::max({p.trace, p.update, p.steady, p.end});
  const std::string params = absl::StrFormat("%.1fM parameters", p.params / 1e6);
  if (peak == p.trace) {
    return absl::StrFormat(
        "%s; the first training step: weights, gradients and AdamW moments %s + every activation and its "
        "gradient for %d x %d tokens %s",
        params, GiB(4 * p.weights), p.batch, p.row, GiB(p.trace - 4 * p.weights));
  }
  if (peak == p.update) {
    return absl::StrFormat("%s; the AdamW update: old and new weights and moments and the gradients %s",
                           params, GiB(p.update));
  }
  if (peak == p.steady) {
    return absl::StrFormat(
        "%s; training with evaluation: weights, both step outputs, gradients and AdamW moments %s + the "
        "step's activations of %d x %d tokens %s + evaluation (batches of %d) %s",
        params, GiB(8 * p.weights), p.batch, p.row, GiB(p.kept), eval_batch, GiB(p.evaluation));
  }
  return absl::StrFormat("%s; after training: weights and moments %s + attention maps of length %d %s",
                         params, GiB(4 * p.weights), p.map_length, GiB(p.maps));
}

}  // namespace

MemoryEstimate EstimateTrainingMemory(const Experiment& e) {
  const Phases p = PhasesOf(e);
  MemoryEstimate m;
  m.params = p.params;
  // Clamped so that the fuzzed extremes of every field stay representable.
  m.bytes =
      static_cast<int64_t>(std::min(kProcessBytes + std::max({p.trace, p.update, p.steady, p.end}), 9e18));
  m.detail = Describe(p, e.eval().batch_size());
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
