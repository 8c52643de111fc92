#include "mimetic/experiments/runner/point_result_check.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

constexpr char kFile[] = "points/default/seed1/result.textproto";

Experiment Point() {
  Experiment e;
  e.add_variants()->set_name("default");
  e.add_seeds(1);
  e.mutable_train()->set_steps(100);
  return e;
}

// What a finished run of Point() writes.
PointResult Good() {
  PointResult r;
  EXPECT_TRUE(MergeConfigText(R"pb(
                                variant: "default"
                                seed: 1
                                steps: 100
                                seconds: 12.5
                                final_loss: 0.25
                                threads: 2
                                final { length: 20 exact: 0.5 token: 0.9 }
                                final { length: 40 exact: 0 token: 0.3 }
                                curve {
                                  step: 50
                                  accuracy { length: 20 exact: 0.1 token: 0.5 }
                                }
                                curve {
                                  step: 100
                                  accuracy { length: 20 exact: 0.5 token: 0.9 }
                                }
                              )pb",
                              &r)
                  .ok());
  return r;
}

// The message of the check of Good() edited by `edit` ("" when it passes).
template <typename Edit>
std::string Refusal(Edit edit) {
  PointResult r = Good();
  edit(r);
  const absl::Status s = CheckPointResult(r, Point(), kFile);
  if (!s.ok()) {
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  }
  return std::string(s.message());
}

TEST(PointResultCheckTest, AcceptsWhatARunWrites) {
  EXPECT_TRUE(CheckPointResult(Good(), Point(), kFile).ok());
  // Early stopped or diverged: fewer steps; a diverged point records NaN loss and accuracies of 0.
  EXPECT_EQ(Refusal([](PointResult& r) {
              r.set_steps(60);
              r.set_early_stopped(true);
              r.mutable_curve()->RemoveLast();
            }),
            "");
  EXPECT_EQ(Refusal([](PointResult& r) {
              r.set_steps(70);
              r.set_diverged(true);
              r.set_final_loss(std::nan(""));
              r.mutable_curve()->RemoveLast();
              for (LengthAccuracy& a : *r.mutable_final()) {
                a.set_exact(0);
                a.set_token(0);
              }
            }),
            "");
}

// The values of the issue: each refused with the file, field, value and range.
TEST(PointResultCheckTest, RefusesValuesNoRunCouldHaveMade) {
  EXPECT_THAT(Refusal([](PointResult& r) { r.mutable_final(0)->set_exact(7); }),
              HasSubstr("'points/default/seed1/result.textproto': final[0].exact is 7; expected a finite "
                        "accuracy in [0, 1]"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.mutable_final(1)->set_token(-3); }),
              HasSubstr("final[1].token is -3; expected a finite accuracy in [0, 1]"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.mutable_final(0)->set_token(std::nan("")); }),
              HasSubstr("final[0].token is nan; expected a finite accuracy"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.mutable_curve(0)->mutable_accuracy(0)->set_exact(1.5); }),
              HasSubstr("curve[0][0].exact is 1.5"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.set_final_loss(-1); }),
              HasSubstr("final_loss is -1; expected a finite cross-entropy >= 0"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.set_seconds(std::nan("")); }), HasSubstr("seconds is nan"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.set_threads(-2); }),
              HasSubstr("threads is -2; expected 0..65536"));
}

// An empty file parses as an empty PointResult: no variant, no final evaluation. It is not a seed with
// loss 0.
TEST(PointResultCheckTest, RefusesAnEmptyResultAndAnotherPointsResult) {
  EXPECT_THAT(Refusal([](PointResult& r) { r.Clear(); }),
              HasSubstr("variant is \"\"; expected \"default\" (the point's variant)"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.set_variant("mimetic"); }), HasSubstr("variant is \"mimetic\""));
  EXPECT_THAT(Refusal([](PointResult& r) { r.set_seed(2); }),
              HasSubstr("seed is 2; expected 1 (the point's seed)"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.clear_final(); }),
              HasSubstr("final is empty; expected the final evaluation at one or more lengths"));
}

TEST(PointResultCheckTest, RefusesImpossibleStepsLengthsAndCurves) {
  EXPECT_THAT(Refusal([](PointResult& r) { r.set_steps(101); }), HasSubstr("steps is 101; expected 0..100"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.set_steps(60); }),
              HasSubstr("steps is 60; expected 100 (train.steps), as the point neither stopped early nor "
                        "diverged"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.mutable_final(1)->set_length(20); }),
              HasSubstr("final[1].length is 20; expected each length once per evaluation"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.mutable_final(0)->set_length(0); }),
              HasSubstr("final[0].length is 0; expected a length >= 1"));
  EXPECT_THAT(Refusal([](PointResult& r) { r.mutable_curve(1)->set_step(50); }),
              HasSubstr("curve[1].step is 50; expected 51..100 (increasing, at most steps)"));
  EXPECT_THAT(Refusal([](PointResult& r) {
                r.set_diverged(true);
                r.set_steps(100);
              }),
              HasSubstr("final[0].exact is 0.5; expected 0 (the point diverged"));
}

}  // namespace
}  // namespace mimetic::experiments
