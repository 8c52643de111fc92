// Opens report.html in a real headless browser (Debian's chromium): the page loads, every figure's
// picture is in the DOM as a data URI and is drawn, and nothing is named missing.
//
// chromium is in tools/bazel's package list, so CI has it. Without it the test fails when CI=true
// (.bazelrc passes CI through with --test_env=CI) and is skipped with the reason on other machines.
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/subprocess.h"
#include "mimetic/experiments/render/figure_render.h"
#include "mimetic/experiments/render/plots.h"
#include "mimetic/experiments/render/png_test_util.h"
#include "mimetic/experiments/render/report.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kBrowser[] = "chromium";
constexpr int kWindowWidth = 1280, kWindowHeight = 2400;

std::string TestDir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/report_browser_test_", name);
}

// Fig. "A": one heatmap (viridis); fig. "B": one curve panel with a band (tab10 colour 0).
absl::Status RenderTwoFigures(const std::string& root) {
  Figure heat{"A: a map", 1, {}, 480, 360};
  HeatmapPanel map{"map", "key", "query", "value"};
  map.rows = map.cols = 8;
  for (int i = 0; i < 64; ++i) map.values.push_back(i % 9 == 0 ? 1.0 : 0.0);
  map.mark = 4;
  heat.panels.push_back(map);
  RETURN_IF_ERROR(RenderFigure(root + "/figA/figure.png", heat));

  Figure curves{"B: curves", 1, {}, 480, 360};
  CurvePanel panel{"accuracy", "step", "accuracy"};
  panel.bands.push_back(
      Band{"variant", {0, 1, 2, 3}, {0.1, 0.5, 0.7, 0.8}, {0, 0.3, 0.5, 0.6}, {0.2, 0.7, 0.9, 1}});
  curves.panels.push_back(panel);
  return RenderFigure(root + "/figB/figure.png", curves);
}

std::vector<ReportFigure> Figures(const std::string& root) {
  return {ReportFigure{"figA",
                       "A: a map",
                       "smoke",
                       root + "/figA/figure.png",
                       "",
                       "",
                       1.5,
                       {Claim{"figA.c", "A holds", "0.9", Verdict::kReproduced, "x > 0.5"}},
                       "done"},
          ReportFigure{"figB",
                       "B: curves",
                       "smoke",
                       root + "/figB/figure.png",
                       "",
                       "",
                       2.5,
                       {Claim{"figB.c", "B holds", "0.1", Verdict::kNotReproduced, "x > 0.5"}},
                       "done"}};
}

class ReportBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* ci = std::getenv("CI");
    if (!ProgramOnPath(kBrowser)) {
      if (ci != nullptr && std::string(ci) == "true") {
        FAIL() << "chromium is not installed, and CI=true: tools/bazel installs it (Debian package "
                  "'chromium'); this test must run in CI";
      }
      GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium; tools/bazel installs it)";
    }
    if (!ProgramOnPath("gnuplot")) GTEST_SKIP() << "gnuplot is not installed (Debian: gnuplot-nox)";
    // chromium writes a profile, caches and crash dumps under HOME; in Bazel's sandbox only the test's
    // temporary directory is writable.
    home_ = TestDir("home");
    ASSERT_TRUE(core::MakeDirs(home_).ok());
    ::setenv("HOME", home_.c_str(), 1);
    ::setenv("XDG_CONFIG_HOME", (home_ + "/.config").c_str(), 1);
    ::setenv("XDG_CACHE_HOME", (home_ + "/.cache").c_str(), 1);
  }

  // Runs headless chromium on `html_path` with `mode` ("--dump-dom" or "--screenshot=..."), killed after two
  // minutes if it hangs.
  core::ProgramResult Browse(const std::string& html_path, const std::string& mode) {
    absl::StatusOr<core::ProgramResult> r = core::RunProgram(
        {"timeout", "120", kBrowser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
         absl::StrCat("--user-data-dir=", home_, "/profile"),
         absl::StrCat("--window-size=", kWindowWidth, ",", kWindowHeight), mode,
         absl::StrCat("file://", core::AbsolutePath(html_path))},
        home_);
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return {};
    EXPECT_EQ(r->exit_code, 0) << r->output;
    return *r;
  }

  std::string home_;
};

