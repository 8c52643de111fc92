#include "mimetic/experiments/render/report.h"

#include <sched.h>

#include <cmath>
#include <set>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"

namespace mimetic::experiments {
namespace {

constexpr absl::string_view kPngSignature("\x89PNG\r\n\x1a\n", 8);

// The figure's picture: its bytes when it is a readable PNG, otherwise why not.
struct Picture {
  bool ok = false;
  std::string bytes;
  std::string problem;  // "no such file", "not a PNG file", ...
};

Picture LoadPicture(const std::string& png_path) {
  Picture picture;
  if (png_path.empty()) {
    picture.problem = "no picture was given";
    return picture;
  }
  absl::StatusOr<std::string> bytes = core::ReadTextFile(png_path);
  if (!bytes.ok()) {
    picture.problem = core::FileExists(png_path) ? std::string(bytes.status().message()) : "no such file";
  } else if (!absl::StartsWith(*bytes, kPngSignature)) {
    picture.problem = "not a PNG file";
  } else {
    picture.ok = true;
    picture.bytes = *std::move(bytes);
  }
  return picture;
}

bool Done(const ReportFigure& figure) { return figure.status == "done"; }

std::string WallTime(const ReportFigure& figure) {
  if (!Done(figure) || !std::isfinite(figure.wall_seconds)) return "-";
  const double s = figure.wall_seconds;
  if (s < 60) return absl::StrFormat("%.1f s", s);
  const int64_t total = std::llround(s);
  if (total < 3600) return absl::StrFormat("%d min %02d s", total / 60, total % 60);
  return absl::StrFormat("%d h %02d min", total / 3600, (total % 3600) / 60);
}

std::string VerdictClass(Verdict verdict) {
  return absl::StrCat("v-", absl::StrReplaceAll(VerdictName(verdict), {{" ", "-"}}));
}

std::string StatusText(const ReportFigure& figure) {
  return Done(figure) ? "done" : absl::StrCat("missing: ", figure.status);
}

// --- markdown -----------------------------------------------------------------------------------------

std::string MarkdownFigure(const std::string& dir, const ReportFigure& figure) {
  std::string md = absl::StrCat("## ", MarkdownCell(figure.id), ": ", MarkdownCell(figure.title), "\n\n",
                                "- Status: ", MarkdownCell(StatusText(figure)), "\n- Preset: `",
                                figure.preset, "`\n- Training time (the runs' own clocks, summed; with ",
                                "--jobs=N the wall clock is about 1/N of it): ", WallTime(figure), "\n");
  if (!figure.note.empty()) absl::StrAppend(&md, "- Note: ", MarkdownCell(figure.note), "\n");
  md += RoomMarkdown(figure.room);
  for (const auto& [label, path] :
       {std::pair<const char*, const std::string&>{"Claims", figure.claims_md_path},
        {"Summary", figure.summary_csv_path}}) {
    if (path.empty()) continue;
    absl::StrAppend(&md, "- ", label, ": ",
                    core::FileExists(path)
                        ? absl::StrCat("[", core::BaseName(path), "](", core::RelativePath(dir, path), ")")
                        : absl::StrCat("missing (`", path, "`: no such file)"),
                    "\n");
  }
  const Picture picture = LoadPicture(figure.png_path);
  if (picture.ok) {
    absl::StrAppend(&md, "\n![", MarkdownCell(figure.title), "](", core::RelativePath(dir, figure.png_path),
                    ")\n");
  } else {
    absl::StrAppend(&md, "\n**Picture missing**",
                    figure.png_path.empty() ? "" : absl::StrCat(": `", figure.png_path, "`"), " (",
                    picture.problem, ")\n");
  }
  if (figure.claims.empty()) {
    md += "\nNo claims were evaluated for this figure.\n\n";
    return md;
  }
  absl::StrAppend(&md, "- Verdicts: ", MarkdownCell(TalliesLine(figure.claims)), "\n");
  md += "\n| claim | paper | measured | verdict |\n|---|---|---|---|\n";
  for (const Claim& c : figure.claims) {
    absl::StrAppend(&md, "| ", MarkdownCell(c.id + KindLabel(c.kind)), " | ", MarkdownCell(c.paper), " | ",
                    MarkdownCell(c.measured), " | **", VerdictName(c.verdict), "** |\n");
  }
  md += "\nRules:\n\n";
  for (const Claim& c : figure.claims) {
    absl::StrAppend(&md, "- `", MarkdownCell(c.id),
                    "`: ", MarkdownCell(c.how.empty() ? "(no rule given)" : c.how), "\n");
  }
  md += "\n";
  return md;
}

// --- HTML ---------------------------------------------------------------------------------------------

constexpr char kCss[] = R"css(
body { font-family: -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; max-width: 1120px;
       margin: 2em auto; padding: 0 1em; color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.2em; }
.machine { color: #555; margin-top: 0; }
table { border-collapse: collapse; margin: 1em 0; width: 100%; }
th, td { border: 1px solid #ccc; padding: 0.35em 0.6em; text-align: left; vertical-align: top; }
th { background: #f2f2f2; }
td.verdict { font-weight: bold; white-space: nowrap; }
.v-reproduced { background: #d4edda; }
.v-partly { background: #fff3cd; }
.v-not-reproduced { background: #f8d7da; }
.v-not-tested { background: #e2e3e5; }
section.figure { border-top: 2px solid #ddd; margin-top: 2em; }
img.figure { max-width: 100%; border: 1px solid #ddd; }
.missing { background: #f8d7da; padding: 0.5em; font-weight: bold; }
code { background: #f4f4f4; padding: 0 0.2em; }
ul.rules { font-size: 0.92em; color: #333; }
)css";

std::string HtmlClaimRows(const std::vector<Claim>& claims, const std::string& figure_cell) {
  std::string html;
  for (const Claim& c : claims) {
    absl::StrAppend(&html, "<tr>", figure_cell, "<td><code>", HtmlEscape(c.id), "</code>",
                    HtmlEscape(KindLabel(c.kind)), " ", HtmlEscape(c.paper), "</td><td>",
                    HtmlEscape(c.measured), "</td><td class=\"verdict ", VerdictClass(c.verdict), "\">",
                    HtmlEscape(VerdictName(c.verdict)), "</td></tr>\n");
  }
  return html;
}

std::string HtmlFigure(const ReportFigure& figure) {
  std::string html = absl::StrCat("<section class=\"figure\" id=\"", HtmlEscape(figure.id), "\">\n<h2>",
                                  HtmlEscape(figure.id), ": ", HtmlEscape(figure.title), "</h2>\n<ul>\n");
  absl::StrAppend(
      &html, "<li>Status: ",
      Done(figure) ? std::string("done")
                   : absl::StrCat("<span class=\"missing\">", HtmlEscape(StatusText(figure)), "</span>"),
      "</li>\n<li>Preset: <code>", HtmlEscape(figure.preset),
      "</code></li>\n<li>Training time (the runs' own clocks, summed): ", WallTime(figure), "</li>\n");
  if (!figure.note.empty()) absl::StrAppend(&html, "<li>Note: ", HtmlEscape(figure.note), "</li>\n");
  if (!figure.room.empty()) {
    html += "<li>Room (key dimension vs each eval length; training row vs the longest eval example):<ul>\n";
    for (const std::string& line : figure.room) absl::StrAppend(&html, "<li>", HtmlEscape(line), "</li>\n");
    html += "</ul></li>\n";
  }
  for (const auto& [label, path] :
       {std::pair<const char*, const std::string&>{"Claims", figure.claims_md_path},
        {"Summary", figure.summary_csv_path}}) {
    if (path.empty()) continue;
    absl::StrAppend(&html, "<li>", label, ": <code>", HtmlEscape(path), "</code>",
                    core::FileExists(path) ? "" : " <span class=\"missing\">missing: no such file</span>",
                    "</li>\n");
  }
  html += "</ul>\n";
  const Picture picture = LoadPicture(figure.png_path);
  if (picture.ok) {
    absl::StrAppend(&html, "<img class=\"figure\" alt=\"", HtmlEscape(figure.title),
                    "\" src=\"data:image/png;base64,", absl::Base64Escape(picture.bytes), "\">\n");
  } else {
    absl::StrAppend(
        &html, "<p class=\"missing\">Picture missing",
        figure.png_path.empty() ? "" : absl::StrCat(": <code>", HtmlEscape(figure.png_path), "</code>"), " (",
        HtmlEscape(picture.problem), ")</p>\n");
  }
  if (figure.claims.empty()) {
    html += "<p>No claims were evaluated for this figure.</p>\n</section>\n";
    return html;
  }
  absl::StrAppend(&html, "<p>Verdicts: ", HtmlEscape(TalliesLine(figure.claims)), "</p>\n",
                  "<table>\n<tr><th>claim</th><th>measured</th><th>verdict</th></tr>\n",
                  HtmlClaimRows(figure.claims, ""), "</table>\n<ul class=\"rules\">\n");
  for (const Claim& c : figure.claims) {
    absl::StrAppend(&html, "<li><code>", HtmlEscape(c.id),
                    "</code>: ", HtmlEscape(c.how.empty() ? "(no rule given)" : c.how), "</li>\n");
  }
  html += "</ul>\n</section>\n";
  return html;
}

std::vector<Claim> AllClaims(const std::vector<ReportFigure>& figures) {
  std::vector<Claim> all;
  for (const ReportFigure& f : figures) all.insert(all.end(), f.claims.begin(), f.claims.end());
  return all;
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  return absl::StrReplaceAll(
      text, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}, {"'", "&#39;"}});
}

std::string ReportMarkdown(const std::string& dir, const std::string& title, const std::string& machine,
                           const std::vector<ReportFigure>& figures) {
  std::string md = absl::StrCat("# ", MarkdownCell(title), "\n\nMachine: ", MarkdownCell(machine), "\n\n",
                                "## All claims\n\n", TalliesLine(AllClaims(figures)), "\n\n",
                                "| figure | claim | measured | verdict |\n|---|---|---|---|\n");
  for (const ReportFigure& f : figures) {
    for (const Claim& c : f.claims) {
      absl::StrAppend(&md, "| ", MarkdownCell(f.id), " | `", MarkdownCell(c.id), "`",
                      MarkdownCell(KindLabel(c.kind)), " ", MarkdownCell(c.paper), " | ",
                      MarkdownCell(c.measured), " | **", VerdictName(c.verdict), "** |\n");
    }
  }
  md +=
      "\n## Figures\n\n| figure | status | preset | training time (summed over runs) | verdicts |\n"
      "|---|---|---|---|---|\n";
  for (const ReportFigure& f : figures) {
    absl::StrAppend(&md, "| ", MarkdownCell(f.id), " | ", MarkdownCell(StatusText(f)), " | `", f.preset,
                    "` | ", WallTime(f), " | ", TalliesLine(f.claims), " |\n");
  }
  md += "\n";
  for (const ReportFigure& f : figures) md += MarkdownFigure(dir, f);
  return md;
}

std::string ReportHtml(const std::string& title, const std::string& machine,
                       const std::vector<ReportFigure>& figures) {
  std::string html = absl::StrCat(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", HtmlEscape(title),
      "</title>\n<style>", kCss, "</style>\n</head>\n<body>\n<h1>", HtmlEscape(title),
      "</h1>\n<p class=\"machine\">Machine: ", HtmlEscape(machine), "</p>\n<h2>All claims</h2>\n<p>",
      HtmlEscape(TalliesLine(AllClaims(figures))),
      "</p>\n<table "
      "id=\"claims\">\n<tr><th>figure</th><th>claim</th><th>measured</th><th>verdict</th></tr>\n");
  for (const ReportFigure& f : figures) {
    html += HtmlClaimRows(
        f.claims, absl::StrCat("<td><a href=\"#", HtmlEscape(f.id), "\">", HtmlEscape(f.id), "</a></td>"));
  }
  html +=
      "</table>\n<h2>Figures</h2>\n<table id=\"figures\">\n<tr><th>figure</th><th>status</th>"
      "<th>preset</th><th>training time (summed over runs)</th><th>verdicts</th></tr>\n";
  for (const ReportFigure& f : figures) {
    absl::StrAppend(&html, "<tr><td><a href=\"#", HtmlEscape(f.id), "\">", HtmlEscape(f.id), "</a></td><td",
                    Done(f) ? "" : " class=\"missing\"", ">", HtmlEscape(StatusText(f)), "</td><td><code>",
                    HtmlEscape(f.preset), "</code></td><td>", WallTime(f), "</td><td>",
                    HtmlEscape(TalliesLine(f.claims)), "</td></tr>\n");
  }
  html += "</table>\n";
  for (const ReportFigure& f : figures) html += HtmlFigure(f);
  html += "</body>\n</html>\n";
  return html;
}

absl::Status WriteReport(const std::string& dir, const std::string& title, const std::string& machine,
                         const std::vector<ReportFigure>& figures) {
  std::set<std::string> ids;
  for (size_t i = 0; i < figures.size(); ++i) {
    if (figures[i].id.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("report '", dir, "': figure ", i, " (\"", figures[i].title, "\") has no id"));
    }
    if (!ids.insert(figures[i].id).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("report '", dir, "': two figures have the id \"", figures[i].id, "\""));
    }
  }
  RETURN_IF_ERROR(core::MakeDirs(dir));
  RETURN_IF_ERROR(core::WriteTextFile(dir + "/report.md", ReportMarkdown(dir, title, machine, figures)));
  return core::WriteTextFile(dir + "/report.html", ReportHtml(title, machine, figures));
}

absl::StatusOr<std::string> CpuModel(const std::string& cpuinfo_path) {
  absl::StatusOr<std::string> text = core::ReadTextFile(cpuinfo_path);
  if (!text.ok()) {
    return absl::NotFoundError(absl::StrCat("cannot read the CPU model: ", text.status().message()));
  }
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    if (!absl::ConsumePrefix(&line, "model name")) continue;
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    // Collapse the runs of spaces some CPUs pad their names with.
    std::vector<absl::string_view> words =
        absl::StrSplit(line.substr(colon + 1), ' ', absl::SkipWhitespace());
    if (!words.empty()) return absl::StrJoin(words, " ");
  }
  return absl::NotFoundError(absl::StrCat("'", cpuinfo_path, "' has no \"model name\" line"));
}

std::string MachineLine() {
  absl::StatusOr<std::string> cpu = CpuModel();
  cpu_set_t set;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (::sched_getaffinity(0, sizeof(set), &set) == 0) cores = CPU_COUNT(&set);
  return absl::StrCat(cpu.ok() ? *cpu : "unknown CPU", ", ", cores, cores == 1 ? " core, " : " cores, ",
                      absl::FormatTime("%Y-%m-%d %H:%M UTC", absl::Now(), absl::UTCTimeZone()));
}

}  // namespace mimetic::experiments
