// On a GPU, the jitted training step (replayed as a CUDA graph) gives bit-identical losses when run
// twice from the same seed, and stays close to the CPU step. Skips, saying why, without a GPU.
#include <cmath>

#include "gtest/gtest.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/random.h"
#include "mimetic/data/copy_task.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"
#include "mimetic/train/train_step.h"

namespace mimetic::train {
namespace {

std::vector<double> Losses(core::Device device, int steps) {
  models::ModelSpec spec = models::ParseModelSpec(
                               "vocab_size: 8 d_model: 32 n_layer: 2 default_layer { mamba2 { d_state: 8 headdim: 16 "
                               "chunk_size: 16 } } layer_overrides { index: 1 layer { mamba1 { d_state: 8 } } }")
                               .value();
  data::CopyTaskConfig c;
  c.vocab = 4;
  c.min_len = 2;
  c.max_len = 6;
  c.context_len = 32;
  auto task = data::MakeCopyTask(c).value();
  core::ParamTree params = models::Init(core::Key::FromSeed(1), spec).value();
  params = params.Map([device](const core::Tensor& t) { return t.ToDevice(device).value(); });
  TrainState state = InitTrainState(params).value();
  TrainStep step(spec, OptimizerConfig{});
  std::vector<double> losses;
  for (int i = 0; i < steps; ++i) {
    data::Batch b = task->SampleTrain(core::FoldIn(core::Key::FromSeed(2), i), 8).value();
    b.tokens = b.tokens.ToDevice(device).value();
    b.targets = b.targets.ToDevice(device).value();
    b.loss_mask = b.loss_mask.ToDevice(device).value();
    losses.push_back(step(&state, b, 1e-3).value().loss);
  }
  return losses;
}

TEST(CudaDeterminismTest, SameSeedSameLossesBitForBitAndCloseToCpu) {
  if (core::GetCudaMemoryHooks().allocate == nullptr) {
    GTEST_SKIP() << "no usable GPU: " << core::CudaBackendStatus();
  }
  std::vector<double> a = Losses(core::Device::kCuda, 8), b = Losses(core::Device::kCuda, 8);
  EXPECT_EQ(a, b);
  std::vector<double> cpu = Losses(core::Device::kCpu, 8);
  for (size_t i = 0; i < cpu.size(); ++i) EXPECT_NEAR(a[i], cpu[i], 1e-3 * (1 + i)) << "step " << i;
}

}  // namespace
}  // namespace mimetic::train
