#include "mimetic/experiments/results/chance.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

TaskSpec Task(const char* text) {
  TaskSpec task;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &task)) << text;
  return task;
}

// Fig. 8's MQAR (T 32 with 4 pairs, read at 64 with 8): Mamba 1 at 0.129 and 0.124 there is at chance.
TEST(ChanceTest, MqarPerQueryIsOneOverThePairsAtTheLength) {
  const TaskSpec mqar = Task("mqar { vocab: 128 seq_len: 32 num_kv_pairs: 4 }");
  EXPECT_DOUBLE_EQ(ChanceLevel(mqar, 32, Metric::kToken), 0.25);
  EXPECT_DOUBLE_EQ(ChanceLevel(mqar, 64, Metric::kToken), 0.125);
  EXPECT_DOUBLE_EQ(LearnedFloor(mqar, 64, Metric::kToken), 0.175);
  EXPECT_GT(LearnedFloor(mqar, 64, Metric::kToken), 0.129);
  EXPECT_NEAR(ChanceLevel(mqar, 32, Metric::kExact), 1.0 / 256, 1e-12);
}

// Fig. 9's MQAR at L 16 has 2 pairs: a 0.5 crossing there is chance, and with 1 pair chance is 1.
TEST(ChanceTest, FewPairsPutChanceHigh) {
  EXPECT_DOUBLE_EQ(ChanceLevel(Task("mqar { vocab: 512 seq_len: 16 num_kv_pairs: 2 }"), 16, Metric::kToken),
                   0.5);
  EXPECT_DOUBLE_EQ(ChanceLevel(Task("mqar { vocab: 512 seq_len: 8 num_kv_pairs: 1 }"), 8, Metric::kToken),
                   1.0);
}

TEST(ChanceTest, CopyPerTokenIsOneOverTheVocabularyAndExactIsNearZero) {
  const TaskSpec copy = Task("copy { vocab: 26 max_len: 16 }");
  EXPECT_DOUBLE_EQ(ChanceLevel(copy, 16, Metric::kToken), 1.0 / 26);
  EXPECT_LT(ChanceLevel(copy, 16, Metric::kExact), 1e-20);
  EXPECT_NEAR(LearnedFloor(copy, 32, Metric::kExact), kAboveChance, 1e-12);
  EXPECT_DOUBLE_EQ(ChanceLevel(Task("copy { vocab: 26 max_len: 16 reverse: true }"), 16, Metric::kToken),
                   1.0 / 26);
}

TEST(ChanceTest, OtherTasksHaveTheMarginAlone) {
  EXPECT_DOUBLE_EQ(ChanceLevel(Task("mqar_copy { vocab: 64 max_kv: 16 }"), 16, Metric::kToken), 1.0 / 16);
  EXPECT_DOUBLE_EQ(ChanceLevel(Task("mqar_copy { vocab: 64 max_kv: 16 }"), 16, Metric::kExact), 0);
  EXPECT_DOUBLE_EQ(LearnedFloor(Task("composite {}"), 8, Metric::kExact), kAboveChance);
  EXPECT_DOUBLE_EQ(LearnedFloor(TaskSpec(), 8, Metric::kToken), kAboveChance);
}

}  // namespace
}  // namespace mimetic::experiments
