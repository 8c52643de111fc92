#include "mimetic/experiments/render/gnuplot.h"

#include <sys/stat.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"
#include "mimetic/experiments/render/plots.h"
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

std::string TestDir(const std::string& name) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "/gnuplot_test_", name);
  EXPECT_TRUE(core::MakeDirs(dir).ok());
  return dir;
}

// The bytes of a whole PNG, drawn by libpng.
std::string WholePng(const std::string& dir) {
  const std::string path = dir + "/whole.png";
  EXPECT_TRUE(WriteHeatmapPng(path, {0, 0.5, 0.5, 1}, 2, 2, 4).ok());
  return core::ReadTextFile(path).value();
}

TEST(GnuplotTest, APngIsCompleteOnlyWithItsIendChunk) {
  const std::string dir = TestDir("complete");
  const std::string whole = WholePng(dir);
  ASSERT_GT(whole.size(), 20u);
  const std::string path = dir + "/p.png";
  ASSERT_TRUE(core::WriteTextFile(path, whole).ok());
  EXPECT_TRUE(CheckPngComplete(path).ok()) << CheckPngComplete(path);
  for (size_t keep : {size_t{0}, size_t{8}, whole.size() / 2, whole.size() - 1}) {
    ASSERT_TRUE(core::WriteTextFile(path, whole.substr(0, keep)).ok());
    const absl::Status s = CheckPngComplete(path);
    EXPECT_TRUE(absl::IsDataLoss(s)) << keep << " bytes: " << s;
    EXPECT_THAT(std::string(s.message()), HasSubstr(path));
  }
  ASSERT_TRUE(core::WriteTextFile(path, "not a png, but long enough to have twelve bytes").ok());
  EXPECT_TRUE(absl::IsDataLoss(CheckPngComplete(path)));
  EXPECT_TRUE(absl::IsNotFound(CheckPngComplete(dir + "/missing.png")));
}

TEST(GnuplotTest, ACutShortImageKeepsTheOldPictureAndIsAnError) {
  // gnuplot on a full disk writes part of the image and still exits 0; this stand-in does the same (its
  // second argument is `outfile='<temporary>'`, which is also valid sh).
  const std::string dir = TestDir("short");
  const std::string whole = WholePng(dir);
  const std::string png = dir + "/p.png";
  ASSERT_TRUE(core::WriteTextFile(png, whole).ok());
  const std::string fake = dir + "/fake_gnuplot";
  ASSERT_TRUE(
      core::WriteTextFile(fake, "#!/bin/sh\neval \"$2\"\nhead -c 40 whole.png > \"$outfile\"\nexit 0\n")
          .ok());
  ASSERT_EQ(::chmod(fake.c_str(), 0755), 0);
  ASSERT_TRUE(core::WriteTextFile(dir + "/p.gp", "plot x\n").ok());
  const absl::Status s = RunGnuplotToPng(fake, "p.gp", dir, png, "test");
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr("test: "));
  EXPECT_THAT(std::string(s.message()), HasSubstr("not a whole PNG"));
  EXPECT_EQ(core::ReadTextFile(png).value(), whole);  // the earlier picture is intact
  EXPECT_FALSE(core::FileExists(png + ".tmp"));
}

}  // namespace
}  // namespace mimetic::experiments
