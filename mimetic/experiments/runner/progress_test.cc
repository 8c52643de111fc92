#include "mimetic/experiments/runner/progress.h"

#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ProgressTest, DurationsRoundTrip) {
  for (double s : {0.0, 9.0, 59.0, 60.0, 130.0, 3725.0}) EXPECT_EQ(ParseDuration(FormatDuration(s)), s) << s;
  EXPECT_EQ(FormatDuration(130), "2m10s");
  EXPECT_EQ(FormatDuration(-1), "?");
  EXPECT_FALSE(ParseDuration("?").has_value());
  EXPECT_FALSE(ParseDuration("2m").has_value());
}

TEST(ProgressTest, ParsesThePointsProgressLine) {
  std::optional<PointProgress> p = ParseProgressLine(
      "[default/seed1] step 400/1200 loss 0.8234 acc@20 "
      "0.450 5300 tok/s, 2m10s left");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->step, 400);
  EXPECT_EQ(p->steps, 1200);
  EXPECT_EQ(p->loss, "0.8234");
  EXPECT_EQ(p->accuracy, "acc@20 0.450");
  EXPECT_EQ(p->seconds_left, 130);
  std::optional<PointProgress> before_eval =
      ParseProgressLine("[m/seed2] step 5/10 loss 3.1000 900 tok/s, 4s left");
  ASSERT_TRUE(before_eval.has_value());
  EXPECT_EQ(before_eval->accuracy, "");
  EXPECT_FALSE(ParseProgressLine("started points/default/seed1").has_value());
  EXPECT_FALSE(ParseProgressLine("[x] early stop: every eval length reached 1").has_value());
}

// Plain output (not a terminal): one line at once, then none until 10 s have passed; it names every running
// point's step/steps, loss, accuracy and time left, and the sweep's done/total and time left.
TEST(ProgressTest, PlainLinesEveryTenSecondsWithEveryRunningPoint) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/progress_plain");
  ASSERT_TRUE(core::MakeDirs(dir).ok());
  ASSERT_TRUE(core::WriteTextFile(dir + "/a.log",
                                  "resume: none\n[default/seed1] step 100/400 "
                                  "loss 1.0000 900 tok/s, 30s left\n"
                                  "[default/seed1] step 200/400 loss 0.5000 "
                                  "acc@20 0.250 900 tok/s, 20s left\n")
                  .ok());
  std::ostringstream out;
  SweepProgress progress(out, /*terminal=*/false, /*total=*/4, /*done=*/1,
                         /*parallel=*/2);
  progress.Started(0, "default/seed1", dir + "/a.log");
  progress.Started(1, "mimetic/seed1", dir + "/b.log");  // no line yet
  progress.Tick(100.0);
  progress.Tick(105.0);  // too soon
  EXPECT_EQ(out.str(),
            "progress [1/4 done, 2 running, ~1m00s left] "
            "default/seed1 200/400 loss 0.5000 acc@20 0.250 20s "
            "left | mimetic/seed1 starting\n");
  // One point waits: it starts when a running one ends and takes as long as one takes in all (40 s).
  progress.Ended(0);
  progress.Line("[1/3] finished default/seed1");
  progress.Tick(110.0);
  EXPECT_THAT(out.str(), HasSubstr("finished default/seed1\nprogress [2/4 done, 1 running, ~? left] "));
  EXPECT_THAT(out.str(), Not(HasSubstr("\r")));
}

TEST(ProgressTest, ATerminalGetsOneLineRewrittenInPlace) {
  std::ostringstream out;
  {
    SweepProgress progress(out, /*terminal=*/true, 2, 0, 1);
    progress.Started(0, "p", "/no/such.log");
    progress.Tick(0);
    progress.Tick(1.5);
    progress.Line("finished p");
  }
  EXPECT_EQ(out.str(),
            "\r\033[K[0/2 done, 1 running, ~? left] p starting\r\033[K[0/2 "
            "done, 1 running, ~? left] p starting"
            "\r\033[Kfinished p\n");
}

}  // namespace
}  // namespace mimetic::experiments
