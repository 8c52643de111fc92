#include "mimetic/experiments/runner/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace mimetic::experiments {
namespace {

constexpr double kTerminalPeriod = 1.0;   // seconds between redraws on a terminal
constexpr double kPlainPeriod = 10.0;     // seconds between plain lines
constexpr int64_t kTailBytes = 64 << 10;  // how much of a log is read for its newest line

int TerminalWidth() {
  struct winsize w;
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 20) return w.ws_col;
  return 120;
}

}  // namespace

std::string FormatDuration(double s) {
  if (!std::isfinite(s) || s < 0) return "?";
  const int64_t t = static_cast<int64_t>(s + 0.5);
  return t >= 60 ? absl::StrFormat("%dm%02ds", t / 60, t % 60) : absl::StrFormat("%ds", t);
}

std::optional<double> ParseDuration(absl::string_view text) {
  int64_t minutes = 0, seconds = 0;
  if (!absl::ConsumeSuffix(&text, "s")) return std::nullopt;
  const size_t m = text.find('m');
  if (m != absl::string_view::npos) {
    if (!absl::SimpleAtoi(text.substr(0, m), &minutes)) return std::nullopt;
    text = text.substr(m + 1);
  }
  if (!absl::SimpleAtoi(text, &seconds) || minutes < 0 || seconds < 0) return std::nullopt;
  return static_cast<double>(minutes * 60 + seconds);
}

std::optional<PointProgress> ParseProgressLine(absl::string_view line) {
  const size_t close = line.find("] step ");
  if (line.empty() || line[0] != '[' || close == absl::string_view::npos) return std::nullopt;
  // "400/1200", "loss", "0.8234", ["acc@20", "0.450"], "5300", "tok/s,", "2m10s", "left"
  std::vector<absl::string_view> words =
      absl::StrSplit(absl::StripAsciiWhitespace(line.substr(close + 7)), ' ', absl::SkipEmpty());
  if (words.size() < 7 || words[1] != "loss" || words.back() != "left") return std::nullopt;
  PointProgress p;
  std::vector<absl::string_view> steps = absl::StrSplit(words[0], '/');
  if (steps.size() != 2 || !absl::SimpleAtoi(steps[0], &p.step) || !absl::SimpleAtoi(steps[1], &p.steps))
    return std::nullopt;
  p.loss = std::string(words[2]);
  if (absl::StartsWith(words[3], "acc@") && words.size() >= 9)
    p.accuracy = absl::StrCat(words[3], " ", words[4]);
  p.seconds_left = ParseDuration(words[words.size() - 2]);
  return p;
}

std::optional<PointProgress> LastProgress(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  in.seekg(0, std::ios::end);
  const int64_t size = in.tellg();
  const int64_t from = std::max<int64_t>(0, size - kTailBytes);
  in.seekg(from);
  std::string tail(static_cast<size_t>(size - from), '\0');
  in.read(tail.data(), static_cast<std::streamsize>(tail.size()));
  std::vector<absl::string_view> lines = absl::StrSplit(tail, '\n', absl::SkipEmpty());
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (std::optional<PointProgress> p = ParseProgressLine(*it)) return p;
  }
  return std::nullopt;
}

SweepProgress::SweepProgress(std::ostream& out, bool terminal, int total, int done, int parallel)
    : out_(out), terminal_(terminal), total_(total), parallel_(std::max(1, parallel)), done_(done) {}

SweepProgress::~SweepProgress() {
  if (status_shown_) out_ << "\r\033[K" << std::flush;
}

void SweepProgress::Started(int index, const std::string& name, const std::string& log_path) {
  running_[index] = Running{name, log_path};
}

void SweepProgress::Ended(int index) {
  if (running_.erase(index) > 0) ++done_;
}

std::string SweepProgress::Status() {
  std::vector<std::string> points;
  double running_left = 0, point_seconds = 0;
  int timed = 0;
  for (const auto& [index, r] : running_) {
    std::optional<PointProgress> p = LastProgress(r.log_path);
    if (!p.has_value()) {
      points.push_back(absl::StrCat(r.name, " starting"));
      continue;
    }
    points.push_back(absl::StrCat(r.name, " ", p->step, "/", p->steps, " loss ", p->loss,
                                  p->accuracy.empty() ? "" : " " + p->accuracy, " ",
                                  FormatDuration(p->seconds_left.value_or(-1)), " left"));
    if (p->seconds_left.has_value() && p->step < p->steps) {
      running_left = std::max(running_left, *p->seconds_left);
      point_seconds += *p->seconds_left * p->steps / static_cast<double>(p->steps - p->step);
      ++timed;
    }
  }
  // The sweep: the running points' time left, then the points not started, `parallel` at a time, each as long
  // as a running point takes in all.
  const int waiting = total_ - done_ - static_cast<int>(running_.size());
  std::string left = "?";
  if (timed > 0) {
    const double per_point = point_seconds / timed;
    left = FormatDuration(running_left +
                          std::ceil(std::max(0, waiting) / static_cast<double>(parallel_)) * per_point);
  } else if (running_.empty() && waiting <= 0) {
    left = "0s";
  }
  return absl::StrCat("[", done_, "/", total_, " done, ", running_.size(), " running, ~", left, " left] ",
                      absl::StrJoin(points, " | "));
}

void SweepProgress::Tick(double now) {
  const double period = terminal_ ? kTerminalPeriod : kPlainPeriod;
  if (last_print_.has_value() && now - *last_print_ < period) return;
  last_print_ = now;
  std::string status = Status();
  if (!terminal_) {
    out_ << "progress " << status << "\n" << std::flush;
    return;
  }
  const size_t width = static_cast<size_t>(TerminalWidth() - 1);
  if (status.size() > width) status = status.substr(0, width - 3) + "...";
  out_ << "\r\033[K" << status << std::flush;
  status_shown_ = true;
}

void SweepProgress::Line(const std::string& text) {
  if (status_shown_) {
    out_ << "\r\033[K";
    status_shown_ = false;
    last_print_.reset();  // redraw at the next tick
  }
  out_ << text << "\n" << std::flush;
}

}  // namespace mimetic::experiments
