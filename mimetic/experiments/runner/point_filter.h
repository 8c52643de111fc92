// Which grid points a run trains: --points=REGEX, searched in each point's directory relative to the run
// directory (points/<variant>[/<axis>=<value>,...]/seed<k>), so a campaign (mimetic/experiments/campaign)
// can train a slice of a figure's grid and leave the rest for later. Points left out stay unfinished; they
// are summarised and judged as any unfinished point is (not at all), and a later run trains them.
//
//   ASSIGN_OR_RETURN(std::vector<GridPoint> train, SelectPoints(grid, "^points/mimetic/lr=0.001/"));
#ifndef MIMETIC_EXPERIMENTS_RUNNER_POINT_FILTER_H_
#define MIMETIC_EXPERIMENTS_RUNNER_POINT_FILTER_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/sweep.h"

namespace mimetic::experiments {

// The points of `grid` whose `dir` contains a match of `regex` (ECMAScript syntax, std::regex_search: anchor
// with ^ and $; "seed1$" is seed 1 alone, "seed1" also seed 10), in grid order; every point when `regex` is
// empty. InvalidArgument when the regex does not parse, or matches no point of the grid (naming the regex and
// a few of the grid's point directories, so a typo is not mistaken for "nothing left to train").
absl::StatusOr<std::vector<GridPoint>> SelectPoints(const std::vector<GridPoint>& grid,
                                                    const std::string& regex);

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUNNER_POINT_FILTER_H_
