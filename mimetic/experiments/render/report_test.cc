#include "mimetic/experiments/render/report.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::experiments {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::Not;

std::string TestDir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/report_test_", name);
}

absl::Status Write(const std::string& path, const std::string& text) {
  absl::Status made = core::MakeDirs(core::DirName(path));
  return made.ok() ? core::WriteTextFile(path, text) : made;
}

// A tiny but valid PNG header is all the report checks; these bytes stand in for a drawn figure.
const std::string kFakePng = std::string("\x89PNG\r\n\x1a\n", 8) + "rest-of-png";

struct Runs {
  std::string root;
  std::vector<ReportFigure> figures;
};

// runs/fig1 complete; runs/fig2 ran but its PNG is gone; fig5 never ran.
Runs MakeRuns(const std::string& name) {
  Runs runs;
  runs.root = TestDir(name);
  const std::string fig1 = runs.root + "/fig1", fig2 = runs.root + "/fig2";
  EXPECT_TRUE(Write(fig1 + "/figure.png", kFakePng).ok());
  EXPECT_TRUE(Write(fig1 + "/claims.md", "# Claims").ok());
  EXPECT_TRUE(Write(fig1 + "/summary.csv", "a,b\n").ok());
  EXPECT_TRUE(Write(fig2 + "/claims.md", "# Claims").ok());
  Claim good{"fig1.copy", "Fig. 1: mimetic copies <strings> at 2x", "0.91 vs 0.12", Verdict::kReproduced,
             "mimetic > default + 0.2"};
  Claim bad{"fig1.maps",   "Fig. 1: maps look like attention",
            "corr 0.1",    Verdict::kNotReproduced,
            "corr >= 0.5", ClaimKind::kStandIn};
  Claim partly{"fig2.hybrid", "Fig. 2: the hybrid | learns faster", "0.5 vs 0.4", Verdict::kPartly, "rule"};
  runs.figures = {
      ReportFigure{"fig1",
                   "Fig. 1: copy",
                   "cpu",
                   fig1 + "/figure.png",
                   fig1 + "/claims.md",
                   fig1 + "/summary.csv",
                   812.4,
                   {good, bad},
                   "done"},
      ReportFigure{"fig2",
                   "Fig. 2: hybrid",
                   "cpu",
                   fig2 + "/figure.png",
                   fig2 + "/claims.md",
                   fig2 + "/summary.csv",
                   42.25,
                   {partly},
                   "done"},
      ReportFigure{
          "fig5", "Fig. 5: linear attention", "cpu", "", "", "", 0, {}, "not run: stopped by the user"}};
  return runs;
}