TEST_F(ReportBrowserTest, LoadsAndShowsEveryFigure) {
  const std::string root = TestDir("runs");
  ASSERT_TRUE(RenderTwoFigures(root).ok()) << RenderTwoFigures(root);
  ASSERT_TRUE(WriteReport(root + "/paper", "Browser check", MachineLine(), Figures(root)).ok());
  const std::string html = root + "/paper/report.html";

  // The DOM as chromium parsed it (stdout; its log lines go to stderr, which RunProgram interleaves, so look
  // inside the <html> element only).
  const core::ProgramResult dom = Browse(html, "--dump-dom");
  const size_t begin = dom.output.find("<html"), end = dom.output.rfind("</html>");
  ASSERT_NE(begin, std::string::npos) << dom.output.substr(0, 4000);
  ASSERT_NE(end, std::string::npos) << dom.output.substr(0, 4000);
  const std::string page = dom.output.substr(begin, end - begin);
  EXPECT_THAT(page, HasSubstr("<title>Browser check</title>"));
  // Every figure's <img>, with its alt text and a data URI of real length (std::regex would recurse
  // once per base64 character and overflow the stack, so this scans by hand).
  std::vector<std::string> alts;
  const std::string img_open = "<img class=\"figure\" alt=\"", data_uri = "\" src=\"data:image/png;base64,";
  for (size_t at = page.find(img_open); at != std::string::npos; at = page.find(img_open, at + 1)) {
    const size_t alt_end = page.find('"', at + img_open.size());
    ASSERT_NE(alt_end, std::string::npos);
    alts.push_back(page.substr(at + img_open.size(), alt_end - at - img_open.size()));
    EXPECT_EQ(page.compare(alt_end, data_uri.size(), data_uri), 0) << alts.back();
    const size_t uri_end = page.find('"', alt_end + data_uri.size());
    EXPECT_GT(uri_end - (alt_end + data_uri.size()), 1000u)
        << alts.back() << ": a data URI too short for a PNG";
  }
  EXPECT_THAT(alts, ::testing::ElementsAre("A: a map", "B: curves"));
  // The stylesheet defines a "missing" class; the body must not use it or say the word.
  const std::string body = page.substr(page.find("<body"));
  EXPECT_THAT(body, Not(HasSubstr("missing")));
  EXPECT_THAT(page, HasSubstr("class=\"verdict v-reproduced\">reproduced<"));
  EXPECT_THAT(page, HasSubstr("class=\"verdict v-not-reproduced\">not reproduced<"));

  // The page as drawn: both pictures and the coloured verdict cells are on screen.
  const std::string shot = TestDir("shot") + "/report.png";
  ASSERT_TRUE(core::MakeDirs(core::DirName(shot)).ok());
  Browse(html, "--screenshot=" + shot);
  ASSERT_TRUE(core::FileExists(shot)) << "chromium wrote no screenshot";
  const DecodedPng png = DecodePng(shot);
  EXPECT_EQ(png.width, static_cast<uint32_t>(kWindowWidth));
  EXPECT_EQ(png.height, static_cast<uint32_t>(kWindowHeight));
  EXPECT_GE(CountDistinctColors(png), 50u);
  EXPECT_GT(CountNear(png, ColormapColor(Colormap::kViridis, 0), 4), 2000u) << "figure A's map is not drawn";
  const Rgb blue = ParseHexColor(LineColor(0));
  EXPECT_GT(CountNear(png, blue, 4), 100u) << "figure B's curve is not drawn";
  EXPECT_GT(CountNear(png, {0xd4, 0xed, 0xda}, 2), 500u) << "no green 'reproduced' cell";
  EXPECT_GT(CountNear(png, {0xf8, 0xd7, 0xda}, 2), 500u) << "no red 'not reproduced' cell";
}

TEST_F(ReportBrowserTest, MissingPictureIsShownAsMissing) {
  const std::string root = TestDir("runs_missing");
  ASSERT_TRUE(RenderTwoFigures(root).ok());
  std::vector<ReportFigure> figures = Figures(root);
  figures[1].png_path = root + "/figB/gone.png";
  ASSERT_TRUE(WriteReport(root + "/paper", "Browser check", "m", figures).ok());
  const core::ProgramResult dom = Browse(root + "/paper/report.html", "--dump-dom");
  EXPECT_THAT(dom.output, HasSubstr(absl::StrCat("Picture missing: <code>", root, "/figB/gone.png</code>")));
  EXPECT_THAT(dom.output, HasSubstr("<img class=\"figure\" alt=\"A: a map\" src=\"data:image/png;base64,"));
  EXPECT_THAT(dom.output, Not(HasSubstr("alt=\"B: curves\"")));
}

}  // namespace
}  // namespace mimetic::experiments
