#include "mimetic/experiments/results/aggregate.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/room.h"

namespace mimetic::experiments {
namespace {

// The learning-rate axis's name, or "" when the sweep has none.
std::string LrAxis(const Experiment& e) {
  for (const SweepAxis& a : e.sweep().axes()) {
    if (IsLearningRateAxis(a)) return AxisName(a);
  }
  return "";
}

std::string AxesLabel(const std::vector<AxisValue>& axes) {
  std::vector<std::string> parts;
  for (const AxisValue& a : axes) parts.push_back(absl::StrCat(a.axis, "=", a.value));
  return absl::StrJoin(parts, ",");
}

// Whether candidate a beats b: higher exact accuracy, then lower loss (NaN loses both).
bool Better(const LrCandidate& a, const LrCandidate& b) {
  const double ea = std::isfinite(a.exact.mean) ? a.exact.mean : -1;
  const double eb = std::isfinite(b.exact.mean) ? b.exact.mean : -1;
  if (ea != eb) return ea > eb;
  const double la = std::isfinite(a.loss.mean) ? a.loss.mean : INFINITY;
  const double lb = std::isfinite(b.loss.mean) ? b.loss.mean : INFINITY;
  return la < lb;
}

std::string Csv(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

std::string Group::Label() const {
  return axes.empty() ? variant : absl::StrCat(variant, " ", AxesLabel(axes));
}

std::string Group::Axis(const std::string& name) const {
  for (const AxisValue& a : axes) {
    if (a.axis == name) return a.value;
  }
  return "";
}

int SelectionOf(const Experiment& e, const GridPoint& point, bool* token) {
  Experiment resolved = e;
  bool applied = true;
  for (const std::string& o : point.overrides) applied = applied && ApplyOverride(o, &resolved).ok();
  // An override that no longer applies (an old run directory) leaves the base task: still a choice.
  const TaskSpec& task = applied ? resolved.task() : e.task();
  *token = task.has_mqar() || task.has_mqar_copy();
  if (e.sweep().select_length() != 0) return e.sweep().select_length();
  const int train = TrainLength(task);
  for (int len : e.eval().lengths()) {
    if (train > 0 && len == train) return train;
  }
  return e.eval().lengths_size() > 0 ? e.eval().lengths(0) : 0;
}

Aggregate AggregateRuns(const Experiment& e, const std::vector<RunResult>& runs) {
  Aggregate out;
  bool first_group = true;
  const std::string lr_axis = LrAxis(e);
  // Group key -> (lr value -> runs), keeping grid order.
  std::vector<std::string> order;
  std::map<std::string, Group> groups;
  std::map<std::string, std::vector<std::pair<std::string, std::vector<const RunResult*>>>> by_lr;
  for (const RunResult& r : runs) {
    if (!r.finished) {
      out.unfinished.push_back(r.point.dir);
      continue;
    }
    Group g;
    g.variant = r.point.variant;
    std::string lr;
    for (const AxisValue& a : r.point.axes) {
      if (!lr_axis.empty() && a.axis == lr_axis) {
        lr = a.value;
      } else {
        g.axes.push_back(a);
      }
    }
    const std::string key = g.Label();
    if (groups.emplace(key, g).second) order.push_back(key);
    auto& rates = by_lr[key];
    auto it = std::find_if(rates.begin(), rates.end(), [&](const auto& p) { return p.first == lr; });
    if (it == rates.end()) {
      rates.push_back({lr, {}});
      it = rates.end() - 1;
    }
    it->second.push_back(&r);
  }
  for (const std::string& key : order) {
    Group g = groups[key];
    const auto& rates = by_lr[key];
    // Every rate of a group shares its non-rate axes, so the first run names the group's task.
    bool token = false;
    g.select_length = SelectionOf(e, rates.front().second.front()->point, &token);
    g.select_metric = token ? "per-query" : "exact";
    out.select_length = first_group || out.select_length == g.select_length ? g.select_length : 0;
    first_group = false;
    size_t best = 0;
    for (size_t i = 0; i < rates.size(); ++i) {
      std::vector<double> exact, loss;
      for (const RunResult* r : rates[i].second) {
        exact.push_back(token ? FinalToken(r->result, g.select_length)
                              : FinalExact(r->result, g.select_length));
        loss.push_back(r->result.final_loss());
      }
      g.candidates.push_back(LrCandidate{rates[i].first, MeanSe(exact), MeanSe(loss)});
      if (i > 0 && Better(g.candidates[i], g.candidates[best])) best = i;
    }
    g.lr = rates[best].first;
    g.runs = rates[best].second;
    std::vector<double> loss;
    for (const RunResult* r : g.runs) {
      loss.push_back(r->result.final_loss());
      g.diverged += r->result.diverged() ? 1 : 0;
    }
    g.loss = MeanSe(loss);
    for (int len : e.eval().lengths()) {
      std::vector<double> exact, token;
      for (const RunResult* r : g.runs) {
        exact.push_back(FinalExact(r->result, len));
        token.push_back(FinalToken(r->result, len));
      }
      g.exact[len] = MeanSe(exact);
      g.token[len] = MeanSe(token);
    }
    if (lr_axis.empty()) g.candidates.clear();
    out.groups.push_back(std::move(g));
  }
  return out;
}

const Group* FindGroup(const Aggregate& aggregate, const std::string& label) {
  for (const Group& g : aggregate.groups) {
    if (g.Label() == label) return &g;
  }
  return nullptr;
}

std::string SummaryMarkdown(const Experiment& e, const Aggregate& a) {
  std::ostringstream out;
  const bool lr = !LrAxis(e).empty();
  out << "| variant | seeds |" << (lr ? " lr (chosen) |" : "");
  for (int len : e.eval().lengths()) out << " exact@" << len << " |";
  for (int len : e.eval().lengths()) out << " token@" << len << " |";
  out << " final loss |\n|---|---|" << (lr ? "---|" : "");
  for (int i = 0; i < 2 * e.eval().lengths_size() + 1; ++i) out << "---|";
  out << "\n";
  for (const Group& g : a.groups) {
    out << "| " << g.Label() << " | " << g.runs.size()
        << (g.diverged > 0 ? absl::StrCat(" (", g.diverged, " diverged)") : "") << " |";
    if (lr) out << " " << g.lr << " |";
    for (int len : e.eval().lengths()) out << " " << FormatStat(g.exact.at(len)) << " |";
    for (int len : e.eval().lengths()) out << " " << FormatStat(g.token.at(len)) << " |";
    out << " " << FormatStat(g.loss, 4) << " |\n";
  }
  out << "\nmean ± standard error over seeds.";
  if (lr) {
    out << " Learning rate chosen per row by the mean final selection metric at the row's selection "
           "length (sweep.select_length, else the row's training length when evaluated, else the first "
           "eval length; per-query accuracy for MQAR, exact otherwise; ties: lower final training loss):"
           "\n\n| variant | lr | selected on | score | final loss |\n|---|---|---|---|---|\n";
    for (const Group& g : a.groups) {
      for (const LrCandidate& c : g.candidates) {
        out << "| " << g.Label() << " | " << c.lr << (c.lr == g.lr ? " (chosen)" : "") << " | "
            << g.select_metric << "@" << g.select_length << " | " << FormatStat(c.exact) << " | "
            << FormatStat(c.loss, 4) << " |\n";
      }
    }
  } else {
    out << "\n";
  }
  if (!a.unfinished.empty()) {
    out << "\nNot finished (" << a.unfinished.size() << "): " << absl::StrJoin(a.unfinished, ", ") << "\n";
  }
  return out.str();
}

namespace {

constexpr const char* kSummaryColumns[] = {"variant",  "lr",         "length",   "seeds",     "exact_mean",
                                           "exact_se", "token_mean", "token_se", "loss_mean", "loss_se"};

// The header names of the axis columns: an axis whose name is one of the fixed columns (`:scaling`'s axis
// "length" beside the eval length) or repeats an earlier one is written "axis_<name>" (then with a number),
// so that no two columns share a name and a reader keyed by name (csv.DictReader, pandas) drops none.
std::vector<std::string> AxisColumns(const std::vector<std::string>& axis_names) {
  std::set<std::string> used(std::begin(kSummaryColumns), std::end(kSummaryColumns));
  std::vector<std::string> out;
  for (const std::string& n : axis_names) {
    std::string column = used.count(n) ? "axis_" + n : n;
    for (int k = 2; used.count(column); ++k) column = absl::StrCat("axis_", n, "_", k);
    used.insert(column);
    out.push_back(column);
  }
  return out;
}

}  // namespace

std::string SummaryCsv(const Experiment& e, const Aggregate& a) {
  std::vector<std::string> axis_names;
  for (const SweepAxis& axis : e.sweep().axes()) {
    if (!IsLearningRateAxis(axis)) axis_names.push_back(AxisName(axis));
  }
  std::ostringstream out;
  out << "variant,";
  for (const std::string& n : AxisColumns(axis_names)) out << Csv(n) << ",";
  out << "lr,length,seeds,exact_mean,exact_se,token_mean,token_se,loss_mean,loss_se\n";
  for (const Group& g : a.groups) {
    for (int len : e.eval().lengths()) {
      out << Csv(g.variant) << ",";
      for (const std::string& n : axis_names) out << Csv(g.Axis(n)) << ",";
      const Stat& x = g.exact.at(len);
      const Stat& t = g.token.at(len);
      // Seeds with an accuracy at this length (a run that has none is not counted as one).
      out << Csv(g.lr) << "," << len << "," << std::min(x.n, t.n) << ","
          << absl::StrFormat("%.6g,%.6g,%.6g,%.6g,%.6g,%.6g", x.mean, x.se, t.mean, t.se, g.loss.mean,
                             g.loss.se)
          << "\n";
    }
  }
  return out.str();
}

std::string RunsCsv(const Experiment& e, const std::vector<RunResult>& runs) {
  std::ostringstream out;
  out << "variant,axes,seed,steps,seconds,threads,diverged,early_stopped,final_loss,length,exact,token\n";
  for (const RunResult& r : runs) {
    if (!r.finished) continue;
    for (const LengthAccuracy& acc : r.result.final()) {
      out << Csv(r.point.variant) << "," << Csv(AxesLabel(r.point.axes)) << "," << r.point.seed << ","
          << r.result.steps() << "," << absl::StrFormat("%.1f", r.result.seconds()) << ","
          << r.result.threads() << "," << r.result.diverged() << "," << r.result.early_stopped() << ","
          << absl::StrFormat("%.6g", r.result.final_loss()) << "," << acc.length() << ","
          << absl::StrFormat("%.6g,%.6g", acc.exact(), acc.token()) << "\n";
    }
  }
  return out.str();
}

}  // namespace mimetic::experiments
