// The reproduction report: every figure's claims and verdicts in one table at the top, then each figure
// (its picture, wall time, preset and claims), as dir/report.md (pictures linked relatively) and a
// self-contained dir/report.html (pictures embedded as base64 data URIs, no external resource at all).
// A figure that did not run, or whose PNG is missing, is listed as such, never dropped.
//
//   ReportFigure fig1{"fig1", "Fig. 1: copy, 4-layer Mamba", "cpu", "runs/fig1/figure.png",
//                     "runs/fig1/claims.md", "runs/fig1/summary.csv", /*wall_seconds=*/812, claims, "done"};
//   RETURN_IF_ERROR(WriteReport("runs/paper", "Mimetic initialization: reproduction", MachineLine(),
//   {fig1}));
#ifndef MIMETIC_EXPERIMENTS_REPORT_H_
#define MIMETIC_EXPERIMENTS_REPORT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "mimetic/experiments/results/claims.h"

namespace mimetic::experiments {

struct ReportFigure {
  std::string id;     // "fig1"
  std::string title;  // "Fig. 1: copy, 4-layer Mamba"
  std::string preset;
  // Paths as the caller sees them (absolute, or relative to the current directory); empty = none.
  std::string png_path, claims_md_path, summary_csv_path;
  double wall_seconds = 0;
  std::vector<Claim> claims;
  std::string status = "done";  // "done", or why the figure is missing (e.g. "not run: needs a GPU")
  // What a reader must know to read the figure, e.g. that its checkpoint is a stand-in teacher the target
  // trained itself; printed under the status when set.
  std::string note;
  // The room each compared model gives the mechanism (figure_common.h RoomLines); listed when set.
  std::vector<std::string> room;
};

// Writes dir/report.md and dir/report.html (each atomically; creates dir). `machine` is printed under
// the title (e.g. MachineLine()). InvalidArgument for a figure without an id or two with the same id;
// a missing or unreadable PNG is not an error: the report names it.
absl::Status WriteReport(const std::string& dir, const std::string& title, const std::string& machine,
                         const std::vector<ReportFigure>& figures);

// The two documents WriteReport writes, for callers and tests that want the text.
std::string ReportMarkdown(const std::string& dir, const std::string& title, const std::string& machine,
                           const std::vector<ReportFigure>& figures);
std::string ReportHtml(const std::string& title, const std::string& machine,
                       const std::vector<ReportFigure>& figures);

// The CPU model from /proc/cpuinfo's first "model name" line (e.g. "AMD EPYC 7B13"); NotFound when the
// file or the line is missing (non-Linux, some ARM kernels).
absl::StatusOr<std::string> CpuModel(const std::string& cpuinfo_path = "/proc/cpuinfo");

// "AMD EPYC 7B13, 2 cores, 2026-11-24 01:40 UTC": the CPU model (or "unknown CPU"), the cores this
// process may use, and the current date and time.
std::string MachineLine();

// Text made safe for HTML element content and attribute values.
std::string HtmlEscape(const std::string& text);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_REPORT_H_
