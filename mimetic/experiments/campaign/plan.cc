#include "mimetic/experiments/campaign/plan.h"

#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "mimetic/core/file_util.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/figures/figure.h"
#include "mimetic/experiments/runner/point_filter.h"

namespace mimetic::experiments {
namespace {

// Collects the text parser's errors instead of printing them to stderr.
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (first.empty()) first = absl::StrCat("line ", line + 1, " column ", column + 1, ": ", message);
  }
  std::string first;
};

absl::Status ItemError(const CampaignItem& item, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("campaign plan item '", item.id(), "': ", what));
}

bool ValidId(const std::string& id) {
  if (id.empty()) return false;
  for (char c : id) {
    if (!absl::ascii_islower(c) && !absl::ascii_isdigit(c) && c != '_') return false;
  }
  return true;
}

// The preset's grid, and for a FIGURE item that its points regex selects some of it.
absl::Status CheckFigure(const CampaignItem& item, const std::string& preset_root) {
  if (item.figure().empty() || item.preset().empty()) {
    return ItemError(item, "figure and preset are required for a FIGURE or PENDING item");
  }
  absl::StatusOr<const FigureDef*> def = FindFigure(item.figure());
  if (!def.ok()) return ItemError(item, std::string(def.status().message()));
  absl::StatusOr<Experiment> e = LoadPreset(preset_root, item.figure(), item.preset(), {});
  if (!e.ok()) return ItemError(item, std::string(e.status().message()));
  if (item.kind() != CampaignItem::FIGURE) return absl::OkStatus();
  if (item.points().empty()) {
    return ItemError(item,
                     "points is empty; expected a regular expression of grid points (\"^points/\": all)");
  }
  if (item.jobs() < 0 || item.step_budget() < 0) {
    return ItemError(
        item, absl::StrCat("jobs ", item.jobs(), ", step_budget ", item.step_budget(), "; expected >= 0"));
  }
  ASSIGN_OR_RETURN(std::vector<GridPoint> grid, ExpandGrid(*e));
  absl::StatusOr<std::vector<GridPoint>> selected = SelectPoints(grid, item.points());
  if (!selected.ok()) {
    return ItemError(
        item, absl::StrCat(item.figure(), " --preset=", item.preset(), ": ", selected.status().message()));
  }
  return absl::OkStatus();
}

absl::Status CheckItem(const CampaignItem& item, const std::set<std::string>& earlier,
                       const std::string& preset_root) {
  if (item.why().empty()) return ItemError(item, "why is empty; say why the item is in the plan");
  const bool runs = item.kind() != CampaignItem::FUTURE;
  if (runs && !(item.device_minutes() > 0)) {
    return ItemError(item, absl::StrCat("device_minutes ", item.device_minutes(), "; expected > 0"));
  }
  if (runs && item.speed().empty()) {
    return ItemError(item, "speed is empty; say which measured speed device_minutes rests on");
  }
  switch (item.kind()) {
    case CampaignItem::CHECK:
      if (item.command().empty()) return ItemError(item, "a CHECK item needs the command to run");
      return absl::OkStatus();
    case CampaignItem::FIGURE:
      return CheckFigure(item, preset_root);
    case CampaignItem::PENDING:
      if (earlier.count(item.decided_by()) == 0) {
        return ItemError(
            item, absl::StrCat("decided_by '", item.decided_by(), "'; expected the id of an earlier item"));
      }
      if (!item.points().empty()) {
        return ItemError(item, "a PENDING item has no points yet; once chosen, make it a FIGURE item");
      }
      return CheckFigure(item, preset_root);
    case CampaignItem::FUTURE:
      if (!item.points().empty() || !item.command().empty()) {
        return ItemError(item, "a FUTURE item runs nothing: no points or command");
      }
      return absl::OkStatus();
    default:
      return ItemError(item, "kind is not set; expected CHECK, FIGURE, PENDING or FUTURE");
  }
}

}  // namespace

absl::StatusOr<CampaignPlan> LoadPlan(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, core::ReadTextFile(path));
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  CampaignPlan plan;
  if (!parser.ParseFromString(text, &plan)) {
    return absl::InvalidArgumentError(absl::StrCat("campaign plan '", path, "': ", errors.first));
  }
  return plan;
}

absl::Status ValidatePlan(const CampaignPlan& plan, const std::string& preset_root) {
  if (plan.items().empty()) return absl::InvalidArgumentError("the campaign plan has no items");
  std::set<std::string> ids;
  for (const CampaignItem& item : plan.items()) {
    if (!ValidId(item.id())) {
      return absl::InvalidArgumentError(
          absl::StrCat("campaign plan item id '", item.id(), "'; expected [a-z0-9_]+"));
    }
    if (ids.count(item.id()) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("campaign plan item id '", item.id(), "' is used twice"));
    }
    RETURN_IF_ERROR(CheckItem(item, ids, preset_root));
    ids.insert(item.id());
  }
  return absl::OkStatus();
}

absl::StatusOr<const CampaignItem*> FindItem(const CampaignPlan& plan, const std::string& id) {
  std::vector<std::string> ids;
  for (const CampaignItem& item : plan.items()) {
    if (item.id() == id) return &item;
    ids.push_back(item.id());
  }
  return absl::NotFoundError(
      absl::StrCat("no campaign plan item '", id, "'; the plan has ", absl::StrJoin(ids, ", ")));
}

}  // namespace mimetic::experiments
