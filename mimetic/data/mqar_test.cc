#include "mimetic/data/mqar.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/key.h"
#include "mimetic/data/test_util.h"

namespace mimetic::data {
namespace {

using testing::ChiSquare;
using testing::ChiSquareCritical;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::HostBatch;
using testing::ToHost;

const core::Key kKey = core::Key::FromSeed(11);
constexpr int32_t kIgnore = kMqarIgnoreLabel;

TEST(BuildZoologyMqarExampleTest, WorkedExampleOfSpec) {
  // V = 12, K = 2, T = 16; context 2 8 4 7; gaps: key 2 -> 4, key 4 -> 1.
  const MqarExample example = BuildZoologyMqarExample(12, 16, {2, 4}, {8, 7}, {4, 1}).value();
  EXPECT_THAT(example.inputs, ElementsAre(2, 8, 4, 7, 0, 0, 4, 0, 0, 0, 0, 0, 2, 0, 0, 0));
  EXPECT_THAT(example.labels, ElementsAre(kIgnore, kIgnore, kIgnore, kIgnore, kIgnore, kIgnore, 7, kIgnore,
                                          kIgnore, kIgnore, kIgnore, kIgnore, 8, kIgnore, kIgnore, kIgnore));
}

TEST(BuildZoologyMqarExampleTest, RejectsWhatZoologyWouldNot) {
  EXPECT_THAT(BuildZoologyMqarExample(12, 16, {2, 2}, {8, 7}, {4, 1}).status().message(),
              HasSubstr("keys[1] = 2; expected distinct keys in [1, 6)"));
  EXPECT_THAT(BuildZoologyMqarExample(12, 16, {0, 4}, {8, 7}, {4, 1}).status().message(),
              HasSubstr("keys[0] = 0"));
  EXPECT_THAT(BuildZoologyMqarExample(12, 16, {2, 4}, {5, 7}, {4, 1}).status().message(),
              HasSubstr("values[0] = 5; expected values in [6, 12)"));
  EXPECT_THAT(BuildZoologyMqarExample(12, 16, {2, 4}, {8, 7}, {6, 1}).status().message(),
              HasSubstr("gaps[0] = 6; expected distinct gaps in [0, 6)"));
  EXPECT_THAT(BuildZoologyMqarExample(12, 15, {2, 4}, {8, 7}, {4, 1}).status().message(),
              HasSubstr("input_seq_len = 15; expected an even number"));
  EXPECT_THAT(
      BuildZoologyMqarExample(12, 16, {2, 4, 1, 3, 5}, {8, 7, 6, 9, 10}, {4, 1, 0, 2, 3}).status().message(),
      HasSubstr("num_kv_pairs = 5 with input_seq_len = 16; expected 1 <= num_kv_pairs <= input_seq_len / 4"));
  EXPECT_THAT(BuildZoologyMqarExample(12, 16, {2, 4}, {8}, {4, 1}).status().message(),
              HasSubstr("equal counts"));
}

// One row, decoded: the gap of each key in context order.
struct DecodedRow {
  std::vector<int32_t> keys, values, gaps;
};

DecodedRow DecodeRow(const HostBatch& host, int64_t b, int vocab, int64_t k, bool random_non_queries) {
  DecodedRow row;
  const int64_t seq_len = host.seq_len;
  absl::flat_hash_map<int32_t, int64_t> index_of;
  for (int64_t i = 0; i < k; ++i) {
    row.keys.push_back(host.token(b, 2 * i));
    row.values.push_back(host.token(b, 2 * i + 1));
    EXPECT_GE(row.keys[i], 1);
    EXPECT_LT(row.keys[i], vocab / 2);
    EXPECT_GE(row.values[i], vocab / 2);
    EXPECT_LT(row.values[i], vocab);
    EXPECT_TRUE(index_of.emplace(row.keys[i], i).second) << "key " << row.keys[i] << " stored twice";
  }
  EXPECT_EQ(std::set<int32_t>(row.values.begin(), row.values.end()).size(), static_cast<size_t>(k));
  row.gaps.assign(k, -1);
  for (int64_t t = 0; t < seq_len; ++t) {
    const int32_t token = host.token(b, t);
    EXPECT_GE(token, 0);
    EXPECT_LT(token, vocab);
    if (host.loss(b, t) == 0.0f) {
      EXPECT_EQ(host.target(b, t), 0);
      if (t >= 2 * k && !random_non_queries) {
        EXPECT_EQ(token, 0);
      }
      continue;
    }
    EXPECT_EQ(host.loss(b, t), 1.0f);
    EXPECT_GE(t, 2 * k);
    EXPECT_EQ((t - 2 * k) % 2, 0);
    const auto it = index_of.find(token);
    EXPECT_NE(it, index_of.end()) << "query of an unknown key at " << t;
    if (it == index_of.end()) continue;
    EXPECT_EQ(row.gaps[it->second], -1) << "key queried twice";
    row.gaps[it->second] = static_cast<int32_t>((t - 2 * k) / 2);
    EXPECT_EQ(host.target(b, t), row.values[it->second]);
  }
  for (int32_t gap : row.gaps) EXPECT_GE(gap, 0) << "a key was never queried";
  return row;
}

TEST(MqarZoologyTaskTest, EveryKeyStoredOnceAndQueriedOnce) {
  for (bool random_non_queries : {false, true}) {
    MqarZoologyConfig config;  // V 8192, T 64, K 8.
    config.random_non_queries = random_non_queries;
    const std::unique_ptr<Task> task = MakeMqarZoologyTask(config).value();
    EXPECT_EQ(task->model_vocab(), 8192);
    EXPECT_EQ(task->seq_len(), 64);
    const HostBatch host = ToHost(task->SampleTrain(kKey, 64).value());
    ASSERT_EQ(host.seq_len, 64);
    for (int64_t b = 0; b < host.batch; ++b) DecodeRow(host, b, 8192, 8, random_non_queries);
  }
}

TEST(MqarZoologyTaskTest, SingleGapFollowsThePowerLaw) {
  // K = 1: the gap is one draw from p(g) ∝ (g + 1)^(a - 1), g < space = 31.
  for (double a : {0.01, 1.0}) {
    MqarZoologyConfig config;
    config.vocab = 128;
    config.input_seq_len = 64;
    config.num_kv_pairs = 1;
    config.power_a = a;
    config.random_non_queries = false;
    const HostBatch host = ToHost(MakeMqarZoologyTask(config).value()->SampleTrain(kKey, 20000).value());
    std::vector<int64_t> counts(31, 0);
    for (int64_t b = 0; b < host.batch; ++b) ++counts[DecodeRow(host, b, 128, 1, false).gaps[0]];
    std::vector<double> p(31);
    double total = 0;
    for (int g = 0; g < 31; ++g) total += p[g] = a * std::pow(g + 1.0, a - 1.0);
    for (double& x : p) x /= total;
    EXPECT_LT(ChiSquare(counts, p), ChiSquareCritical(30)) << "a = " << a;
    const std::vector<double> sampled_p = ZoologyGapProbabilities(31, a);
    for (int g = 0; g < 31; ++g) EXPECT_NEAR(sampled_p[g], p[g], 1e-9);
    if (a < 1) {
      EXPECT_GT(counts[0], 5 * counts[30]);  // Small gaps most likely.
    }
  }
}

TEST(MqarZoologyTaskTest, GapsAreDrawnWithoutReplacementOneAfterAnother) {
  // space = 3, K = 2: P(gap_0 = i, gap_1 = j) = w_i / W * w_j / (W - w_i), as numpy's choice.
  MqarZoologyConfig config;
  config.vocab = 12;
  config.input_seq_len = 10;
  config.num_kv_pairs = 2;
  config.random_non_queries = false;
  const HostBatch host = ToHost(MakeMqarZoologyTask(config).value()->SampleTrain(kKey, 30000).value());
  const double w[3] = {1.0, std::pow(2.0, -0.99), std::pow(3.0, -0.99)};
  const double total = w[0] + w[1] + w[2];
  std::vector<int64_t> counts(6, 0);
  std::vector<double> p;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      if (i != j) p.push_back(w[i] / total * w[j] / (total - w[i]));
    }
  }
  for (int64_t b = 0; b < host.batch; ++b) {
    const DecodedRow row = DecodeRow(host, b, 12, 2, false);
    const int i = row.gaps[0], j = row.gaps[1];
    ASSERT_NE(i, j);
    ++counts[i * 2 + (j > i ? j - 1 : j)];
  }
  EXPECT_LT(ChiSquare(counts, p), ChiSquareCritical(5));
}

