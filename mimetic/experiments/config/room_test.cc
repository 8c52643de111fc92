#include "mimetic/experiments/config/room.h"

#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace mimetic::experiments {
namespace {

models::ModelSpec Spec(const std::string& text) {
  models::ModelSpec spec;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &spec)) << text;
  return spec;
}

TaskSpec Task(const std::string& text) {
  TaskSpec task;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &task)) << text;
  return task;
}

TEST(RoomTest, KeyDimensionIsCappedByTheLayersInputWidth) {
  const models::ModelSpec spec = Spec(R"pb(
    d_model: 64
    layers { mamba2 { d_state: 128 } }
    layers { mamba2 { d_state: 32 } }
    layers { mamba1 { d_state: 256 expand: 2 } }
    layers { mamba1 { d_state: 32 expand: 2 } }
    layers { linear_attention { num_heads: 1 head_dim: 1024 } }
    layers { attention { num_heads: 4 } }
  )pb");
  EXPECT_EQ(KeyDimension(spec, 0), 64);  // Mamba 2: min(N, D)
  EXPECT_EQ(KeyDimension(spec, 1), 32);
  EXPECT_EQ(KeyDimension(spec, 2), 128);  // Mamba 1: min(N, expand * D)
  EXPECT_EQ(KeyDimension(spec, 3), 32);
  EXPECT_EQ(KeyDimension(spec, 4), 64);  // linear attention: min(head_dim, D)
  EXPECT_EQ(KeyDimension(spec, 5), std::nullopt);
  EXPECT_EQ(KeyDimension(spec, 6), std::nullopt);
  EXPECT_EQ(MinKeyDimension(spec), 32);
  EXPECT_EQ(KeyDimensionText(spec), "Mamba 2 key min(N 32, D 64) = 32");
  EXPECT_EQ(MinKeyDimension(Spec("d_model: 8 layers { attention { num_heads: 1 } }")), std::nullopt);
  // A softmax-attention layer lifts the limit: the model can copy with it.
  EXPECT_EQ(RecallKeyLimit(spec), std::nullopt);
  models::ModelSpec without_attention = spec;
  without_attention.mutable_layers()->RemoveLast();
  EXPECT_EQ(RecallKeyLimit(without_attention), 32);
  EXPECT_EQ(KeyDimensionText(Spec("d_model: 8 layers { attention { num_heads: 1 } }")), "");
}

TEST(RoomTest, ExamplesAndRowsInTokenIds) {
  const TaskSpec copy = Task("copy { max_len: 20 context_len: 128 }");
  EXPECT_EQ(ExampleTokens(copy, 40), 83);  // BOS, 40, SEP, 40, EOS
  EXPECT_EQ(TrainingRowTokens(copy), 129);
  EXPECT_EQ(TrainLength(copy), 20);
  const TaskSpec pairs = Task("mqar_copy { max_kv: 8 context_len: 64 }");
  EXPECT_EQ(ExampleTokens(pairs, 16), 67);
  EXPECT_EQ(TrainingRowTokens(pairs), 65);
  EXPECT_EQ(TrainLength(pairs), 8);
  const TaskSpec mqar = Task("mqar { seq_len: 64 num_kv_pairs: 8 }");
  EXPECT_EQ(ExampleTokens(mqar, 128), std::nullopt);
  EXPECT_EQ(TrainingRowTokens(mqar), std::nullopt);
  EXPECT_EQ(TrainLength(mqar), 64);
}

TEST(RoomTest, RecalledItemsAreTokensOrPairs) {
  EXPECT_EQ(RecalledItems(Task("copy { max_len: 20 context_len: 128 }"), 40), 40);
  EXPECT_EQ(RecalledItems(Task("mqar_copy { max_kv: 8 context_len: 64 }"), 16), 16);
  // MQAR keeps training's pairs per token at every length (data/mqar.h): 8 per 64, at least 1.
  const TaskSpec mqar = Task("mqar { seq_len: 64 num_kv_pairs: 8 }");
  EXPECT_EQ(RecalledItems(mqar, 64), 8);
  EXPECT_EQ(RecalledItems(mqar, 128), 16);
  EXPECT_EQ(RecalledItems(mqar, 100), 12);
  EXPECT_EQ(RecalledItems(mqar, 4), 1);
}

}  // namespace
}  // namespace mimetic::experiments
