#include "mimetic/experiments/render/gnuplot.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"
#include "mimetic/experiments/render/png_test_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;

TEST(GnuplotTest, QuotesTextAndNumbersAsGnuplotReadsThem) {
  EXPECT_EQ(GpQuote("it's"), "'it''s'");
  EXPECT_EQ(GpQuote("two\nlines"), "'two lines'");
  EXPECT_EQ(GpQuote("$x \\ \"y\""),
            "'$x \\ \"y\"'");  // nothing else is special in single quotes
  EXPECT_EQ(GpNumber(0.1), "0.10000000000000001");
  EXPECT_EQ(GpNumber(std::nan("")), "NaN");
}

TEST(GnuplotTest, PreambleSetsTheTerminalSizeAndOutput) {
  const std::string p = PngPreamble("a'b.png", 640, 480, /*truecolor=*/true);
  EXPECT_THAT(p, HasSubstr("outfile = 'a''b.png'"));
  EXPECT_THAT(p, HasSubstr("set terminal pngcairo size 640,480 noenhanced"));
  EXPECT_THAT(p, HasSubstr("set terminal png truecolor size 640,480 noenhanced"));
  EXPECT_THAT(p, HasSubstr("set output outfile"));
  EXPECT_FALSE(absl::StrContains(PngPreamble("x.png", 10, 10, false), "truecolor"));
}

TEST(GnuplotTest, DrawsAPngAndKeepsTheOldOneWhenTheScriptFails) {
  if (!ProgramOnPath("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox)";
  const std::string dir = absl::StrCat(::testing::TempDir(), "/gnuplot_test");
  ASSERT_TRUE(core::MakeDirs(dir).ok());
  const std::string png = dir + "/p.png";
  ASSERT_TRUE(core::WriteTextFile(dir + "/ok.gp", PngPreamble("p.png", 64, 48, false) + "plot x\n").ok());
  ASSERT_TRUE(RunGnuplotToPng("gnuplot", "ok.gp", dir, png, "test").ok());
  EXPECT_EQ(DecodePng(png).width, 64u);
  ASSERT_TRUE(
      core::WriteTextFile(dir + "/bad.gp", PngPreamble("p.png", 32, 32, false) + "plot nosuch(x)\n").ok());
  const absl::Status bad = RunGnuplotToPng("gnuplot", "bad.gp", dir, png, "test");
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.message()), HasSubstr("test: 'gnuplot bad.gp'"));
  EXPECT_EQ(DecodePng(png).width, 64u);  // the earlier picture is intact
}

}  // namespace
}  // namespace mimetic::experiments