TEST(MqarZoologyTaskTest, ManyGapsAreSkewedToSmallOnes) {
  MqarZoologyConfig config;  // T 64, K 8: space 24.
  const HostBatch host = ToHost(MakeMqarZoologyTask(config).value()->SampleTrain(kKey, 2000).value());
  int64_t low = 0, high = 0;
  double mean = 0;
  for (int64_t b = 0; b < host.batch; ++b) {
    for (int32_t gap : DecodeRow(host, b, 8192, 8, true).gaps) {
      low += gap < 4;
      high += gap >= 20;
      mean += gap;
    }
  }
  mean /= host.batch * 8;
  EXPECT_GT(low, high);
  EXPECT_LT(mean, 11.5 - 1.0);  // Uniform sampling without replacement would average 11.5.
}

TEST(MqarZoologyTaskTest, EvalScalesKeysWithLength) {
  MqarZoologyConfig config;  // T 64, K 8.
  const MqarZoologyTask task(config);
  EXPECT_EQ(task.EvalNumKvPairs(64), 8);
  EXPECT_EQ(task.EvalNumKvPairs(128), 16);
  EXPECT_EQ(task.EvalNumKvPairs(6), 1);
  const EvalBatch eval = task.SampleEval(kKey, 8, 128).value();
  const HostBatch host = ToHost(eval.batch);
  ASSERT_EQ(host.seq_len, 128);
  for (int64_t b = 0; b < host.batch; ++b) {
    DecodeRow(host, b, 8192, 16, true);
    std::vector<int64_t> masked;
    for (int64_t t = 0; t < 128; ++t) {
      if (host.loss(b, t) != 0.0f) masked.push_back(t);
    }
    EXPECT_EQ(eval.answer_positions[b], masked);
    EXPECT_EQ(eval.lengths[b], 128);
  }
  config.eval_num_kv_pairs = 3;
  EXPECT_EQ(MqarZoologyTask(config).EvalNumKvPairs(512), 3);
  EXPECT_THAT(task.SampleEval(kKey, 2, 129).status().message(), HasSubstr("input_seq_len = 129"));
  EXPECT_THAT(task.SampleEval(kKey, 2, 8192).status().message(), HasSubstr("expected vocab > input_seq_len"));
}