TEST(ReportTest, MarkdownHasAllClaimsThenFigures) {
  const Runs runs = MakeRuns("md");
  const std::string dir = runs.root + "/paper";
  ASSERT_TRUE(WriteReport(dir, "Reproduction", "Test CPU, 2 cores, 2026-11-24 01:00 UTC", runs.figures).ok());
  absl::StatusOr<std::string> md = core::ReadTextFile(dir + "/report.md");
  ASSERT_TRUE(md.ok());
  EXPECT_THAT(*md, HasSubstr("# Reproduction\n\nMachine: Test CPU, 2 cores, 2026-11-24 01:00 UTC\n"));
  // The paper's claims are counted apart from the stand-ins, overall and per figure.
  EXPECT_THAT(*md, HasSubstr("## All claims\n\npaper's claims: 2 (1 reproduced, 1 partly); stand-ins: 1 (1 "
                             "not reproduced)\n"));
  EXPECT_THAT(*md, HasSubstr("| fig1 | `fig1.copy` Fig. 1: mimetic copies \\<strings> at 2x | 0.91 vs 0.12 | "
                             "**reproduced** |\n| fig1 | `fig1.maps` (stand-in) Fig. 1"));
  EXPECT_THAT(*md, HasSubstr("| fig2 | `fig2.hybrid` Fig. 2: the hybrid \\| learns faster |"));
  // The overview names every figure, the one that did not run included.
  EXPECT_THAT(
      *md, HasSubstr("| fig1 | done | `cpu` | 13 min 32 s | paper's claims: 1 (1 reproduced); stand-ins: 1 "
                     "(1 not reproduced) |"));
  EXPECT_THAT(*md, HasSubstr("| fig2 | done | `cpu` | 42.2 s | paper's claims: 1 (1 partly) |"));
  EXPECT_THAT(*md,
              HasSubstr("| fig5 | missing: not run: stopped by the user | `cpu` | - | paper's claims: 0 |"));
  EXPECT_THAT(*md, HasSubstr("| fig1.maps (stand-in) | Fig. 1: maps look like attention |"));
  // Relative links from runs/paper to runs/fig1.
  EXPECT_THAT(*md, HasSubstr("![Fig. 1: copy](../fig1/figure.png)"));
  EXPECT_THAT(*md, HasSubstr("- Claims: [claims.md](../fig1/claims.md)"));
  // The missing picture and summary are named, not dropped.
  EXPECT_THAT(
      *md, HasSubstr(absl::StrCat("**Picture missing**: `", runs.root, "/fig2/figure.png` (no such file)")));
  EXPECT_THAT(
      *md, HasSubstr(absl::StrCat("- Summary: missing (`", runs.root, "/fig2/summary.csv`: no such file)")));
  EXPECT_THAT(
      *md, HasSubstr("## fig5: Fig. 5: linear attention\n\n- Status: missing: not run: stopped by the user"));
  EXPECT_THAT(*md, HasSubstr("**Picture missing** (no picture was given)"));
  EXPECT_THAT(*md, ::testing::Not(HasSubstr("- Note:")));
}

// A figure whose checkpoint is a stand-in teacher says so under its status, in both documents.
TEST(ReportTest, AFiguresNoteIsPrinted) {
  Runs runs = MakeRuns("note");
  runs.figures[1].note = "The checkpoint is a stand-in teacher that this target trained itself first";
  runs.figures[1].room = {"hybrid: Mamba 2 key min(N 16, D 32) = 16 vs lengths 10, 20 (no room)"};
  const std::string dir = runs.root + "/paper";
  ASSERT_TRUE(WriteReport(dir, "Reproduction", "Test CPU", runs.figures).ok());
  EXPECT_THAT(core::ReadTextFile(dir + "/report.md").value(),
              HasSubstr("about 1/N of it): 42.2 s\n- Note: The checkpoint is a "
                        "stand-in teacher"));
  EXPECT_THAT(core::ReadTextFile(dir + "/report.html").value(),
              HasSubstr("<li>Note: The checkpoint is a stand-in teacher that "
                        "this target trained itself first</li>"));
  // The room of the figure's models, under the note, in both documents.
  EXPECT_THAT(
      core::ReadTextFile(dir + "/report.md").value(),
      HasSubstr("training row vs the longest eval example):\n  - hybrid: Mamba 2 key min(N 16, D 32) = "
                "16 vs lengths 10, 20 (no room)\n"));
  EXPECT_THAT(core::ReadTextFile(dir + "/report.html").value(),
              HasSubstr("<li>hybrid: Mamba 2 key min(N 16, D 32) = 16 vs lengths 10, 20 (no room)</li>"));
}

