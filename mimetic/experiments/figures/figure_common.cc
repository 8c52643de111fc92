#include "mimetic/experiments/figures/figure_common.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/room.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/experiments/figures/final_maps_file.h"
#include "mimetic/experiments/results/chance.h"
#include "mimetic/experiments/runner/point_run.h"
#include "mimetic/init/transform.h"
#include "mimetic/models/spec.h"
#include "mimetic/ops/shape/shape.h"
#include "mimetic/train/checkpoint.h"
#include "xtensor/xadapt.hpp"

namespace mimetic::experiments {
namespace {

namespace fs = std::filesystem;

std::vector<Series> SeedCurves(const Group& g, int length, bool token) {
  std::vector<Series> out;
  for (const RunResult* r : g.runs) {
    Series s;
    for (const EvalPoint& p : r->result.curve()) {
      for (const LengthAccuracy& a : p.accuracy()) {
        if (a.length() != length) continue;
        s.xs.push_back(static_cast<double>(p.step()));
        s.ys.push_back(token ? a.token() : a.exact());
      }
    }
    if (!s.xs.empty()) out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

absl::StatusOr<const Group*> GetGroup(const FigureRun& run, const std::string& label) {
  if (const Group* g = FindGroup(run.summary.aggregate, label)) return g;
  std::vector<std::string> labels;
  for (const Group& g : run.summary.aggregate.groups) labels.push_back(g.Label());
  return absl::NotFoundError(absl::StrCat("no finished runs of '", label, "' (finished: ",
                                          labels.empty() ? "none" : absl::StrJoin(labels, "; "), ")"));
}

absl::StatusOr<Band> GroupBand(const Group& group, int length, const std::string& name, bool dotted,
                               int color, bool token) {
  std::vector<Series> seeds = SeedCurves(group, length, token);
  if (seeds.empty())
    return absl::NotFoundError(absl::StrCat(group.Label(), " has no curve at length ", length));
  ASSIGN_OR_RETURN(Band b, MeanBandOfSeeds(name, seeds));
  b.dotted = dotted;
  b.color = color;
  return b;
}

absl::StatusOr<CurvePanel> AccuracyPanel(const FigureRun& run, const std::string& title,
                                         const std::vector<std::string>& labels,
                                         const std::vector<int>& lengths, bool token) {
  CurvePanel panel;
  panel.title = title;
  panel.xlabel = "step";
  panel.ylabel = token ? "per-token accuracy" : "exact-string accuracy";
  panel.y_min = 0;
  panel.y_max = 1;
  for (size_t i = 0; i < labels.size(); ++i) {
    ASSIGN_OR_RETURN(const Group* g, GetGroup(run, labels[i]));
    for (size_t k = 0; k < lengths.size(); ++k) {
      ASSIGN_OR_RETURN(Band b, GroupBand(*g, lengths[k], absl::StrCat(labels[i], " @", lengths[k]), k == 0,
                                         static_cast<int>(i), token));
      panel.bands.push_back(std::move(b));
    }
  }
  // The chance level of the first group's task (the labels compare inits on one task).
  double x0 = INFINITY, x1 = -INFINITY;
  for (const Band& b : panel.bands) {
    for (double x : b.xs) x0 = std::min(x0, x), x1 = std::max(x1, x);
  }
  if (!labels.empty()) {
    ASSIGN_OR_RETURN(const Group* g, GetGroup(run, labels[0]));
    for (Band& b : ChanceBands(run, *g, lengths, token, x0, x1)) panel.bands.push_back(std::move(b));
  }
  return panel;
}

std::vector<Band> ChanceBands(const FigureRun& run, const Group& g, const std::vector<int>& lengths,
                              bool token, double x0, double x1) {
  constexpr int kGrey = 7;  // tab10's grey, used by no variant
  std::vector<Band> out;
  const std::optional<ResolvedGroup> r = ResolveGroup(run, g);
  if (!r || !(x1 >= x0)) return out;
  std::vector<double> drawn;
  for (int len : lengths) {
    const double c = ChanceLevel(r->experiment.task(), len, token ? Metric::kToken : Metric::kExact);
    if (!(c >= 0.005) || std::find(drawn.begin(), drawn.end(), c) != drawn.end()) continue;
    drawn.push_back(c);
    Band b;
    b.name = absl::StrCat("chance @", len);
    b.xs = {x0, x1};
    b.mean = b.lo = b.hi = {c, c};
    b.dotted = len == lengths.front();  // the figures' convention: dotted at the training length
    b.color = kGrey;
    out.push_back(std::move(b));
  }
  return out;
}

std::optional<int64_t> FirstStepReaching(const Group& group, int length, double threshold) {
  absl::StatusOr<Band> b = GroupBand(group, length, "", false, 0);
  if (!b.ok()) return std::nullopt;
  for (size_t i = 0; i < b->xs.size(); ++i) {
    if (std::isfinite(b->mean[i]) && b->mean[i] >= threshold) return static_cast<int64_t>(b->xs[i]);
  }
  return std::nullopt;
}

absl::StatusOr<FinalMaps> ComputeMaps(const Experiment& e, uint64_t seed, const core::ParamTree& params,
                                      const models::ModelSpec& spec) {
  const core::Key key = core::Key::FromSeed(seed);
  ASSIGN_OR_RETURN(std::unique_ptr<data::Task> task, MakeTask(e.task()));
  // The example the point's own plots use (point_run.cc).
  const int64_t len = e.eval().map_length() > 0 ? e.eval().map_length() : e.eval().lengths(0);
  ASSIGN_OR_RETURN(data::EvalBatch eb,
                   task->SampleEval(core::FoldIn(core::FoldIn(key, "eval"), "map"), 1, len));
  core::Tensor tokens = eb.batch.tokens;
  FinalMaps out;
  out.length = eb.lengths.empty() ? len : eb.lengths[0];
  if (!eb.answer_positions.empty() && !eb.answer_positions[0].empty()) {
    out.paste_start = eb.answer_positions[0].front();
    const int64_t end = std::min<int64_t>(eb.answer_positions[0].back() + 2, tokens.dim(1));
    tokens = ops::Slice(tokens, 1, 0, end);
  }
  ASSIGN_OR_RETURN(out.maps, models::ComputeAllLayerMaps(params, spec, tokens, 0));
  return out;
}

absl::StatusOr<FinalMaps> ComputeFinalMaps(const FigureRun& run, const RunResult& point) {
  if (run.maps) return run.maps(point);
  ASSIGN_OR_RETURN(Experiment e, PointExperiment(run.experiment, point.point));
  const Variant& v = e.variants(0);
  const core::Key key = core::Key::FromSeed(point.point.seed);
  ASSIGN_OR_RETURN(init::Transform transform, MakeTransform(v));
  ASSIGN_OR_RETURN(init::Model model,
                   init::MakeModel(VariantModel(e, v), transform, core::FoldIn(key, "init")));
  const fs::path point_dir = fs::path(run.summary.run_dir) / point.point.dir;
  absl::StatusOr<train::LoadedCheckpoint> ckpt =
      train::LoadLatestCheckpoint((point_dir / "checkpoints").string(), model.params);
  if (!ckpt.ok()) {
    // Committed results keep the maps, not the checkpoints (final_maps_file.h).
    absl::StatusOr<FinalMaps> saved = ReadFinalMaps(point_dir.string());
    if (absl::IsNotFound(saved.status())) return ckpt.status();
    return saved;
  }
  ASSIGN_OR_RETURN(FinalMaps maps, ComputeMaps(e, point.point.seed, ckpt->state.params, model.spec));
  // Kept beside result.textproto; a failure to write it loses nothing the checkpoint does not still hold.
  absl::Status kept = WriteFinalMaps(point_dir.string(), maps, ckpt->state.step);
  if (!kept.ok()) std::cerr << "warning: final maps not saved: " << kept.message() << "\n";
  return maps;
}

std::map<uint64_t, FinalMaps> MapsBySeed(const FigureRun& run, const Group& group, std::string* problem) {
  std::map<uint64_t, FinalMaps> out;
  for (const RunResult* r : group.runs) {
    absl::StatusOr<FinalMaps> m = ComputeFinalMaps(run, *r);
    if (m.ok()) {
      out[r->point.seed] = *std::move(m);
      continue;
    }
    if (problem != nullptr && problem->empty()) *problem = std::string(m.status().message());
    // A damaged or impossible maps file is refused for the whole group: dropping that seed alone would
    // let an edited file choose which seeds a map verdict stands on.
    if (absl::IsDataLoss(m.status())) {
      if (problem != nullptr) *problem = absl::StrCat("refused: ", m.status().message());
      return {};
    }
  }
  if (problem != nullptr && problem->empty() && out.empty()) *problem = "the group has no finished runs";
  return out;
}

std::optional<ResolvedGroup> ResolveGroup(const FigureRun& run, const Group& g) {
  if (g.runs.empty()) return std::nullopt;
  absl::StatusOr<Experiment> e = PointExperiment(run.experiment, g.runs[0]->point);
  if (!e.ok()) return std::nullopt;
  absl::StatusOr<models::ModelSpec> spec = models::ResolveSpec(VariantModel(*e, e->variants(0)));
  if (!spec.ok()) return std::nullopt;
  return ResolvedGroup{*std::move(e), *std::move(spec)};
}

double GroupFloor(const FigureRun& run, const Group& g, int length, bool token) {
  const std::optional<ResolvedGroup> r = ResolveGroup(run, g);
  if (!r) return kAboveChance;
  return LearnedFloor(r->experiment.task(), length, token ? Metric::kToken : Metric::kExact);
}

namespace {

// The room line of one point experiment (one variant) and its resolved model.
std::string RoomLine(const std::string& label, const Experiment& e, const models::ModelSpec& spec) {
  const std::optional<int> key = MinKeyDimension(spec), limit = RecallKeyLimit(spec);
  std::string line = absl::StrCat(label, ": ", key ? KeyDimensionText(spec) : "softmax attention only");
  if (key && !limit) absl::StrAppend(&line, ", and softmax attention (no key limit)");
  if (limit) {
    std::vector<std::string> lengths;
    for (int len : e.eval().lengths()) {
      const int items = RecalledItems(e.task(), len);  // MQAR: its pairs at that length
      lengths.push_back(absl::StrCat(len, items == len ? "" : absl::StrCat(" (", items, " pairs)"),
                                     *limit <= items ? " (no room)" : ""));
    }
    absl::StrAppend(&line, " vs lengths ", absl::StrJoin(lengths, ", "));
  }
  int longest = 0;
  for (int len : e.eval().lengths()) longest = std::max(longest, len);
  const std::optional<int64_t> row = TrainingRowTokens(e.task()), example = ExampleTokens(e.task(), longest);
  if (row && example) {
    absl::StrAppend(&line, "; training row ", *row, " tokens, longest eval example ", *example, " tokens",
                    *example > *row ? " (longer than any training row)" : "");
  }
  return line;
}

}  // namespace

std::vector<std::string> RoomLines(const FigureRun& run) {
  std::vector<std::string> lines;
  std::set<std::string> seen;
  for (const Group& g : run.summary.aggregate.groups) {
    const std::optional<ResolvedGroup> r = ResolveGroup(run, g);
    if (!r) continue;
    // Groups that differ only in axes the model and task do not see (seeds, rates, init flags) give the
    // same line: shown once, under the first group's label.
    const std::string line = RoomLine(g.Label(), r->experiment, r->spec);
    const std::string body = line.substr(line.find(": ") + 2);
    if (seen.insert(body).second) lines.push_back(line);
  }
  return lines;
}

namespace {

// The longest length a rule reads: the largest N of its "@N" readings ("exact@100"), 0 when none.
int LongestReading(const std::string& how) {
  int longest = 0;
  for (size_t at = how.find('@'); at != std::string::npos; at = how.find('@', at + 1)) {
    size_t end = at + 1;
    while (end < how.size() && absl::ascii_isdigit(how[end])) ++end;
    int n = 0;
    if (end > at + 1 && absl::SimpleAtoi(how.substr(at + 1, end - at - 1), &n))
      longest = std::max(longest, n);
  }
  return longest;
}

}  // namespace

void MarkNoRoom(const FigureRun& run, std::vector<Claim>* claims) {
  // Each compared model's key limit (none: it has room at every length) and task.
  std::vector<std::pair<std::optional<int>, TaskSpec>> groups;
  for (const Group& g : run.summary.aggregate.groups) {
    if (std::optional<ResolvedGroup> r = ResolveGroup(run, g))
      groups.emplace_back(RecallKeyLimit(r->spec), r->experiment.task());
  }
  for (Claim& c : *claims) {
    const int read = LongestReading(c.how);
    if (read == 0) continue;
    // The models without room at that reading: key limit <= what they recall there (MQAR: its pairs).
    int lacking = 0, smallest = 0, largest = 0, items = 0;
    for (const auto& [limit, task] : groups) {
      const int recalled = RecalledItems(task, read);
      if (!limit || *limit > recalled) continue;
      if (lacking++ == 0 || *limit < smallest) {
        smallest = *limit;
        items = recalled;
      }
      largest = std::max(largest, *limit);
    }
    if (lacking == 0) continue;
    const std::string what = items == read ? absl::StrCat("the length read, ", read)
                                           : absl::StrCat("the ", items, " pairs read at ", read);
    absl::StrAppend(
        &c.measured,
        lacking == static_cast<int>(groups.size())
            ? absl::StrCat(" [no room: every model's key dimension (at most ", largest, ") is <= ", what, "]")
            : absl::StrCat(" [no room for some models: key dimension ", smallest, " <= ", what, "]"));
  }
}

double LookBehindScore(const models::LayerMap& map, int64_t paste_start, int64_t length) {
  const int64_t L = map.length;
  auto m = xt::adapt(map.map.data(), {L, L});  // (L, L)
  int64_t hits = 0, rows = 0;
  for (int64_t p = paste_start; p < std::min(paste_start + length, L); ++p) {
    int64_t best = -1;
    double best_v = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j <= p; ++j) {
      // The largest positive weight: a strongly negative entry (as linear attention has for the
      // most recent tokens) is not where the layer copies from.
      const double v = m(p, j);
      if (std::isfinite(v) && v > best_v) {
        best_v = v;
        best = j;
      }
    }
    ++rows;
    hits += best >= 0 && std::abs(best - (p - length)) <= 2 ? 1 : 0;
  }
  return rows == 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(hits) / rows;
}

double MapCorrelation(const models::LayerMap& a, const models::LayerMap& b) {
  const int64_t L = std::min(a.length, b.length);
  auto ma = xt::adapt(a.map.data(), {a.length, a.length});  // (La, La)
  auto mb = xt::adapt(b.map.data(), {b.length, b.length});  // (Lb, Lb)
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < L; ++i) {
    for (int64_t j = 0; j <= i; ++j) {
      const double x = std::abs(ma(i, j)), y = std::abs(mb(i, j));
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      sa += x;
      sb += y;
      saa += x * x;
      sbb += y * y;
      sab += x * y;
      ++n;
    }
  }
  if (n < 2) return std::numeric_limits<double>::quiet_NaN();
  const double cov = sab / n - (sa / n) * (sb / n);
  const double va = saa / n - (sa / n) * (sa / n), vb = sbb / n - (sb / n) * (sb / n);
  if (va <= 0 || vb <= 0) return std::numeric_limits<double>::quiet_NaN();
  return cov / std::sqrt(va * vb);
}

Stat FinalStat(const Group& group, int length, bool token) {
  const auto& m = token ? group.token : group.exact;
  auto it = m.find(length);
  return it == m.end() ? Stat{std::numeric_limits<double>::quiet_NaN(), 0, 0} : it->second;
}

std::map<uint64_t, double> FinalBySeed(const Group* group, int length, bool token) {
  std::map<uint64_t, double> out;
  if (group == nullptr) return out;
  for (const RunResult* r : group->runs) {
    const double v = token ? FinalToken(r->result, length) : FinalExact(r->result, length);
    if (std::isfinite(v)) out[r->point.seed] = v;
  }
  return out;
}

Band StatBand(const std::string& name, const std::vector<std::pair<double, Stat>>& points, int color,
              bool dotted) {
  Band b;
  b.name = name;
  b.color = color;
  b.dotted = dotted;
  for (const auto& [x, s] : points) {
    b.xs.push_back(x);
    b.mean.push_back(s.mean);
    b.lo.push_back(s.mean - s.se);
    b.hi.push_back(s.mean + s.se);
  }
  return b;
}

std::pair<std::string, int> TaskAndLength(const std::string& value_name) {
  size_t i = 0;
  while (i < value_name.size() && absl::ascii_isalpha(value_name[i])) ++i;
  int l = 0;
  if (i == 0 || !absl::SimpleAtoi(value_name.substr(i), &l)) return {"", 0};
  return {value_name.substr(0, i), l};
}

std::string Describe(const std::string& label, const Stat& s) {
  return absl::StrCat(label, " ", FormatStat(s), " (n=", s.n, ")");
}

namespace {

// Below this final per-token accuracy a stand-in teacher has not left the loss plateau.
constexpr double kTeacherLearnedToken = 0.5;

// The reason a stand-in teacher counts as not having learned its task, or nullopt.
std::optional<std::string> UnlearnedTeacher(const FigureRun& run) {
  if (!run.teacher.run.has_value() || run.teacher.run->result.final_size() == 0) return std::nullopt;
  const LengthAccuracy& a = run.teacher.run->result.final(0);
  if (a.token() >= kTeacherLearnedToken) return std::nullopt;
  return absl::StrFormat("the stand-in teacher did not learn its task: per-token@%d %.2f < %.2f", a.length(),
                         a.token(), kTeacherLearnedToken);
}

}  // namespace

void MarkCircularTeacher(const FigureRun& run, const std::vector<std::string>& mimetic_comparisons,
                         std::vector<Claim>* claims) {
  if (!run.teacher.from_mimetic_init) return;
  for (Claim& c : *claims) {
    const bool compares =
        std::any_of(mimetic_comparisons.begin(), mimetic_comparisons.end(),
                    [&](const std::string& suffix) { return absl::EndsWith(c.id, suffix); });
    if (!compares) continue;
    c.verdict = Verdict::kNotTested;
    absl::StrAppend(&c.measured, " [circular: the stand-in teacher starts from mimetic init]");
    absl::StrAppend(&c.how, "; not tested when the teacher starts from mimetic init (circular)");
  }
}

void MarkUnlearnedTeacher(const FigureRun& run, std::vector<Claim>* claims) {
  if (!run.teacher.run.has_value()) return;
  const std::optional<std::string> reason = UnlearnedTeacher(run);
  for (Claim& c : *claims) {
    absl::StrAppend(&c.how, absl::StrFormat("; not tested when the stand-in teacher did not learn its task "
                                            "(final per-token accuracy < %.1f at its first eval length)",
                                            kTeacherLearnedToken));
    if (!reason.has_value()) continue;
    c.verdict = Verdict::kNotTested;
    absl::StrAppend(&c.measured, " [", *reason, "]");
  }
}

}  // namespace mimetic::experiments
