#include "mimetic/models/recurrent.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/random.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/test_specs.h"

namespace mimetic::models {
namespace {

// Step's logits at each position equal the full (parallel) forward's, within 1e-4 absolute +
// 1e-4 relative (f32; the two paths sum in different orders).
void ExpectStepEqualsForward(const ModelSpec& spec) {
  core::ParamTree p = Init(core::Key::FromSeed(11), spec).value();
  const int64_t B = 2, L = 11, V = PaddedVocab(spec);
  core::Tensor tokens = core::RandInt(core::Key::FromSeed(5), {B, L}, 0, spec.vocab_size()).value();
  std::vector<float> full = Apply(p, spec, tokens).ToVector<float>().value();
  std::vector<int32_t> tok = tokens.ToVector<int32_t>().value();
  RecurrentState state = InitRecurrentState(spec, B).value();
  for (int64_t t = 0; t < L; ++t) {
    std::vector<float> step = Step(p, spec, {tok[t], tok[L + t]}, &state).value();
    for (int64_t b = 0; b < B; ++b) {
      for (int64_t v = 0; v < V; ++v) {
        const float want = full[(b * L + t) * V + v];
        ASSERT_NEAR(step[b * V + v], want, 1e-4 + 1e-4 * std::abs(want))
            << "b=" << b << " t=" << t << " v=" << v;
      }
    }
  }
}

TEST(RecurrentTest, Mamba1) { ExpectStepEqualsForward(testing::TinyMamba1()); }
TEST(RecurrentTest, Mamba2) { ExpectStepEqualsForward(testing::TinyMamba2()); }
TEST(RecurrentTest, SoftmaxAttention) { ExpectStepEqualsForward(testing::TinyAttention()); }
TEST(RecurrentTest, LinearAttention) { ExpectStepEqualsForward(testing::TinyLinearAttention()); }
TEST(RecurrentTest, HybridWithMlp) { ExpectStepEqualsForward(testing::TinyHybrid()); }

TEST(RecurrentTest, GreedyGenerationMatchesArgmaxOfForward) {
  ModelSpec spec = testing::TinyMamba2();
  core::ParamTree p = Init(core::Key::FromSeed(3), spec).value();
  std::vector<int32_t> prompt = {1, 5, 2, 7};
  std::vector<int32_t> gen = GreedyGenerate(p, spec, prompt, 5, /*stop_token=*/-1).value();
  ASSERT_EQ(gen.size(), 5u);
  // Re-run the full forward on prompt + generated tokens: each generated token is the argmax.
  std::vector<int32_t> all = prompt;
  all.insert(all.end(), gen.begin(), gen.end() - 1);
  core::Tensor tokens = core::Tensor::FromHost<int32_t>({1, int64_t(all.size())}, all).value();
  std::vector<float> logits = Apply(p, spec, tokens).ToVector<float>().value();
  const int64_t V = PaddedVocab(spec);
  for (size_t i = 0; i < gen.size(); ++i) {
    const float* row = logits.data() + (prompt.size() - 1 + i) * V;
    EXPECT_EQ(gen[i], std::max_element(row, row + V) - row);
  }
}

TEST(RecurrentTest, BadInput) {
  ModelSpec spec = testing::TinyMamba2();
  core::ParamTree p = Init(core::Key::FromSeed(3), spec).value();
  RecurrentState state = InitRecurrentState(spec, 2).value();
  EXPECT_FALSE(Step(p, spec, {1}, &state).ok());
  EXPECT_THAT(Step(p, spec, {1, 400}, &state).status().message(), ::testing::HasSubstr("400"));
}

}  // namespace
}  // namespace mimetic::models
