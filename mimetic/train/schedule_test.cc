#include "mimetic/train/schedule.h"

#include "gtest/gtest.h"

namespace mimetic::train {
namespace {

TEST(ScheduleTest, LinearWarmupThenLinearDecayAsHuggingFace) {
  Schedule s{Schedule::kLinear, 1e-3, 100, 1000};
  EXPECT_DOUBLE_EQ(s.LearningRate(0), 0.0);
  EXPECT_DOUBLE_EQ(s.LearningRate(50), 5e-4);
  EXPECT_DOUBLE_EQ(s.LearningRate(100), 1e-3);
  EXPECT_DOUBLE_EQ(s.LearningRate(550), 5e-4);
  EXPECT_DOUBLE_EQ(s.LearningRate(1000), 0.0);
  EXPECT_DOUBLE_EQ(s.LearningRate(1200), 0.0);
}

TEST(ScheduleTest, CosineWithFloor) {
  Schedule s{Schedule::kCosine, 2.5e-4, 10, 210, 0.04};
  EXPECT_DOUBLE_EQ(s.LearningRate(10), 2.5e-4);
  EXPECT_NEAR(s.LearningRate(110), 2.5e-4 * (0.04 + 0.96 * 0.5), 1e-15);
  EXPECT_NEAR(s.LearningRate(210), 1e-5, 1e-15);
}

TEST(ScheduleTest, ConstantAndValidation) {
  Schedule s{Schedule::kConstant, 1e-3, 0, 10};
  EXPECT_DOUBLE_EQ(s.LearningRate(0), 1e-3);
  EXPECT_TRUE(s.Validate().ok());
  s.peak_lr = -1;
  EXPECT_NE(s.Validate().message().find("train.lr = -1"), std::string::npos);
}

}  // namespace
}  // namespace mimetic::train
