#include "mimetic/data/mqar_copy.h"

#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/key.h"
#include "mimetic/data/test_util.h"

namespace mimetic::data {
namespace {

using testing::ChiSquareCritical;
using testing::ChiSquareUniform;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::HostBatch;
using testing::ToHost;

const core::Key kKey = core::Key::FromSeed(5);

TEST(BuildMqarCopyExampleTest, Layout) {
  // V = 8: keys [0, 4), values [4, 8); BOS 8, SEP 9, EOS 10. k1 = 1 -> 6, k2 = 3 -> 4; queries k2, k1.
  const Example example = BuildMqarCopyExample(TokenLayout{8}, {1, 3}, {6, 4}, {1, 0});
  EXPECT_THAT(example.ids, ElementsAre(8, 1, 6, 3, 4, 9, 3, 4, 1, 6, 10));
  EXPECT_THAT(example.mask, ElementsAre(0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1));
}

// Parses the examples of one row of full ids and mask (T+1 each), checking each complete one.
// Returns the K of each complete example.
std::vector<int64_t> ParseRow(const TokenLayout& layout, const std::vector<int32_t>& ids,
                              const std::vector<float>& mask) {
  std::vector<int64_t> ks;
  const int64_t n = static_cast<int64_t>(ids.size());
  const int32_t half = layout.vocab / 2;
  int64_t p = 0;
  while (p < n) {
    EXPECT_EQ(ids[p], layout.bos());
    int64_t sep = p + 1;
    while (sep < n && ids[sep] != layout.sep()) ++sep;
    const int64_t k = (sep - p - 1) / 2;
    if (p + 4 * k + 3 > n) {
      for (int64_t t = p; t < n; ++t) EXPECT_EQ(mask[t], 0.0f);
      break;
    }
    EXPECT_EQ((sep - p - 1) % 2, 0);
    absl::flat_hash_map<int32_t, int32_t> value_of;
    std::set<int32_t> values;
    for (int64_t i = 0; i < k; ++i) {
      const int32_t key = ids[p + 1 + 2 * i], value = ids[p + 2 + 2 * i];
      EXPECT_GE(key, 0);
      EXPECT_LT(key, half);
      EXPECT_GE(value, half);
      EXPECT_LT(value, layout.vocab);
      EXPECT_TRUE(value_of.emplace(key, value).second) << "key stored twice";
      values.insert(value);
    }
    EXPECT_EQ(values.size(), static_cast<size_t>(k));
    for (int64_t t = p; t <= sep; ++t) EXPECT_EQ(mask[t], 0.0f);
    std::set<int32_t> queried;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t q = sep + 1 + 2 * j;
      EXPECT_TRUE(queried.insert(ids[q]).second) << "key queried twice";
      EXPECT_TRUE(value_of.contains(ids[q]));
      if (value_of.contains(ids[q])) {
        EXPECT_EQ(ids[q + 1], value_of[ids[q]]);
      }
      EXPECT_EQ(mask[q], 0.0f);
      EXPECT_EQ(mask[q + 1], 1.0f);
    }
    EXPECT_EQ(queried.size(), static_cast<size_t>(k));
    EXPECT_EQ(ids[p + 4 * k + 2], layout.eos());
    EXPECT_EQ(mask[p + 4 * k + 2], 1.0f);
    ks.push_back(k);
    p += 4 * k + 3;
  }
  return ks;
}

std::vector<float> IdsMask(const HostBatch& host, int64_t b) {
  std::vector<float> mask = {0.0f};
  mask.insert(mask.end(), host.mask.begin() + b * host.seq_len, host.mask.begin() + (b + 1) * host.seq_len);
  return mask;
}

TEST(MqarCopyStyleTaskTest, PackedRowsHoldValidExamples) {
  MqarCopyStyleConfig config;  // V 512, K in [4, 32], T 256.
  const std::unique_ptr<Task> task = MakeMqarCopyStyleTask(config).value();
  EXPECT_EQ(task->model_vocab(), 516);
  const HostBatch host = ToHost(task->SampleTrain(kKey, 2900).value());
  ASSERT_EQ(host.seq_len, 256);
  std::vector<int64_t> first_k(29, 0);
  for (int64_t b = 0; b < host.batch; ++b) {
    EXPECT_EQ(host.token(b, 0), 512);
    const std::vector<int64_t> ks = ParseRow(TokenLayout{512}, host.ids(b), IdsMask(host, b));
    ASSERT_FALSE(ks.empty());
    for (int64_t k : ks) {
      EXPECT_GE(k, 4);
      EXPECT_LE(k, 32);
    }
    ++first_k[ks[0] - 4];
  }
  EXPECT_LT(ChiSquareUniform(first_k), ChiSquareCritical(28));
}

TEST(MqarCopyStyleTaskTest, EvalAnswersAtTheQueries) {
  MqarCopyStyleConfig config;
  const std::unique_ptr<Task> task = MakeMqarCopyStyleTask(config).value();
  const int64_t k = 64;  // Twice the training maximum: rows grow to 4K + 2 = 258.
  const EvalBatch eval = task->SampleEval(kKey, 6, k).value();
  const HostBatch host = ToHost(eval.batch);
  ASSERT_EQ(host.seq_len, 258);
  for (int64_t b = 0; b < host.batch; ++b) {
    EXPECT_EQ(ParseRow(TokenLayout{512}, host.ids(b), IdsMask(host, b)), std::vector<int64_t>{k});
    ASSERT_EQ(eval.answer_positions[b].size(), static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j) {
      const int64_t t = eval.answer_positions[b][j];
      EXPECT_EQ(t, 2 * k + 2 + 2 * j);
      EXPECT_EQ(host.target(b, t), host.token(b, t + 1));  // The answer follows its query.
      EXPECT_GE(host.target(b, t), 256);
    }
    EXPECT_EQ(eval.lengths[b], k);
  }
  const HostBatch padded = ToHost(task->SampleEval(kKey, 2, 8).value().batch);
  ASSERT_EQ(padded.seq_len, 256);
  for (int64_t t = 4 * 8 + 3; t < 256; ++t) EXPECT_EQ(padded.token(0, t), 515);  // PAD.
}

TEST(MqarCopyStyleTaskTest, SameKeySameBatch) {
  const std::unique_ptr<Task> task = MakeMqarCopyStyleTask(MqarCopyStyleConfig{}).value();
  EXPECT_EQ(ToHost(task->SampleTrain(kKey, 4).value()).tokens,
            ToHost(task->SampleTrain(kKey, 4).value()).tokens);
  EXPECT_NE(ToHost(task->SampleTrain(kKey, 4).value()).tokens,
            ToHost(task->SampleTrain(core::FoldIn(kKey, 2), 4).value()).tokens);
}

absl::Status Status(void (*edit)(MqarCopyStyleConfig&)) {
  MqarCopyStyleConfig config;
  edit(config);
  return MakeMqarCopyStyleTask(config).status();
}

TEST(MqarCopyStyleTaskTest, BadConfigsNameTheField) {
  EXPECT_THAT(Status([](MqarCopyStyleConfig& c) { c.vocab = 1; }).message(),
              HasSubstr("MqarCopyStyleConfig.vocab = 1"));
  EXPECT_THAT(Status([](MqarCopyStyleConfig& c) { c.min_kv = 0; }).message(),
              HasSubstr("MqarCopyStyleConfig.min_kv = 0; expected min_kv >= 1"));
  EXPECT_THAT(Status([](MqarCopyStyleConfig& c) { c.max_kv = 3; }).message(),
              HasSubstr("MqarCopyStyleConfig.max_kv = 3; expected max_kv >= min_kv = 4"));
  EXPECT_THAT(
      Status([](MqarCopyStyleConfig& c) { c.vocab = 40; }).message(),
      HasSubstr("MqarCopyStyleConfig.max_kv = 32 with vocab = 40; expected max_kv <= vocab / 2 = 20"));
  EXPECT_THAT(
      Status([](MqarCopyStyleConfig& c) { c.context_len = 130; }).message(),
      HasSubstr("MqarCopyStyleConfig.context_len = 130; expected context_len >= 4 * max_kv + 3 = 131"));
  EXPECT_THAT(Status([](MqarCopyStyleConfig& c) { c.eval_context_len = -2; }).message(),
              HasSubstr("MqarCopyStyleConfig.eval_context_len = -2"));
  const std::unique_ptr<Task> task = MakeMqarCopyStyleTask(MqarCopyStyleConfig{}).value();
  EXPECT_THAT(task->SampleEval(kKey, 1, 257).status().message(), HasSubstr("length = 257"));
  EXPECT_THAT(task->SampleEval(kKey, 1, 0).status().message(), HasSubstr("length = 0"));
}

}  // namespace
}  // namespace mimetic::data