TEST(ReportTest, HtmlIsSelfContainedWithEmbeddedPictures) {
  const Runs runs = MakeRuns("html");
  const std::string dir = runs.root + "/paper";
  ASSERT_TRUE(WriteReport(dir, "Reproduction <1>", "Test CPU", runs.figures).ok());
  absl::StatusOr<std::string> html = core::ReadTextFile(dir + "/report.html");
  ASSERT_TRUE(html.ok());
  EXPECT_THAT(*html, HasSubstr("<title>Reproduction &lt;1&gt;</title>"));
  EXPECT_THAT(*html,
              HasSubstr(absl::StrCat("src=\"data:image/png;base64,", absl::Base64Escape(kFakePng), "\"")));
  EXPECT_THAT(*html, HasSubstr("Fig. 1: mimetic copies &lt;strings&gt; at 2x"));
  EXPECT_THAT(*html, HasSubstr("<td class=\"verdict v-reproduced\">reproduced</td>"));
  EXPECT_THAT(*html, HasSubstr("<td class=\"verdict v-not-reproduced\">not reproduced</td>"));
  EXPECT_THAT(*html, HasSubstr("<td class=\"verdict v-partly\">partly</td>"));
  EXPECT_THAT(*html, HasSubstr("<p>paper&#39;s claims: 2 (1 reproduced, 1 partly); stand-ins: 1 (1 not "
                               "reproduced)</p>"));
  EXPECT_THAT(*html, HasSubstr("<code>fig1.maps</code> (stand-in) Fig. 1"));
  EXPECT_THAT(*html, HasSubstr(absl::StrCat("<p class=\"missing\">Picture missing: <code>", runs.root,
                                            "/fig2/figure.png</code> (no such file)</p>")));
  EXPECT_THAT(*html, HasSubstr("<td class=\"missing\">missing: not run: stopped by the user</td>"));
  EXPECT_THAT(*html, HasSubstr("<p class=\"missing\">Picture missing (no picture was given)</p>"));
  // Nothing is fetched from anywhere: no external stylesheet, script, font or image.
  EXPECT_THAT(*html, Not(HasSubstr("http")));
  EXPECT_THAT(*html, Not(HasSubstr("<script")));
  EXPECT_THAT(*html, Not(HasSubstr("<link")));
  EXPECT_THAT(*html, Not(HasSubstr("src=\"../")));
}

TEST(ReportTest, NotAPngIsNamed) {
  Runs runs = MakeRuns("notpng");
  ASSERT_TRUE(Write(runs.figures[0].png_path, "GIF89a").ok());
  const std::string html = ReportHtml("t", "m", runs.figures);
  EXPECT_THAT(html, HasSubstr("/fig1/figure.png</code> (not a PNG file)"));
  EXPECT_THAT(html, Not(HasSubstr("data:image/png")));
}

TEST(ReportTest, BadFigureIds) {
  Runs runs = MakeRuns("ids");
  runs.figures[2].id = "fig1";
  absl::Status status = WriteReport(runs.root + "/paper", "t", "m", runs.figures);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("two figures have the id \"fig1\""));
  runs.figures[2].id = "";
  EXPECT_THAT(WriteReport(runs.root + "/paper", "t", "m", runs.figures).message(),
              HasSubstr("figure 2 (\"Fig. 5: linear attention\") has no id"));
  EXPECT_FALSE(core::FileExists(runs.root + "/paper/report.md"));
}

TEST(MachineTest, CpuModelFromCpuinfo) {
  const std::string path = TestDir("cpu") + "/cpuinfo";
  ASSERT_TRUE(Write(path,
                    "processor\t: 0\nvendor_id\t: AuthenticAMD\n"
                    "model name\t: AMD EPYC   7B13 64-Core Processor  \nflags\t\t: fpu\n"
                    "processor\t: 1\nmodel name\t: other\n")
                  .ok());
  absl::StatusOr<std::string> model = CpuModel(path);
  ASSERT_TRUE(model.ok()) << model.status();
  EXPECT_EQ(*model, "AMD EPYC 7B13 64-Core Processor");

  ASSERT_TRUE(Write(path, "processor\t: 0\nCPU part\t: 0xd0c\n").ok());
  EXPECT_THAT(CpuModel(path).status().message(), HasSubstr("has no \"model name\" line"));
  EXPECT_EQ(CpuModel(TestDir("cpu") + "/absent").status().code(), absl::StatusCode::kNotFound);

  EXPECT_THAT(MachineLine(), MatchesRegex(".+, [0-9]+ cores?, 20[0-9][0-9]-[0-9][0-9]-[0-9][0-9] "
                                          "[0-9][0-9]:[0-9][0-9] UTC"));
}

}  // namespace
}  // namespace mimetic::experiments
