#include "mimetic/data/composite.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/key.h"
#include "mimetic/data/test_util.h"

namespace mimetic::data {
namespace {

using testing::ChiSquareCritical;
using testing::ChiSquareUniform;
using ::testing::HasSubstr;
using testing::HostBatch;
using testing::ToHost;

const core::Key kKey = core::Key::FromSeed(8);

CompositeFunctionConfig Config(CompositeVariant variant, CompositeSplit split) {
  CompositeFunctionConfig config;
  config.variant = variant;
  config.split = split;
  return config;
}

TEST(CompositePairShiftTest, StandardTable) {
  const CompositeFunctionConfig config;
  EXPECT_EQ(CompositePairShift(config, 1, 1).value(), 10);
  EXPECT_EQ(CompositePairShift(config, 1, 2).value(), 6);
  EXPECT_EQ(CompositePairShift(config, 2, 4).value(), -7);
  EXPECT_EQ(CompositePairShift(config, 4, 4).value(), -16);
  EXPECT_EQ(CompositePairShift(config, 3, 4).value(), -6);   // Set by hand.
  EXPECT_EQ(CompositePairShift(config, 4, 3).value(), -10);  // The composite solution.
  CompositeFunctionConfig symmetric = config;
  symmetric.pair43_label = Pair43Label::kSymmetric;
  EXPECT_EQ(CompositePairShift(symmetric, 4, 3).value(), -6);
  EXPECT_THAT(CompositePairShift(config, 0, 1).status().message(), HasSubstr("pair 01 is not part"));
}

TEST(CompositePairShiftTest, FullySymmetricTable) {
  const CompositeFunctionConfig config = Config(CompositeVariant::kFullySymmetric, CompositeSplit::kTrain);
  EXPECT_EQ(CompositePairShift(config, 0, 1).value(), 7);    // Set 1: +2 +5.
  EXPECT_EQ(CompositePairShift(config, 2, 3).value(), -1);   // Set 1: +1 -2.
  EXPECT_EQ(CompositePairShift(config, 0, 3).value(), -6);   // Set 2: -9 +3.
  EXPECT_EQ(CompositePairShift(config, 1, 3).value(), 9);    // Set 2: +6 +3.
  EXPECT_EQ(CompositePairShift(config, 4, 0).value(), -14);  // Set 2 with the inferred 4: -5.
  for (int a = 0; a <= 4; ++a) {
    for (int b = 0; b <= 4; ++b) {
      if (a != b) {
        EXPECT_EQ(CompositePairShift(config, a, b).value(), CompositePairShift(config, b, a).value());
      }
    }
  }
  EXPECT_EQ(CompositePairShift(config, 4, 3).value(), -10);
  EXPECT_THAT(CompositePairShift(config, 2, 2).status().message(), HasSubstr("pair 22 is not part"));
}

TEST(CompositePairsTest, TrainLeavesOut43) {
  using Pairs = std::vector<std::pair<int, int>>;
  const Pairs train = CompositePairs(CompositeFunctionConfig{});
  EXPECT_EQ(train.size(), 15u);
  EXPECT_EQ(std::count(train.begin(), train.end(), std::make_pair(4, 3)), 0);
  EXPECT_EQ(CompositePairs(Config(CompositeVariant::kStandard, CompositeSplit::kTest)).size(), 16u);
  EXPECT_EQ(CompositePairs(Config(CompositeVariant::kFullySymmetric, CompositeSplit::kTrain)).size(), 19u);
  EXPECT_EQ(CompositePairs(Config(CompositeVariant::kFullySymmetric, CompositeSplit::kTest)).size(), 20u);
}

struct Row {
  int key, position, a1, a2, label;
};

// Finds the key (the token before the two anchors, the only ids <= 4) and checks the row's layout.
Row DecodeRow(const HostBatch& host, int64_t b, const CompositeFunctionConfig& config) {
  Row row{-1, -1, -1, -1, host.target(b, host.seq_len - 1)};
  for (int64_t t = 0; t < host.seq_len; ++t) {
    const int32_t token = host.token(b, t);
    if (token <= 4) {
      if (row.position < 0) {
        row.position = static_cast<int>(t) - 1;
        row.a1 = token;
      } else {
        EXPECT_EQ(t, row.position + 2) << "a third anchor";
        row.a2 = token;
      }
    } else {
      EXPECT_GE(token, config.key_min);
      EXPECT_LE(token, config.key_max);
    }
    EXPECT_EQ(host.loss(b, t), t == host.seq_len - 1 ? 1.0f : 0.0f);
  }
  EXPECT_GE(row.position, 0);
  EXPECT_GE(row.a2, 0);
  row.key = host.token(b, row.position);
  return row;
}

TEST(CompositeFunctionTaskTest, TrainSplitKeepsKeysOffTheirResiduePosition) {
  const CompositeFunctionConfig config;
  const std::unique_ptr<Task> task = MakeCompositeFunctionTask(config).value();
  EXPECT_EQ(task->model_vocab(), 111);
  EXPECT_EQ(task->seq_len(), 8);
  const HostBatch host = ToHost(task->SampleTrain(kKey, 15000).value());
  std::map<std::pair<int, int>, int64_t> pair_counts;
  for (int64_t b = 0; b < host.batch; ++b) {
    const Row row = DecodeRow(host, b, config);
    EXPECT_NE(row.key % 8, (row.position + 1) % 8) << "key " << row.key << " at its residue position";
    EXPECT_FALSE(row.a1 == 4 && row.a2 == 3) << "pair 43 in training";
    EXPECT_EQ(row.label, row.key + CompositePairShift(config, row.a1, row.a2).value());
    EXPECT_GE(row.label, 4);
    EXPECT_LE(row.label, 110);
    ++pair_counts[{row.a1, row.a2}];
  }
  ASSERT_EQ(pair_counts.size(), 15u);
  std::vector<int64_t> counts;
  for (const auto& [pair, count] : pair_counts) counts.push_back(count);
  EXPECT_LT(ChiSquareUniform(counts), ChiSquareCritical(14));
}

TEST(CompositeFunctionTaskTest, TestSplitPutsKeysOnTheirResiduePosition) {
  for (CompositeVariant variant : {CompositeVariant::kStandard, CompositeVariant::kFullySymmetric}) {
    const CompositeFunctionConfig config = Config(variant, CompositeSplit::kTest);
    const std::unique_ptr<Task> task = MakeCompositeFunctionTask(config).value();
    const EvalBatch eval = task->SampleEval(kKey, 4000, 8).value();
    const HostBatch host = ToHost(eval.batch);
    std::map<std::pair<int, int>, int64_t> pair_counts;
    for (int64_t b = 0; b < host.batch; ++b) {
      const Row row = DecodeRow(host, b, config);
      EXPECT_EQ(row.key % 8, (row.position + 1) % 8);  // E.g. key 33 only at the first position.
      EXPECT_EQ(row.label, row.key + CompositePairShift(config, row.a1, row.a2).value());
      ++pair_counts[{row.a1, row.a2}];
      EXPECT_EQ(eval.answer_positions[b], std::vector<int64_t>{7});
    }
    EXPECT_EQ(pair_counts.size(), variant == CompositeVariant::kStandard ? 16u : 20u);
    EXPECT_GT((pair_counts[{4, 3}]), 0);
  }
}

TEST(CompositeFunctionTaskTest, UnseenPairWithEitherLabel) {
  CompositeFunctionConfig config = Config(CompositeVariant::kStandard, CompositeSplit::kTest);
  config.only_unseen_pair = true;
  for (Pair43Label label : {Pair43Label::kComposite, Pair43Label::kSymmetric}) {
    config.pair43_label = label;
    const HostBatch host = ToHost(MakeCompositeFunctionTask(config).value()->SampleTrain(kKey, 200).value());
    for (int64_t b = 0; b < host.batch; ++b) {
      const Row row = DecodeRow(host, b, config);
      EXPECT_EQ(row.a1, 4);
      EXPECT_EQ(row.a2, 3);
      EXPECT_EQ(row.label, row.key + (label == Pair43Label::kComposite ? -10 : -6));
    }
  }
}

TEST(CompositeFunctionTaskTest, SameKeySameBatch) {
  const std::unique_ptr<Task> task = MakeCompositeFunctionTask(CompositeFunctionConfig{}).value();
  EXPECT_EQ(ToHost(task->SampleTrain(kKey, 16).value()).tokens,
            ToHost(task->SampleTrain(kKey, 16).value()).tokens);
  EXPECT_NE(ToHost(task->SampleTrain(kKey, 16).value()).tokens,
            ToHost(task->SampleTrain(core::FoldIn(kKey, 1), 16).value()).tokens);
}

absl::Status Status(void (*edit)(CompositeFunctionConfig&)) {
  CompositeFunctionConfig config;
  edit(config);
  return MakeCompositeFunctionTask(config).status();
}

TEST(CompositeFunctionTaskTest, BadConfigsNameTheField) {
  EXPECT_THAT(Status([](CompositeFunctionConfig& c) { c.seq_len = 2; }).message(),
              HasSubstr("CompositeFunctionConfig.seq_len = 2"));
  EXPECT_THAT(Status([](CompositeFunctionConfig& c) { c.key_min = 3; }).message(),
              HasSubstr("CompositeFunctionConfig.key_min = 3; expected 5 <= key_min"));
  EXPECT_THAT(Status([](CompositeFunctionConfig& c) { c.key_max = 10; }).message(),
              HasSubstr("CompositeFunctionConfig.key_max = 10; expected key_min = 20 <= key_max"));
  EXPECT_THAT(Status([](CompositeFunctionConfig& c) { c.key_min = 10; }).message(),
              HasSubstr("CompositeFunctionConfig.key_min = 10; expected key_min >= 16"));
  EXPECT_THAT(Status([](CompositeFunctionConfig& c) { c.only_unseen_pair = true; }).message(),
              HasSubstr("only_unseen_pair = true; expected split = kTest"));
  EXPECT_THAT(Status([](CompositeFunctionConfig& c) {
                c.variant = CompositeVariant::kFullySymmetric;
                c.pair43_label = Pair43Label::kSymmetric;
              }).message(),
              HasSubstr("pair43_label = kSymmetric; expected variant = kStandard"));
  EXPECT_THAT(Status([](CompositeFunctionConfig& c) {
                c.split = CompositeSplit::kTest;
                c.key_min = 23;
                c.key_max = 23;  // 23 = 7 mod 8: its residue position (the 7th) cannot hold a key.
              }).message(),
              HasSubstr("no key in [23, 23] fits the test split"));
  const std::unique_ptr<Task> task = MakeCompositeFunctionTask(CompositeFunctionConfig{}).value();
  EXPECT_THAT(task->SampleEval(kKey, 1, 9).status().message(),
              HasSubstr("length = 9; expected the fixed seq_len = 8"));
}

}  // namespace
}  // namespace mimetic::data
