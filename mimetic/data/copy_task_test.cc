#include "mimetic/data/copy_task.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/key.h"
#include "mimetic/data/test_util.h"

namespace mimetic::data {
namespace {

using testing::ChiSquareCritical;
using testing::ChiSquareUniform;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using testing::HostBatch;
using testing::ToHost;

const core::Key kKey = core::Key::FromSeed(2024);

// ---- Single examples (the layout of Jelassi et al.'s train_utils.py)
// ---------------------------------------------------

TEST(BuildCopyExampleTest, WorkedExampleOfSpec) {
  const Example example = BuildCopyExample(TokenLayout{26}, {0, 1, 2}, CopyOrder::kForward);  // "abc"
  EXPECT_THAT(example.ids, ElementsAre(26, 0, 1, 2, 27, 0, 1, 2, 28));
  EXPECT_THAT(example.mask, ElementsAre(0, 0, 0, 0, 0, 1, 1, 1, 1));
}

TEST(BuildCopyExampleTest, StackOrderAndSort) {
  EXPECT_THAT(BuildCopyExample(TokenLayout{26}, {0, 1, 2}, CopyOrder::kReverse).ids,
              ElementsAre(26, 0, 1, 2, 27, 2, 1, 0, 28));
  const Example sorted = BuildSortExample(TokenLayout{512}, {7, 300, 2});
  EXPECT_THAT(sorted.ids, ElementsAre(512, 7, 300, 2, 513, 2, 7, 300, 514));
  EXPECT_THAT(sorted.mask, ElementsAre(0, 0, 0, 0, 0, 1, 1, 1, 1));
}

TEST(TokenLayoutTest, JelassiIds) {
  const TokenLayout layout{26};
  EXPECT_EQ(layout.bos(), 26);
  EXPECT_EQ(layout.sep(), 27);
  EXPECT_EQ(layout.eos(), 28);
  EXPECT_EQ(layout.pad(), 29);
  EXPECT_EQ(layout.model_vocab(), 30);
}

// ---- Eval rows ------------------------------------------------------------------------------------

TEST(CopyTaskTest, EvalRowIsTheShiftedExample) {
  CopyTaskConfig config;
  config.min_len = 1;
  config.max_len = 3;
  config.context_len = 9;
  config.eval_context_len = 8;  // Exactly the example: 2 * 3 + 3 ids = 8 inputs + the EOS target.
  const std::unique_ptr<Task> task = MakeCopyTask(config).value();
  const EvalBatch eval = task->SampleEval(kKey, 5, 3).value();
  const HostBatch host = ToHost(eval.batch);
  ASSERT_EQ(host.seq_len, 8);
  for (int64_t b = 0; b < host.batch; ++b) {
    const int32_t a = host.token(b, 1), c = host.token(b, 2), d = host.token(b, 3);
    const Example example = BuildCopyExample(TokenLayout{26}, {a, c, d}, CopyOrder::kForward);
    EXPECT_THAT(host.ids(b), ElementsAreArray(example.ids));
    std::vector<float> loss(host.mask.begin() + b * 8, host.mask.begin() + (b + 1) * 8);
    EXPECT_THAT(loss, ElementsAre(0, 0, 0, 0, 1, 1, 1, 1));       // mask[1:]: | -> a, a -> b, b -> c, c -> .
    EXPECT_THAT(eval.answer_positions[b], ElementsAre(4, 5, 6));  // The '|' and the first two pasted.
    EXPECT_EQ(eval.lengths[b], 3);
  }
}

TEST(CopyTaskTest, EvalRowsArePaddedAndAnswersLineUp) {
  CopyTaskConfig config;  // T = 256; eval at 100 needs 202 <= 256.
  const std::unique_ptr<Task> task = MakeCopyTask(config).value();
  for (CopyOrder order : {CopyOrder::kForward, CopyOrder::kReverse}) {
    config.order = order;
    const CopyTask copy(config);
    const int64_t len = 100;
    const EvalBatch eval = copy.SampleEval(kKey, 8, len).value();
    const HostBatch host = ToHost(eval.batch);
    ASSERT_EQ(host.seq_len, 256);
    const TokenLayout layout{26};
    for (int64_t b = 0; b < host.batch; ++b) {
      const std::vector<int32_t> ids = host.ids(b);
      std::vector<int32_t> s(ids.begin() + 1, ids.begin() + 1 + len);
      if (order == CopyOrder::kReverse) std::reverse(s.begin(), s.end());
      ASSERT_EQ(eval.answer_positions[b].size(), static_cast<size_t>(len));
      for (int64_t i = 0; i < len; ++i) {
        const int64_t t = eval.answer_positions[b][i];
        EXPECT_EQ(t, len + 1 + i);
        EXPECT_EQ(host.target(b, t), s[i]);
        EXPECT_EQ(host.loss(b, t), 1.0f);
      }
      EXPECT_EQ(host.target(b, 2 * len + 1), layout.eos());
      EXPECT_EQ(host.loss(b, 2 * len + 1), 1.0f);  // EOS is trained, not scored.
      for (int64_t t = 2 * len + 3; t <= 256; ++t) EXPECT_EQ(ids[t], layout.pad());
      for (int64_t t = 2 * len + 2; t < 256; ++t) EXPECT_EQ(host.loss(b, t), 0.0f);
    }
  }
  // Longer than the training rows: the eval rows grow to 2 l + 2 unless eval_context_len is set.
  EXPECT_EQ(task->SampleEval(kKey, 2, 300).value().batch.tokens.dim(1), 602);
  config.order = CopyOrder::kForward;
  config.eval_context_len = 300;
  EXPECT_THAT(MakeCopyTask(config).value()->SampleEval(kKey, 2, 200).status().message(),
              HasSubstr("CopyTaskConfig.eval_context_len = 300"));
}

// ---- Packed training rows -------------------------------------------------------------------------

// Walks one packed row (ids and mask, T+1 each), checks every complete example and the truncated
// tail, and returns the complete examples' strings s (and their answers).
struct ParsedRow {
  std::vector<std::vector<int32_t>> strings;
  std::vector<std::vector<int32_t>> answers;
};

ParsedRow ParseRow(const TokenLayout& layout, const std::vector<int32_t>& ids,
                   const std::vector<float>& mask) {
  ParsedRow parsed;
  const int64_t n = static_cast<int64_t>(ids.size());
  int64_t p = 0;
  while (p < n) {
    EXPECT_EQ(ids[p], layout.bos()) << "example at " << p;
    int64_t sep = p + 1;
    while (sep < n && ids[sep] != layout.sep()) ++sep;
    const int64_t len = sep - p - 1;
    if (p + 2 * len + 3 > n) {  // Truncated tail: never trained on.
      for (int64_t t = p; t < n; ++t) EXPECT_EQ(mask[t], 0.0f) << "truncated tail at " << t;
      break;
    }
    EXPECT_GE(len, 1);
    for (int64_t t = p; t <= sep; ++t) EXPECT_EQ(mask[t], 0.0f);
    for (int64_t t = sep + 1; t < p + 2 * len + 3; ++t) EXPECT_EQ(mask[t], 1.0f);
    EXPECT_EQ(ids[p + 2 * len + 2], layout.eos());
    parsed.strings.emplace_back(ids.begin() + p + 1, ids.begin() + sep);
    parsed.answers.emplace_back(ids.begin() + sep + 1, ids.begin() + p + 2 * len + 2);
    p += 2 * len + 3;
  }
  return parsed;
}

std::vector<float> IdsMask(const HostBatch& host, int64_t b) {
  std::vector<float> mask = {0.0f};  // The BOS is never a target.
  mask.insert(mask.end(), host.mask.begin() + b * host.seq_len, host.mask.begin() + (b + 1) * host.seq_len);
  return mask;
}

TEST(CopyTaskTest, PackedRowsFillTheContextExactly) {
  CopyTaskConfig config;
  config.min_len = 5;
  config.max_len = 20;
  config.context_len = 220;
  for (CopyOrder order : {CopyOrder::kForward, CopyOrder::kReverse}) {
    config.order = order;
    const HostBatch host = ToHost(MakeCopyTask(config).value()->SampleTrain(kKey, 64).value());
    ASSERT_EQ(host.batch, 64);
    ASSERT_EQ(host.seq_len, 220);
    int64_t examples = 0;
    for (int64_t b = 0; b < host.batch; ++b) {
      EXPECT_EQ(host.token(b, 0), 26);  // Every row starts with BOS.
      for (int64_t t = 0; t + 1 < host.seq_len; ++t) EXPECT_EQ(host.target(b, t), host.token(b, t + 1));
      const ParsedRow row = ParseRow(TokenLayout{26}, host.ids(b), IdsMask(host, b));
      ASSERT_GE(row.strings.size(), 5u);  // 220 tokens hold at least 5 examples of <= 43.
      for (size_t i = 0; i < row.strings.size(); ++i) {
        std::vector<int32_t> expected = row.strings[i];
        if (order == CopyOrder::kReverse) std::reverse(expected.begin(), expected.end());
        EXPECT_EQ(row.answers[i], expected);
        EXPECT_GE(row.strings[i].size(), 5u);
        EXPECT_LE(row.strings[i].size(), 20u);
      }
      examples += row.strings.size();
    }
    EXPECT_GT(examples, 64 * 7);
  }
}

TEST(CopyTaskTest, LengthsAndLettersAreUniform) {
  CopyTaskConfig config;
  config.min_len = 5;
  config.max_len = 20;
  config.context_len = 220;
  const HostBatch host = ToHost(MakeCopyTask(config).value()->SampleTrain(kKey, 3200).value());
  std::vector<int64_t> lengths(16, 0), letters(26, 0);
  for (int64_t b = 0; b < host.batch; ++b) {
    // The first example of a row is always whole, so its length is an unbiased draw (later complete
    // examples are biased short: a long one is likelier to overflow).
    const ParsedRow row = ParseRow(TokenLayout{26}, host.ids(b), IdsMask(host, b));
    ++lengths[row.strings[0].size() - 5];
    for (int32_t c : row.strings[0]) ++letters[c];
  }
  EXPECT_LT(ChiSquareUniform(lengths), ChiSquareCritical(15));
  EXPECT_LT(ChiSquareUniform(letters), ChiSquareCritical(25));
  EXPECT_GT(lengths.front(), 0);
  EXPECT_GT(lengths.back(), 0);
}

TEST(SortTaskTest, StringsAreDistinctAndAnswersSorted) {
  SortTaskConfig config;  // V = 512, lengths [5, 50], T = 256.
  const std::unique_ptr<Task> task = MakeSortTask(config).value();
  EXPECT_EQ(task->name(), "sort");
  EXPECT_EQ(task->model_vocab(), 516);
  const HostBatch host = ToHost(task->SampleTrain(kKey, 32).value());
  for (int64_t b = 0; b < host.batch; ++b) {
    const ParsedRow row = ParseRow(TokenLayout{512}, host.ids(b), IdsMask(host, b));
    ASSERT_FALSE(row.strings.empty());
    for (size_t i = 0; i < row.strings.size(); ++i) {
      const std::set<int32_t> unique(row.strings[i].begin(), row.strings[i].end());
      EXPECT_EQ(unique.size(), row.strings[i].size());
      EXPECT_TRUE(std::is_sorted(row.answers[i].begin(), row.answers[i].end()));
      EXPECT_EQ(std::vector<int32_t>(unique.begin(), unique.end()), row.answers[i]);
    }
  }
  // The whole vocabulary: every eval row is a permutation of 0..V-1.
  SortTaskConfig small;
  small.vocab = 20;
  small.min_len = 2;
  small.max_len = 20;
  small.context_len = 43;
  const HostBatch full = ToHost(MakeSortTask(small).value()->SampleEval(kKey, 4, 20).value().batch);
  for (int64_t b = 0; b < full.batch; ++b) {
    const std::vector<int32_t> ids = full.ids(b);
    EXPECT_EQ(std::set<int32_t>(ids.begin() + 1, ids.begin() + 21).size(), 20u);
  }
}

// ---- Keys, configs, speed -------------------------------------------------------------------------

TEST(CopyTaskTest, SameKeySameBatchAndRowsIndependent) {
  const std::unique_ptr<Task> task = MakeCopyTask(CopyTaskConfig{}).value();
  const HostBatch a = ToHost(task->SampleTrain(kKey, 16).value());
  const HostBatch b = ToHost(task->SampleTrain(kKey, 16).value());
  const HostBatch c = ToHost(task->SampleTrain(core::FoldIn(kKey, 1), 16).value());
  const HostBatch prefix = ToHost(task->SampleTrain(kKey, 4).value());
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_NE(a.tokens, c.tokens);
  EXPECT_TRUE(std::equal(prefix.tokens.begin(), prefix.tokens.end(), a.tokens.begin()));
  EXPECT_EQ(task->SampleEval(kKey, 3, 60).value().batch.tokens.ToVector<int32_t>().value(),
            task->SampleEval(kKey, 3, 60).value().batch.tokens.ToVector<int32_t>().value());
}

absl::Status CopyStatus(void (*edit)(CopyTaskConfig&)) {
  CopyTaskConfig config;
  edit(config);
  return MakeCopyTask(config).status();
}

TEST(CopyTaskTest, BadConfigsNameTheField) {
  EXPECT_THAT(CopyStatus([](CopyTaskConfig& c) { c.vocab = 0; }).message(),
              HasSubstr("CopyTaskConfig.vocab = 0"));
  EXPECT_THAT(CopyStatus([](CopyTaskConfig& c) { c.min_len = 0; }).message(),
              HasSubstr("CopyTaskConfig.min_len = 0; expected min_len >= 1"));
  EXPECT_THAT(CopyStatus([](CopyTaskConfig& c) { c.min_len = -3; }).message(), HasSubstr("min_len = -3"));
  EXPECT_THAT(CopyStatus([](CopyTaskConfig& c) { c.max_len = 4; }).message(),
              HasSubstr("CopyTaskConfig.max_len = 4; expected max_len >= min_len = 5"));
  EXPECT_THAT(CopyStatus([](CopyTaskConfig& c) { c.context_len = 102; }).message(),
              HasSubstr("CopyTaskConfig.context_len = 102; expected context_len >= 2 * max_len + 3 = 103"));
  EXPECT_THAT(CopyStatus([](CopyTaskConfig& c) { c.eval_context_len = -1; }).message(),
              HasSubstr("CopyTaskConfig.eval_context_len = -1"));
  EXPECT_EQ(CopyStatus([](CopyTaskConfig& c) { c.context_len = 103; }).code(), absl::StatusCode::kOk);
  EXPECT_EQ(CopyStatus([](CopyTaskConfig& c) { c.vocab = 0; }).code(), absl::StatusCode::kInvalidArgument);

  SortTaskConfig sort;
  sort.vocab = 40;
  EXPECT_THAT(MakeSortTask(sort).status().message(),
              HasSubstr("SortTaskConfig.vocab = 40; expected vocab >= max_len"));
  sort.vocab = 60;
  EXPECT_THAT(MakeSortTask(sort).value()->SampleEval(kKey, 1, 61).status().message(),
              HasSubstr("length = 61"));

  const std::unique_ptr<Task> task = MakeCopyTask(CopyTaskConfig{}).value();
  EXPECT_THAT(task->SampleTrain(kKey, 0).status().message(), HasSubstr("batch = 0; expected batch >= 1"));
  EXPECT_THAT(task->SampleEval(kKey, 2, 0).status().message(), HasSubstr("length = 0"));
  CopyTaskConfig bad;
  bad.vocab = -1;  // Constructed directly, without the factory: sampling still validates.
  EXPECT_EQ(CopyTask(bad).SampleTrain(kKey, 1).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CopyTaskTest, SamplingIsFast) {
  CopyTaskConfig config;
  config.min_len = 5;
  config.max_len = 50;
  config.context_len = 220;
  const std::unique_ptr<Task> task = MakeCopyTask(config).value();
  constexpr int kRepeats = 50;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRepeats; ++i) ASSERT_TRUE(task->SampleTrain(core::FoldIn(kKey, i), 64).ok());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kRepeats;
  std::printf("copy SampleTrain(64 x 220): %.3f ms per batch\n", ms);
  EXPECT_LT(ms, 5.0);  // Typically ~0.1 ms; generous for a loaded shared machine.

  const std::unique_ptr<Task> sort = MakeSortTask(SortTaskConfig{}).value();  // V 512, T 256.
  const auto sort_start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRepeats; ++i) ASSERT_TRUE(sort->SampleTrain(core::FoldIn(kKey, i), 64).ok());
  const double sort_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sort_start).count() /
      kRepeats;
  std::printf("sort SampleTrain(64 x 256, V 512): %.3f ms per batch\n", sort_ms);
  EXPECT_LT(sort_ms, 5.0);
}

}  // namespace
}  // namespace mimetic::data
