#include "mimetic/core/jit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/autodiff.h"
#include "mimetic/core/toy_ops_for_test.h"

namespace mimetic::core {
namespace {

using ::testing::HasSubstr;

Tensor Vec(std::vector<float> v) { return Tensor::FromHost<float>({static_cast<int64_t>(v.size())}, v).value(); }

int calls = 0;

std::vector<Tensor> Poly(absl::Span<const Tensor> in) {
  ++calls;
  // x*x*y, then a view, then sum: enough intermediates for buffer reuse.
  Tensor a = toy::Mul(in[0], in[0]);
  Tensor b = toy::Mul(a, in[1]);
  Tensor c = toy::Mul(b, b);
  Tensor d = toy::Reshape(c, {static_cast<int64_t>(c.numel())});
  return {toy::SumAll(d), toy::Mul(d, in[1])};
}

TEST(JitTest, ReplayEqualsEagerBitForBitAndSkipsTheFunction) {
  Jit jit(Poly);
  calls = 0;
  Tensor x = Vec({0.1f, 0.7f, -1.3f, 2.9f});
  Tensor y = Vec({3.3f, -0.2f, 1.1f, 0.9f});
  std::vector<Tensor> first = jit({x, y}).value();
  EXPECT_EQ(calls, 1);
  std::vector<Tensor> eager = Poly({x, y});
  std::vector<Tensor> second = jit({x, y}).value();
  EXPECT_EQ(calls, 2);  // the eager reference call above, not the jit
  EXPECT_EQ(jit.num_traces(), 1);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(second[k].ToVector<float>().value(), eager[k].ToVector<float>().value());
    EXPECT_EQ(first[k].ToVector<float>().value(), eager[k].ToVector<float>().value());
  }
}

TEST(JitTest, ProfileCountsReplayedNodesByOpOrByCall) {
  Jit jit(Poly);
  Tensor x = Vec({1, 2, 3});
  Tensor y = Vec({4, 5, 6});
  jit({x, y}).value();  // trace: not profiled
  jit.set_profiling(true);
  for (int i = 0; i < 3; ++i) jit({x, y}).value();
  // Four multiplies and one sum per replay; the reshape is a view and is not timed.
  EXPECT_THAT(jit.ProfileReport(), HasSubstr("toy_mul"));
  EXPECT_THAT(jit.ProfileReport(), ::testing::ContainsRegex("toy_mul +12 calls"));
  EXPECT_THAT(jit.ProfileReport(), ::testing::ContainsRegex("toy_sum +3 calls"));
  EXPECT_THAT(jit.ProfileReport(), ::testing::Not(HasSubstr("toy_reshape")));

  Jit by_call(Poly);
  by_call({x, y}).value();
  by_call.set_profiling(true, /*by_call=*/true);
  for (int i = 0; i < 2; ++i) by_call({x, y}).value();
  // Keyed by the call: the sum's input is the reshaped f32(3), the multiplies' are f32(3) pairs.
  const std::string report = by_call.ProfileReport();
  EXPECT_THAT(report, ::testing::ContainsRegex("toy_sum\\(f32\\(3\\)@cpu\\) +2 calls"));
  EXPECT_THAT(report,
              ::testing::ContainsRegex("toy_mul\\(f32\\(3\\)@cpu, f32\\(3\\)@cpu\\) +8 calls"));
}

TEST(JitTest, SteadyStateReplayAllocatesNothing) {
  Jit jit(Poly);
  Tensor x = Vec({1, 2, 3});
  Tensor y = Vec({4, 5, 6});
  std::vector<Tensor> out = jit({x, y}).value();  // trace + plan
  out = jit({x, y}).value();                      // first replay uses the second output set
  const int64_t before = Storage::allocation_count();
  for (int i = 0; i < 10; ++i) out = jit({x, y}).value();
  EXPECT_EQ(Storage::allocation_count(), before);
  EXPECT_FLOAT_EQ(out[0].Item<float>().value(), 16.f + 400.f + 2916.f);
}

TEST(JitTest, SecondCallAllocatesNothingNew) {
  Jit jit(Poly);
  Tensor x = Vec({1, 2, 3});
  Tensor y = Vec({4, 5, 6});
  std::vector<Tensor> first = jit({x, y}).value();
  const int64_t before = Storage::allocation_count();
  std::vector<Tensor> second = jit({x, y}).value();
  EXPECT_EQ(Storage::allocation_count(), before);
  // The first results are untouched by the second call (immutability).
  EXPECT_EQ(first[1].ToVector<float>().value(), second[1].ToVector<float>().value());
}

TEST(JitTest, HoldingEveryEarlierResultForcesAFreshBufferNotAnOverwrite) {
  Jit jit(Poly);
  std::vector<std::vector<Tensor>> kept;
  for (int i = 1; i <= 4; ++i) kept.push_back(jit({Vec({float(i)}), Vec({1})}).value());
  for (int i = 1; i <= 4; ++i) {
    EXPECT_FLOAT_EQ(kept[i - 1][0].Item<float>().value(), float(i * i) * float(i * i));
  }
}

TEST(JitTest, NewShapeRetracesOldShapeStillReplays) {
  Jit jit(Poly);
  calls = 0;
  jit({Vec({1, 2}), Vec({1, 1})}).value();
  jit({Vec({1, 2, 3}), Vec({1, 1, 1})}).value();
  EXPECT_EQ(jit.num_traces(), 2);
  std::vector<Tensor> again = jit({Vec({2, 2}), Vec({1, 1})}).value();
  EXPECT_EQ(jit.num_traces(), 2);
  EXPECT_EQ(calls, 2);
  EXPECT_FLOAT_EQ(again[0].Item<float>().value(), 32.f);
}

TEST(JitTest, PlanReusesBuffers) {
  Jit jit(Poly);
  jit({Vec(std::vector<float>(1000, 1.f)), Vec(std::vector<float>(1000, 2.f))}).value();
  const JitPlanStats& s = jit.last_stats();
  EXPECT_EQ(s.num_nodes, 6);
  EXPECT_LT(s.num_buffers, 3);  // a, b, c share at most two buffers
  EXPECT_GT(s.unplanned_bytes, 0);
}

TEST(JitTest, CapturesValueAndGradAsOneGraph) {
  auto loss = [](const ParamTree& p, absl::Span<const Tensor> in) {
    Tensor w = p.Get("w").value();
    return toy::SumAll(toy::Mul(toy::Mul(w, w), in[0]));
  };
  int traced = 0;
  Jit step([&](absl::Span<const Tensor> in) {
    ++traced;
    ParamTree p = ParamTree::FromPairs({{"w", in[0]}}).value();
    ValueAndGradResult r = ValueAndGrad(loss)(p, {in[1]}).value();
    return std::vector<Tensor>{r.value, r.grads.Get("w").value()};
  });
  Tensor w = Vec({1, -2, 3});
  step({w, Vec({0.5, 1, 2})}).value();
  std::vector<Tensor> out = step({w, Vec({1, 1, 1})}).value();
  EXPECT_EQ(traced, 1);
  EXPECT_FLOAT_EQ(out[0].Item<float>().value(), 14.f);
  EXPECT_THAT(out[1].ToVector<float>().value(), ::testing::ElementsAre(2.f, -4.f, 6.f));
}

TEST(JitTest, ReadingATracedValueIsAnError) {
  Jit jit([](absl::Span<const Tensor> in) {
    absl::StatusOr<float> v = in[0].Item<float>();
    if (!v.ok()) return std::vector<Tensor>{Tensor::Error(v.status())};
    return std::vector<Tensor>{*v > 0 ? in[0] : toy::Mul(in[0], in[0])};
  });
  absl::Status s = jit({Vec({1})}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("data-dependent control flow"));
}

TEST(JitTest, ErrorInputIsReported) {
  Jit jit(Poly);
  absl::Status s = jit({Tensor::Error(absl::InvalidArgumentError("bad batch")), Vec({1})}).status();
  EXPECT_THAT(s.message(), HasSubstr("input 0"));
  EXPECT_THAT(s.message(), HasSubstr("bad batch"));
}

TEST(JitTest, ConstantsAreCapturedByValue) {
  Tensor c = Vec({2, 3});
  Jit jit([&](absl::Span<const Tensor> in) { return std::vector<Tensor>{toy::Mul(in[0], c)}; });
  jit({Vec({1, 1})}).value();
  c = Vec({100, 100});  // rebinding the captured handle must not change the plan
  std::vector<Tensor> out = jit({Vec({1, 2})}).value();
  EXPECT_THAT(out[0].ToVector<float>().value(), ::testing::ElementsAre(2.f, 6.f));
}

}  // namespace
}  // namespace mimetic::core

namespace mimetic::core {
namespace {

TEST(JitTest, OneTensorInTwoSlotsAtTraceTimeStaysTwoInputs) {
  Jit jit([](absl::Span<const Tensor> in) { return std::vector<Tensor>{toy::Mul(in[0], in[1])}; });
  Tensor a = Vec({2, 3});
  EXPECT_THAT(jit({a, a}).value()[0].ToVector<float>().value(), ::testing::ElementsAre(4.f, 9.f));
  EXPECT_THAT(jit({a, Vec({10, 10})}).value()[0].ToVector<float>().value(), ::testing::ElementsAre(20.f, 30.f));
}

}  // namespace
}  // namespace mimetic::core