TEST(MqarZoologyTaskTest, SameKeySameBatch) {
  const std::unique_ptr<Task> task = MakeMqarZoologyTask(MqarZoologyConfig{}).value();
  const HostBatch a = ToHost(task->SampleTrain(kKey, 8).value());
  const HostBatch b = ToHost(task->SampleTrain(kKey, 8).value());
  const HostBatch c = ToHost(task->SampleTrain(core::FoldIn(kKey, 9), 8).value());
  EXPECT_EQ(a.tokens, b.tokens);
  EXPECT_EQ(a.targets, b.targets);
  EXPECT_NE(a.tokens, c.tokens);
}

TEST(MqarZoologyTaskTest, SamplingIsFast) {
  MqarZoologyConfig config;
  config.input_seq_len = 256;
  config.num_kv_pairs = 16;
  const std::unique_ptr<Task> task = MakeMqarZoologyTask(config).value();
  constexpr int kRepeats = 20;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kRepeats; ++i) ASSERT_TRUE(task->SampleTrain(core::FoldIn(kKey, i), 64).ok());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() / kRepeats;
  std::printf("mqar SampleTrain(64 x 256, K 16): %.3f ms per batch\n", ms);
  EXPECT_LT(ms, 10.0);  // Generous for a loaded shared machine.
}

absl::Status MqarStatus(void (*edit)(MqarZoologyConfig&)) {
  MqarZoologyConfig config;
  edit(config);
  return MakeMqarZoologyTask(config).status();
}

TEST(MqarZoologyTaskTest, BadConfigsNameTheField) {
  EXPECT_THAT(MqarStatus([](MqarZoologyConfig& c) { c.input_seq_len = 63; }).message(),
              HasSubstr("MqarZoologyConfig.input_seq_len = 63; expected an even number"));
  EXPECT_THAT(MqarStatus([](MqarZoologyConfig& c) { c.input_seq_len = 0; }).message(),
              HasSubstr("MqarZoologyConfig.input_seq_len = 0"));
  EXPECT_THAT(
      MqarStatus([](MqarZoologyConfig& c) { c.vocab = 64; }).message(),
      HasSubstr("MqarZoologyConfig.vocab = 64 with input_seq_len = 64; expected vocab > input_seq_len"));
  EXPECT_THAT(
      MqarStatus([](MqarZoologyConfig& c) { c.num_kv_pairs = 17; }).message(),
      HasSubstr("MqarZoologyConfig.num_kv_pairs = 17 with input_seq_len = 64; expected 1 <= num_kv_pairs "
                "<= input_seq_len / 4 = 16"));
  EXPECT_THAT(MqarStatus([](MqarZoologyConfig& c) { c.num_kv_pairs = 0; }).message(),
              HasSubstr("num_kv_pairs = 0"));
  EXPECT_THAT(MqarStatus([](MqarZoologyConfig& c) { c.power_a = 0; }).message(),
              HasSubstr("MqarZoologyConfig.power_a = 0; expected a finite power_a > 0"));
  EXPECT_THAT(MqarStatus([](MqarZoologyConfig& c) { c.eval_num_kv_pairs = -1; }).message(),
              HasSubstr("MqarZoologyConfig.eval_num_kv_pairs = -1"));
  // (K <= V/2 - 1 keys always holds once V > T >= 4K, Zoology's own assertions.)
  EXPECT_THAT(MakeMqarZoologyTask(MqarZoologyConfig{}).value()->SampleTrain(kKey, -1).status().message(),
              HasSubstr("batch = -1"));
}

}  // namespace
}  // namespace mimetic::data
