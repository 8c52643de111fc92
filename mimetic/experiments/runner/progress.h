// What a person watching a sweep sees: every running point's step/steps, loss, latest accuracy and time left,
// and the sweep's points done/total and time left, at least every 10 seconds. On a terminal it is one line
// rewritten in place (every second); otherwise plain lines (every 10 s).
//
// The runner's child processes already write a progress line per log_every steps (and at least every few
// seconds) to their progress.log, "[default/seed1] step 400/1200 loss 0.8234 acc@20 0.450 5300 tok/s, 2m10s
// left"; SweepProgress reads the newest line of each running point's log.
//
//   SweepProgress progress(std::cerr, /*terminal=*/isatty(2), /*total=*/8, /*done=*/0, /*parallel=*/2);
//   progress.Started(i, "default/seed1", "runs/copy/points/default/seed1/progress.log");
//   progress.Tick(NowSeconds());                      // from the launcher's wait loop; prints when due
//   progress.Line("[1/8] finished default/seed1");   // a permanent line (clears the status first)
//   progress.Ended(i);
#ifndef MIMETIC_EXPERIMENTS_RUN_PROGRESS_H_
#define MIMETIC_EXPERIMENTS_RUN_PROGRESS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"

namespace mimetic::experiments {

// "2m10s", "45s"; "?" for a negative or non-finite time.
std::string FormatDuration(double seconds);
// FormatDuration's inverse ("2m10s" -> 130); nullopt for anything else (including "?").
std::optional<double> ParseDuration(absl::string_view text);

// One progress line of a point, parsed.
struct PointProgress {
  int64_t step = 0;
  int64_t steps = 0;
  std::string loss;      // as printed ("0.8234")
  std::string accuracy;  // "acc@20 0.450", or empty before the first evaluation
  std::optional<double> seconds_left;
};
// Parses "[name] step 400/1200 loss 0.8234 acc@20 0.450 5300 tok/s, 2m10s left"; nullopt for any other line.
std::optional<PointProgress> ParseProgressLine(absl::string_view line);
// The newest progress line in the last 64 KiB of the file at `path`; nullopt when there is none yet.
std::optional<PointProgress> LastProgress(const std::string& path);

class SweepProgress {
 public:
  // `total` points in the sweep, `done` of them finished before this run; `parallel` run at once.
  SweepProgress(std::ostream& out, bool terminal, int total, int done, int parallel);
  ~SweepProgress();

  void Started(int index, const std::string& name, const std::string& log_path);
  // The point ended (finished, failed or stopped); it counts as done.
  void Ended(int index);
  // Prints the status when due (first call at once, then every second on a terminal, every 10 s otherwise).
  // `now` in seconds on any monotonic clock.
  void Tick(double now);
  // A permanent line; on a terminal the status line is cleared first and redrawn at the next Tick.
  void Line(const std::string& text);
  // The status as printed now: "[2/8 done, 2 running, ~5m30s left] default/seed1 400/1200 loss 0.8234 acc@20
  // 0.450 2m10s left | mimetic/seed1 ...".
  std::string Status();

 private:
  struct Running {
    std::string name, log_path;
  };
  std::ostream& out_;
  const bool terminal_;
  const int total_, parallel_;
  int done_;
  std::map<int, Running> running_;
  std::optional<double> last_print_;
  bool status_shown_ = false;  // a terminal status line is on screen
};

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_RUN_PROGRESS_H_
