// Model-level parity between the CPU and CUDA backends: for every mixer kind and a hybrid, the
// logits and every parameter's gradient of the masked cross-entropy agree when the same tree runs
// on the GPU. Skips (saying why) where no GPU is present. One case puts Mamba 2 in the regime mimetic init
// trains in, which the op consistency tests (random A of order 1, short rows) never draw.
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/jit.h"
#include "mimetic/core/random.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/test_specs.h"
#include "mimetic/ops/cross_entropy/cross_entropy.h"

namespace mimetic::models {
namespace {

core::ParamTree ToDevice(const core::ParamTree& t, core::Device d) {
  return t.Map([d](const core::Tensor& x) { return x.ToDevice(d).value(); });
}

// |a - b| <= atol + rtol |b| elementwise, reporting the first violation.
void ExpectClose(const core::Tensor& gpu, const core::Tensor& cpu, double atol, double rtol,
                 const std::string& what) {
  ASSERT_TRUE(gpu.ok()) << what << ": " << gpu.status();
  std::vector<float> a = gpu.ToVector<float>().value(), b = cpu.ToVector<float>().value();
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_NEAR(a[i], b[i], atol + rtol * std::abs(b[i])) << what << " element " << i;
  }
}

// `edit`, when given, changes the initialised tree before both runs; rows of `length` tokens.
void CheckParity(const ModelSpec& spec, int64_t length = 21,
                 const std::function<core::ParamTree(core::ParamTree)>& edit = {}) {
  if (core::GetCudaMemoryHooks().allocate == nullptr) {
    GTEST_SKIP() << "no usable GPU: " << core::CudaBackendStatus();
  }
  core::ParamTree cpu_params = Init(core::Key::FromSeed(4), spec).value();
  if (edit) cpu_params = edit(cpu_params);
  core::Tensor tokens = core::RandInt(core::Key::FromSeed(5), {3, length}, 0, spec.vocab_size()).value();
  core::Tensor targets = core::RandInt(core::Key::FromSeed(6), {3, length}, 0, spec.vocab_size()).value();
  core::Tensor mask = core::Uniform(core::Key::FromSeed(7), {3, length}, 0, 1).value();
  auto run = [&](core::Device d) {
    core::ParamTree p = ToDevice(cpu_params, d);
    core::Tensor tok = tokens.ToDevice(d).value(), tgt = targets.ToDevice(d).value(),
                 m = mask.ToDevice(d).value();
    auto loss = [&](const core::ParamTree& q, absl::Span<const core::Tensor>) {
      return ops::MaskedCrossEntropy(Apply(q, spec, tok), tgt, m);
    };
    core::Tensor logits = Apply(p, spec, tok);
    core::ValueAndGradResult r = core::ValueAndGrad(loss)(p, {}).value();
    return std::make_tuple(logits.ToDevice(core::Device::kCpu).value(),
                           r.value.ToDevice(core::Device::kCpu).value(),
                           ToDevice(r.grads, core::Device::kCpu));
  };
  auto [cpu_logits, cpu_loss, cpu_grads] = run(core::Device::kCpu);
  auto [gpu_logits, gpu_loss, gpu_grads] = run(core::Device::kCuda);
  // f32 on both sides; different summation orders (cuBLAS, block reductions): 1e-4 + 1e-3 relative.
  ExpectClose(gpu_logits, cpu_logits, 1e-4, 1e-3, "logits");
  ExpectClose(gpu_loss, cpu_loss, 1e-4, 1e-3, "loss");
  for (const std::string& path : cpu_grads.Paths()) {
    ExpectClose(gpu_grads.Get(path).value(), cpu_grads.Get(path).value(), 1e-4, 1e-3, "grad " + path);
  }
}

TEST(CudaParityTest, Mamba1) { CheckParity(testing::TinyMamba1()); }
TEST(CudaParityTest, Mamba2) { CheckParity(testing::TinyMamba2()); }
// Mimetic init's regime (docs/mimetic_recipe.md): A ≈ -1e-8 (the state barely decays, so every position's
// key stays in the state to the row's end) and Δ ≈ 1 (dt_bias = softplus⁻¹(1) = ln(e - 1)), on rows of 256
// over four chunks of 64, so the chunked scan carries states across chunks as Fig. 1's `paper` rows do.
// Every parameter's gradient, CPU against CUDA.
TEST(CudaParityTest, Mamba2InMimeticRegimeOverSeveralChunks) {
  const ModelSpec spec = testing::MustParse(
      "vocab_size: 13 d_model: 16 n_layer: 2 default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 64 } "
      "}");
  CheckParity(spec, 256, [](core::ParamTree t) {
    for (int layer = 0; layer < 2; ++layer) {
      const std::string mixer = "layers/" + std::to_string(layer) + "/mixer/";
      const int64_t heads = t.Get(mixer + "A_log").value().shape()[0];
      std::vector<float> a_log(heads), dt_bias(heads, static_cast<float>(std::log(std::exp(1.0) - 1.0)));
      for (int64_t h = 0; h < heads; ++h)
        a_log[h] = static_cast<float>(std::log(1e-8) + 0.1 * h);  // A ≈ -1e-8
      t = t.Replace(mixer + "A_log", core::Tensor::FromHost<float>({heads}, a_log).value()).value();
      t = t.Replace(mixer + "dt_bias", core::Tensor::FromHost<float>({heads}, dt_bias).value()).value();
    }
    return t;
  });
}
TEST(CudaParityTest, SoftmaxAttention) { CheckParity(testing::TinyAttention()); }
TEST(CudaParityTest, LinearAttention) { CheckParity(testing::TinyLinearAttention()); }
TEST(CudaParityTest, HybridWithMlp) { CheckParity(testing::TinyHybrid()); }

}  // namespace
}  // namespace mimetic::models
