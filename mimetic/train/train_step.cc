#include "mimetic/train/train_step.h"

#include <cmath>
#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/models/lm.h"
#include "mimetic/ops/cross_entropy/cross_entropy.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::train {

namespace {
constexpr char kDivergenceUrl[] = "type.mimetic/train.Divergence";
}  // namespace

absl::Status DivergenceError(const std::string& message) {
  absl::Status s = absl::InternalError(message);
  s.SetPayload(kDivergenceUrl, absl::Cord("1"));
  return s;
}

bool IsDivergence(const absl::Status& status) { return status.GetPayload(kDivergenceUrl).has_value(); }

absl::StatusOr<TrainState> InitTrainState(const ParamTree& params) {
  TrainState s;
  s.params = params;
  for (ParamTree* moment : {&s.m, &s.v}) {
    std::vector<Tensor> zeros;
    for (const Tensor& t : params.Leaves()) {
      ASSIGN_OR_RETURN(Tensor z, Tensor::Zeros(t.shape(), t.dtype(), t.device()));
      zeros.push_back(z);
    }
    ASSIGN_OR_RETURN(*moment, params.WithLeaves(zeros));
  }
  return s;
}

Tensor LossOf(const ParamTree& params, const models::ModelSpec& spec, const data::Batch& batch) {
  return ops::MaskedCrossEntropy(models::Apply(params, spec, batch.tokens), batch.targets, batch.loss_mask);
}

TrainStep::TrainStep(models::ModelSpec spec, OptimizerConfig config)
    : spec_(std::move(spec)),
      config_(std::move(config)),
      jit_([this](absl::Span<const ParamTree> in) { return Traced(in); }, "train_step") {}

// The step's input trees: params, m, v (one structure) and `step`: lr_and_bias (3) = [lr,
// 1 - beta1^t, 1 - beta2^t], tokens, targets, loss_mask. Outputs: params, m, v and `metrics`: loss,
// grad_norm.
namespace {
constexpr char kLrAndBias[] = "lr_and_bias";
constexpr char kTokens[] = "tokens";
constexpr char kTargets[] = "targets";
constexpr char kLossMask[] = "loss_mask";
constexpr char kLoss[] = "loss";
constexpr char kGradNorm[] = "grad_norm";

// The global gradient norm and torch.nn.utils.clip_grad_norm_'s coefficient
// min(1, max_norm / (norm + 1e-6)) (1 when max_norm <= 0).
std::pair<Tensor, Tensor> NormAndClipCoefficient(const ParamTree& grads, double max_norm) {
  Tensor total;
  for (const Tensor& g : grads.Leaves()) {
    Tensor sq = ops::SumAll(ops::Square(g));
    total = total.ok() ? ops::Add(total, sq) : sq;
  }
  Tensor norm = ops::Sqrt(total);
  Tensor coef = core::Fill(norm.meta(), 1.0);
  if (max_norm > 0) {
    Tensor raw = ops::Div(core::Fill(norm.meta(), max_norm), ops::AddScalar(norm, 1e-6));
    coef = ops::Neg(ops::Maximum(ops::Neg(raw), core::Fill(norm.meta(), -1.0)));  // min(raw, 1)
  }
  return {norm, coef};
}
}  // namespace

absl::StatusOr<std::vector<ParamTree>> TrainStep::Traced(absl::Span<const ParamTree> in) {
  const ParamTree& params = in[0];
  const ParamTree& m = in[1];
  const ParamTree& v = in[2];
  const ParamTree& step = in[3];
  ASSIGN_OR_RETURN(Tensor lr_and_bias, step.Get(kLrAndBias));
  data::Batch batch;
  ASSIGN_OR_RETURN(batch.tokens, step.Get(kTokens));
  ASSIGN_OR_RETURN(batch.targets, step.Get(kTargets));
  ASSIGN_OR_RETURN(batch.loss_mask, step.Get(kLossMask));
  auto loss_fn = [this, &batch](const ParamTree& p, absl::Span<const Tensor>) {
    return LossOf(p, spec_, batch);
  };
  ASSIGN_OR_RETURN(core::ValueAndGradResult vg, core::ValueAndGrad(loss_fn)(params, {}));
  const auto [norm, coef] = NormAndClipCoefficient(vg.grads, config_.max_grad_norm);
  Tensor scalars = ops::Concat({lr_and_bias, ops::Reshape(coef, {1})}, 0);
  std::vector<Tensor> new_p, new_m, new_v;
  for (size_t i = 0; i < params.size(); ++i) {
    ops::AdamWHyper hyper = config_.adamw;
    for (const std::string& glob : config_.no_decay_globs) {
      if (ParamTree::GlobMatch(glob, params.Paths()[i])) hyper.weight_decay = 0;
    }
    ops::AdamWResult r = ops::AdamWUpdate(params.Leaves()[i], vg.grads.Leaves()[i], m.Leaves()[i],
                                          v.Leaves()[i], scalars, hyper);
    new_p.push_back(r.param);
    new_m.push_back(r.m);
    new_v.push_back(r.v);
  }
  ASSIGN_OR_RETURN(ParamTree metrics, ParamTree::FromPairs({{kLoss, vg.value}, {kGradNorm, norm}}));
  ASSIGN_OR_RETURN(ParamTree out_p, params.WithLeaves(std::move(new_p)));
  ASSIGN_OR_RETURN(ParamTree out_m, m.WithLeaves(std::move(new_m)));
  ASSIGN_OR_RETURN(ParamTree out_v, v.WithLeaves(std::move(new_v)));
  return std::vector<ParamTree>{out_p, out_m, out_v, metrics};
}

