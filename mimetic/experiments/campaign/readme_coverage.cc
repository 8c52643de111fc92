#include "mimetic/experiments/campaign/readme_coverage.h"

#include <filesystem>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/campaign/campaign_files.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/figures/figure.h"
#include "mimetic/experiments/figures/saved_results.h"
#include "mimetic/experiments/results/claims.h"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

// "Fig. 1" for fig1, "`:scaling`" for a target that is not a numbered figure.
std::string FigureName(const std::string& id) {
  if (absl::StartsWith(id, "fig")) return "Fig. " + id.substr(3);
  return "`:" + id + "`";
}

// Points in flight: point folders of the in-flight directory holding a checkpoint.
int InFlight(const std::string& inflight) {
  absl::StatusOr<std::vector<std::string>> files =
      ListFiles(inflight, [](const std::string& n) { return !NewestCheckpoint({n}).empty(); });
  if (!files.ok()) return 0;
  std::set<std::string> points;
  for (const std::string& f : *files) points.insert(PointDirOf(f));
  return static_cast<int>(points.size());
}

// The kept verdicts (claims.json), or why there are none.
std::string Verdicts(const std::string& kept, bool partial) {
  absl::StatusOr<std::string> json = core::ReadTextFile((fs::path(kept) / "claims.json").string());
  if (!json.ok()) return "not judged yet";
  absl::StatusOr<std::vector<Claim>> claims = ParseClaimsJson(*json);
  if (!claims.ok()) return "claims.json unreadable";
  return absl::StrCat(partial ? "provisional: " : "", TalliesLine(*claims));
}

}  // namespace

absl::StatusOr<std::string> CoverageMarkdown(const std::string& root, const std::string& preset_root,
                                             const CampaignPlan& plan) {
  std::string md =
      "The GPU campaign's coverage: finished points kept of each grid its plan trains "
      "([docs/gpu.md](docs/gpu.md#the-campaign), [plan](mimetic/experiments/campaign/plan.textproto)):\n\n";
  std::set<std::pair<std::string, std::string>> seen;
  for (const CampaignItem& item : plan.items()) {
    if (item.kind() != CampaignItem::FIGURE && item.kind() != CampaignItem::PENDING) continue;
    if (!seen.insert({item.figure(), item.preset()}).second) continue;
    ASSIGN_OR_RETURN(Experiment e, LoadPreset(preset_root, item.figure(), item.preset(), {}));
    ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(e));
    const std::string kept = ResultsPath(root, item.figure(), item.preset());
    const int done = CountFinishedPoints(kept);
    const int flying = InFlight(InflightPath(root, item.figure(), item.preset()));
    const std::string rel = ResultsPath("", item.figure(), item.preset());  // relative to the README
    absl::StrAppend(&md, "- ", FigureName(item.figure()), " `", item.preset(), "`: ", done, " of ",
                    grid.size(), " points", flying > 0 ? absl::StrCat(", ", flying, " in flight") : "", "; ",
                    done > 0 ? absl::StrCat(Verdicts(kept, done < static_cast<int>(grid.size())),
                                            " ([claims](", rel, "/claims.md))")
                             : "not judged yet",
                    "\n");
  }
  return md;
}

absl::Status WriteReadmeCoverage(const std::string& root, const std::string& preset_root,
                                 const CampaignPlan& plan) {
  const std::string path = (fs::path(root) / "README.md").string();
  ASSIGN_OR_RETURN(std::string readme, core::ReadTextFile(path));
  const size_t begin = readme.find(kCoverageBegin);
  const size_t end = begin == std::string::npos ? begin : readme.find(kCoverageEnd, begin);
  if (end == std::string::npos) {
    return absl::FailedPreconditionError(absl::StrCat("'", path, "' lacks the campaign coverage markers '",
                                                      kCoverageBegin, "' and, after it, '", kCoverageEnd,
                                                      "'"));
  }
  ASSIGN_OR_RETURN(std::string md, CoverageMarkdown(root, preset_root, plan));
  const size_t from = begin + std::string(kCoverageBegin).size();
  readme.replace(from, end - from, "\n" + md);
  return core::WriteTextFile(path, readme);
}

}  // namespace mimetic::experiments
