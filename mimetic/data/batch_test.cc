#include "mimetic/data/batch.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::data {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(BatchFromRowsTest, ShiftsAsJelassi) {
  // Two rows of 4 ids: tokens = ids[:, :-1], targets = ids[:, 1:], mask = mask[:, 1:].
  const std::vector<int32_t> ids = {10, 11, 12, 13, 20, 21, 22, 23};
  const std::vector<float> mask = {0, 0, 1, 1, 1, 0, 0, 1};
  const Batch batch = BatchFromRows(ids, mask, 2, 4).value();
  EXPECT_EQ(batch.tokens.shape(), (core::Shape{2, 3}));
  EXPECT_THAT(batch.tokens.ToVector<int32_t>().value(), ElementsAre(10, 11, 12, 20, 21, 22));
  EXPECT_THAT(batch.targets.ToVector<int32_t>().value(), ElementsAre(11, 12, 13, 21, 22, 23));
  EXPECT_THAT(batch.loss_mask.ToVector<float>().value(), ElementsAre(0, 1, 1, 0, 0, 1));
}

TEST(BatchFromRowsTest, RejectsMismatchedSizes) {
  const std::vector<int32_t> ids = {1, 2, 3};
  const std::vector<float> mask = {0, 1, 1};
  EXPECT_THAT(BatchFromRows(ids, mask, 2, 2).status().message(), HasSubstr("expected batch * row_len = 4"));
  EXPECT_THAT(BatchFromRows(ids, mask, 3, 1).status().message(), HasSubstr("row_len >= 2"));
}

TEST(BatchFromPartsTest, KeepsPartsAsGiven) {
  const std::vector<int32_t> tokens = {1, 2}, targets = {3, 4};
  const std::vector<float> mask = {0, 1};
  const Batch batch = BatchFromParts(tokens, targets, mask, 1, 2).value();
  EXPECT_THAT(batch.targets.ToVector<int32_t>().value(), ElementsAre(3, 4));
  EXPECT_THAT(batch.loss_mask.ToVector<float>().value(), ElementsAre(0, 1));
}

TEST(MaskedPositionsTest, ListsSupervisedPositions) {
  const float mask[] = {0, 1, 0, 1, 1};
  EXPECT_THAT(MaskedPositions(mask, 5), ElementsAre(1, 3, 4));
}

}  // namespace
}  // namespace mimetic::data