absl::Status CheckFinite(const TrainState& state) {
  const std::pair<const char*, const ParamTree*> trees[] = {
      {"parameter", &state.params}, {"first moment of", &state.m}, {"second moment of", &state.v}};
  for (const auto& [what, tree] : trees) {
    ASSIGN_OR_RETURN(std::optional<core::NonFiniteLeaf> bad, core::FindNonFinite(*tree));
    if (bad.has_value()) {
      return DivergenceError(absl::StrCat("training diverged by step ", state.step, ": ", what, " '",
                                          bad->path, "' holds ", bad->count, " of ", bad->numel,
                                          " values that are NaN or infinite"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<StepMetrics> TrainStep::operator()(TrainState* state, const data::Batch& batch, double lr) {
  RETURN_IF_ERROR(state->m.CheckSameStructure(state->params));
  RETURN_IF_ERROR(state->v.CheckSameStructure(state->params));
  if (structure_.empty()) {
    structure_ = state->params;
  } else {
    RETURN_IF_ERROR(structure_.CheckSameStructure(state->params));
  }
  const double t = static_cast<double>(state->step + 1);
  const double bc1 = 1 - std::pow(config_.adamw.beta1, t), bc2 = 1 - std::pow(config_.adamw.beta2, t);
  const core::DType dtype = state->params.Leaves()[0].dtype();
  Tensor scalars;
  if (dtype == core::DType::kF64) {
    ASSIGN_OR_RETURN(scalars, Tensor::FromHost<double>({3}, {lr, bc1, bc2}));
  } else {
    ASSIGN_OR_RETURN(scalars, Tensor::FromHost<float>({3}, {float(lr), float(bc1), float(bc2)}));
  }
  // Made on the host each step; the traced step concatenates them with the clip coefficient, which
  // lives where the parameters do (ops refuse mixed devices).
  ASSIGN_OR_RETURN(scalars, scalars.ToDevice(state->params.Leaves()[0].device()));
  ASSIGN_OR_RETURN(ParamTree step_inputs, ParamTree::FromPairs({{kLrAndBias, scalars},
                                                                {kTokens, batch.tokens},
                                                                {kTargets, batch.targets},
                                                                {kLossMask, batch.loss_mask}}));
  ASSIGN_OR_RETURN(std::vector<ParamTree> out, jit_({state->params, state->m, state->v, step_inputs}));
  StepMetrics metrics;
  metrics.lr = lr;
  ASSIGN_OR_RETURN(Tensor loss, out[3].Get(kLoss));
  ASSIGN_OR_RETURN(Tensor norm, out[3].Get(kGradNorm));
  if (dtype == core::DType::kF64) {
    ASSIGN_OR_RETURN(metrics.loss, loss.Item<double>());
    ASSIGN_OR_RETURN(metrics.grad_norm, norm.Item<double>());
  } else {
    ASSIGN_OR_RETURN(float loss32, loss.Item<float>());
    ASSIGN_OR_RETURN(float norm32, norm.Item<float>());
    metrics.loss = loss32;
    metrics.grad_norm = norm32;
  }
  if (!std::isfinite(metrics.loss)) {
    return DivergenceError(absl::StrCat("training diverged at step ", state->step, ": loss ", metrics.loss,
                                        " (lr ", lr, "); the state before this step is kept"));
  }
  // A finite loss with an overflowing gradient would clip by max_norm / inf = 0 and write NaN (0 * inf).
  if (!std::isfinite(metrics.grad_norm)) {
    return DivergenceError(absl::StrCat("training diverged at step ", state->step, ": gradient norm ",
                                        metrics.grad_norm, " (lr ", lr,
                                        "); the state before this step is kept"));
  }
  state->params = std::move(out[0]);
  state->m = std::move(out[1]);
  state->v = std::move(out[2]);
  ++state->step;
  return metrics;
}

}  // namespace mimetic::train
