#include "mimetic/train/train_step.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/builtin_ops.h"
#include "mimetic/models/lm.h"
#include "mimetic/ops/cross_entropy/cross_entropy.h"
#include "mimetic/ops/elementwise/elementwise.h"
#include "mimetic/ops/reduce/reduce.h"
#include "mimetic/ops/shape/shape.h"

namespace mimetic::train {

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
      jit_([this](absl::Span<const Tensor> in) { return Traced(in); }, "train_step") {}

// inputs: params (n) | m (n) | v (n) | scalars (3) = [lr, 1 - beta1^t, 1 - beta2^t] | tokens | targets | mask
// outputs: params (n) | m (n) | v (n) | loss | grad_norm
std::vector<Tensor> TrainStep::Traced(absl::Span<const Tensor> in) {
  const size_t n = structure_.size();
  ParamTree params = structure_.WithLeaves(std::vector<Tensor>(in.begin(), in.begin() + n)).value();
  const Tensor& scalars = in[3 * n];
  data::Batch batch{in[3 * n + 1], in[3 * n + 2], in[3 * n + 3]};
  auto loss_fn = [this, &batch](const ParamTree& p, absl::Span<const Tensor>) { return LossOf(p, spec_, batch); };
  absl::StatusOr<core::ValueAndGradResult> vg = core::ValueAndGrad(loss_fn)(params, {});
  if (!vg.ok()) return {Tensor::Error(vg.status())};
  // Global-norm clipping as torch.nn.utils.clip_grad_norm_: coef = min(1, max_norm / (norm + 1e-6)).
  Tensor total;
  for (const Tensor& g : vg->grads.Leaves()) {
    Tensor sq = ops::SumAll(ops::Square(g));
    total = total.ok() ? ops::Add(total, sq) : sq;
  }
  Tensor norm = ops::Sqrt(total);
  Tensor coef = core::Fill(norm.meta(), 1.0);
  if (config_.max_grad_norm > 0) {
    Tensor raw = ops::Div(core::Fill(norm.meta(), config_.max_grad_norm), ops::AddScalar(norm, 1e-6));
    coef = ops::Neg(ops::Maximum(ops::Neg(raw), core::Fill(norm.meta(), -1.0)));  // min(raw, 1)
  }
  Tensor all_scalars = ops::Concat({scalars, ops::Reshape(coef, {1})}, 0);
  std::vector<Tensor> new_p, new_m, new_v;
  for (size_t i = 0; i < n; ++i) {
    const std::string& path = structure_.Paths()[i];
    ops::AdamWHyper hyper = config_.adamw;
    for (const std::string& glob : config_.no_decay_globs) {
      if (ParamTree::GlobMatch(glob, path)) hyper.weight_decay = 0;
    }
    ops::AdamWResult r = ops::AdamWUpdate(in[i], vg->grads.Leaves()[i], in[n + i], in[2 * n + i], all_scalars, hyper);
    new_p.push_back(r.param);
    new_m.push_back(r.m);
    new_v.push_back(r.v);
  }
  std::vector<Tensor> out;
  out.reserve(3 * n + 2);
  for (auto* group : {&new_p, &new_m, &new_v}) out.insert(out.end(), group->begin(), group->end());
  out.push_back(vg->value);
  out.push_back(norm);
  return out;
}

absl::StatusOr<StepMetrics> TrainStep::operator()(TrainState* state, const data::Batch& batch, double lr) {
  RETURN_IF_ERROR(state->m.CheckSameStructure(state->params));
  RETURN_IF_ERROR(state->v.CheckSameStructure(state->params));
  if (structure_.empty()) {
    structure_ = state->params;
  } else {
    RETURN_IF_ERROR(structure_.CheckSameStructure(state->params));
  }
  const size_t n = state->params.size();
  const double t = static_cast<double>(state->step + 1);
  const double bc1 = 1 - std::pow(config_.adamw.beta1, t), bc2 = 1 - std::pow(config_.adamw.beta2, t);
  const core::DType dtype = state->params.Leaves()[0].dtype();
  Tensor scalars;
  if (dtype == core::DType::kF64) {
    ASSIGN_OR_RETURN(scalars, Tensor::FromHost<double>({3}, {lr, bc1, bc2}));
  } else {
    ASSIGN_OR_RETURN(scalars, Tensor::FromHost<float>({3}, {float(lr), float(bc1), float(bc2)}));
  }
  std::vector<Tensor> inputs;
  inputs.reserve(3 * n + 4);
  for (const ParamTree* tree : {&state->params, &state->m, &state->v}) {
    inputs.insert(inputs.end(), tree->Leaves().begin(), tree->Leaves().end());
  }
  inputs.push_back(scalars);
  inputs.push_back(batch.tokens);
  inputs.push_back(batch.targets);
  inputs.push_back(batch.loss_mask);
  ASSIGN_OR_RETURN(std::vector<Tensor> out, jit_(inputs));
  StepMetrics metrics;
  metrics.lr = lr;
  if (dtype == core::DType::kF64) {
    ASSIGN_OR_RETURN(metrics.loss, out[3 * n].Item<double>());
    ASSIGN_OR_RETURN(metrics.grad_norm, out[3 * n + 1].Item<double>());
  } else {
    ASSIGN_OR_RETURN(float loss, out[3 * n].Item<float>());
    ASSIGN_OR_RETURN(float norm, out[3 * n + 1].Item<float>());
    metrics.loss = loss;
    metrics.grad_norm = norm;
  }
  if (!std::isfinite(metrics.loss)) {
    return absl::InternalError(absl::StrCat("training diverged at step ", state->step, ": loss ", metrics.loss,
                                            " (lr ", lr, "); the state before this step is kept"));
  }
  // Release the inputs' leaves before taking the outputs, so Jit can reuse their buffers.
  std::vector<Tensor> p(out.begin(), out.begin() + n), m(out.begin() + n, out.begin() + 2 * n),
      v(out.begin() + 2 * n, out.begin() + 3 * n);
  inputs.clear();
  ASSIGN_OR_RETURN(state->params, state->params.WithLeaves(std::move(p)));
  ASSIGN_OR_RETURN(state->m, state->m.WithLeaves(std::move(m)));
  ASSIGN_OR_RETURN(state->v, state->v.WithLeaves(std::move(v)));
  ++state->step;
  return metrics;
}

}  // namespace mimetic::train
