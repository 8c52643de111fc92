#include "mimetic/experiments/runner/point_filter.h"

#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace mimetic::experiments {

absl::StatusOr<std::vector<GridPoint>> SelectPoints(const std::vector<GridPoint>& grid,
                                                    const std::string& regex) {
  if (regex.empty()) return grid;
  std::regex re;
  try {
    re = std::regex(regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return absl::InvalidArgumentError(
        absl::StrCat("--points=", regex, " is not a regular expression (", e.what(), ")"));
  }
  std::vector<GridPoint> kept;
  for (const GridPoint& p : grid) {
    if (std::regex_search(p.dir, re)) kept.push_back(p);
  }
  if (!kept.empty()) return kept;
  std::vector<std::string> examples;
  for (size_t i = 0; i < grid.size() && i < 4; ++i) examples.push_back(grid[i].dir);
  return absl::InvalidArgumentError(absl::StrCat(
      "--points=", regex, " matches none of the grid's ", grid.size(), " point directories (e.g. ",
      absl::StrJoin(examples, ", "), grid.size() > examples.size() ? ", ..." : "",
      "); expected a regular expression found in at least one of them"));
}

}  // namespace mimetic::experiments
