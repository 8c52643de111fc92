#include "mimetic/train/train_step.h"

#include <cmath>
#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/random.h"
#include "mimetic/data/copy_task.h"
#include "mimetic/init/mimetic.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/adamw/adamw.h"
#include "mimetic/train/schedule.h"

namespace mimetic::train {
namespace {

models::ModelSpec Spec() {
  return models::ParseModelSpec(
             "vocab_size: 8 d_model: 32 n_layer: 2 default_layer { mamba2 { d_state: 8 headdim: 16 "
             "chunk_size: 16 } }")
      .value();
}

std::unique_ptr<data::Task> Copy() {
  data::CopyTaskConfig c;
  c.vocab = 4;
  c.min_len = 2;
  c.max_len = 6;
  c.context_len = 32;
  return data::MakeCopyTask(c).value();
}

std::vector<double> Train(int steps, uint64_t seed, TrainState* out = nullptr) {
  models::ModelSpec spec = Spec();
  auto task = Copy();
  TrainState state = InitTrainState(models::Init(core::Key::FromSeed(seed), spec).value()).value();
  TrainStep step(spec, OptimizerConfig{});
  Schedule sched{Schedule::kLinear, 3e-3, 5, steps};
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    data::Batch b = task->SampleTrain(core::FoldIn(core::Key::FromSeed(seed + 1), i), 16).value();
    StepMetrics m = step(&state, b, sched.LearningRate(state.step)).value();
    losses.push_back(m.loss);
  }
  EXPECT_EQ(step.num_traces(), 1);
  if (out) *out = state;
  return losses;
}

TEST(TrainStepTest, LossDecreasesAndTheStepIsTracedOnce) {
  std::vector<double> losses = Train(40, 1);
  double first = 0, last = 0;
  for (int i = 0; i < 5; ++i) first += losses[i] / 5, last += losses[35 + i] / 5;
  EXPECT_LT(last, first - 0.3) << "first " << first << " last " << last;
}

TEST(TrainStepTest, DivergenceIsRecognisedByItsTypeNotItsMessage) {
  EXPECT_TRUE(IsDivergence(DivergenceError("training diverged at step 3")));
  EXPECT_FALSE(IsDivergence(absl::InternalError("training diverged at step 3")));
  EXPECT_FALSE(IsDivergence(absl::OkStatus()));
}

TEST(TrainStepTest, SameSeedGivesIdenticalLosses) { EXPECT_EQ(Train(6, 3), Train(6, 3)); }

// One step replayed by the jit against the same step run eagerly, for `spec` on copy rows of
// `context_len` tokens.
void ExpectReplayEqualsEager(const models::ModelSpec& spec, int64_t context_len) {
  data::CopyTaskConfig c;
  c.vocab = 4;
  c.min_len = 2;
  c.max_len = 6;
  c.context_len = context_len;
  auto task = data::MakeCopyTask(c).value();
  core::ParamTree params = models::Init(core::Key::FromSeed(2), spec).value();
  TrainState state = InitTrainState(params).value();
  TrainStep step(spec, OptimizerConfig{});
  data::Batch b0 = task->SampleTrain(core::Key::FromSeed(10), 8).value();
  data::Batch b1 = task->SampleTrain(core::Key::FromSeed(11), 8).value();
  step(&state, b0, 1e-3).value();  // trace (eager)
  TrainState replayed = state;
  step(&replayed, b1, 2e-3).value();  // replay
  // The same second step run eagerly by a fresh TrainStep (whose first call traces = eager).
  TrainState eager = state;
  TrainStep fresh(spec, OptimizerConfig{});
  fresh(&eager, b1, 2e-3).value();
  for (const std::string& path : params.Paths()) {
    EXPECT_EQ(replayed.params.Get(path)->ToVector<float>().value(),
              eager.params.Get(path)->ToVector<float>().value())
        << path;
  }
}

TEST(TrainStepTest, JittedStepEqualsAnEagerStepBitForBit) { ExpectReplayEqualsEager(Spec(), 32); }

// Fig. 2's hybrid: softmax attention as layer index 1 of 3, rows of 70 tokens (three attention row
// blocks), so the attention forward and backward primitives are replayed too.
TEST(TrainStepTest, JittedHybridStepEqualsAnEagerStepBitForBit) {
  ExpectReplayEqualsEager(
      models::ParseModelSpec("vocab_size: 8 d_model: 32 n_layer: 3 default_layer { mamba2 { d_state: 8 "
                             "headdim: 16 chunk_size: 16 } } layer_overrides { index: 1 layer { attention "
                             "{ num_heads: 1 } } }")
          .value(),
      70);
}

TEST(TrainStepTest, BadBatchIsAStatusAndLeavesTheStateAlone) {
  models::ModelSpec spec = Spec();
  TrainState state = InitTrainState(models::Init(core::Key::FromSeed(2), spec).value()).value();
  TrainStep step(spec, OptimizerConfig{});
  data::Batch bad{core::Tensor::FromHost<int32_t>({1, 2}, {1, 500}).value(),
                  core::Tensor::FromHost<int32_t>({1, 2}, {1, 2}).value(),
                  core::Tensor::FromHost<float>({1, 2}, {1, 1}).value()};
  absl::Status s = step(&state, bad, 1e-3).status();
  EXPECT_THAT(s.message(), ::testing::HasSubstr("500"));
  EXPECT_EQ(state.step, 0);
}

// README "Divergence": a step whose loss is NaN stops the point as a divergence (the runner records it as
// diverged with accuracy 0) and leaves the state before the step.
TEST(TrainStepTest, ANonFiniteLossIsADivergenceAndKeepsTheState) {
  models::ModelSpec spec = Spec();
  TrainState state = InitTrainState(models::Init(core::Key::FromSeed(3), spec).value()).value();
  const std::string embedding = state.params.Paths()[0];
  state.params = state.params.MapWithPath([&](const std::string& path, const core::Tensor& t) {
    if (path != embedding) return t;
    return core::Tensor::FromHost<float>(t.shape(), std::vector<float>(t.numel(), std::nanf(""))).value();
  });
  const std::string last = state.params.Paths().back();
  const std::vector<float> before = state.params.Get(last).value().ToVector<float>().value();
  TrainStep step(spec, OptimizerConfig{});
  data::Batch b = Copy()->SampleTrain(core::Key::FromSeed(4), 4).value();
  absl::Status s = step(&state, b, 1e-3).status();
  EXPECT_TRUE(IsDivergence(s)) << s;
  EXPECT_THAT(s.message(), ::testing::HasSubstr("training diverged at step 0: loss nan"));
  EXPECT_EQ(state.step, 0);
  EXPECT_EQ(state.params.Get(last).value().ToVector<float>().value(), before);
}

TEST(CheckFiniteTest, NamesTheFirstNonFiniteLeafAsADivergence) {
  TrainState state = InitTrainState(models::Init(core::Key::FromSeed(1), Spec()).value()).value();
  EXPECT_TRUE(CheckFinite(state).ok());
  const std::string bad = state.v.Paths()[3];
  state.v = state.v.MapWithPath([&](const std::string& path, const core::Tensor& t) {
    if (path != bad) return t;
    std::vector<float> values(t.numel(), 0.5f);
    values[1] = std::numeric_limits<float>::infinity();
    return core::Tensor::FromHost<float>(t.shape(), values).value();
  });
  absl::Status s = CheckFinite(state);
  EXPECT_TRUE(IsDivergence(s));
  EXPECT_THAT(s.message(), ::testing::HasSubstr("second moment of '" + bad + "' holds 1 of"));
}

}  // namespace
}  // namespace mimetic::train
