// Where does mimetic init's 2x length generalisation appear? A target the paper does not have: copy,
// default vs mimetic init, over model sizes (width, state size N, depth) and training lengths L, each run
// read at L and 2L. Mimetic Mamba 2 is linear attention with key dimension min(N, D) (config/room.h), so
// copying 2L tokens exactly needs that dimension to be several times 2L; this grid measures how many, and
// is what the `cpu` presets of the paper's figures are calibrated from. The picture: exact@2L against
// width, one panel per (N, depth), a line per init and L. The claims: the smallest size at which mimetic
// reaches exact@2L >= 0.5, and whether the default init ever does. A size counts only when its mean over
// seeds also exceeds its 95% t interval (claims.h): exact@2L at these sizes is a lottery between seeds (one
// seed 0.3, the next 0), and one lucky seed must not place the threshold.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "mimetic/experiments/config/room.h"
#include "mimetic/experiments/figures/figure_common.h"
#include "mimetic/models/spec.h"

namespace mimetic::experiments {
namespace {

// One group's model size and training length, read from its resolved point experiment (so a preset may
// sweep whole models or single fields alike).
struct Size {
  int width = 0, state = 0, depth = 0, length = 0;
  std::optional<int> key;  // the mimetic mechanism's key dimension (room.h)
};

std::optional<Size> SizeOf(const FigureRun& run, const Group& g) {
  const std::optional<ResolvedGroup> r = ResolveGroup(run, g);
  if (!r || r->spec.layers().empty()) return std::nullopt;
  const models::ModelSpec& spec = r->spec;
  const models::LayerSpec& first = spec.layers(0);
  Size s;
  s.width = spec.d_model();
  s.depth = spec.layers_size();
  s.state = first.has_mamba2() ? first.mamba2().d_state() : first.has_mamba1() ? first.mamba1().d_state() : 0;
  s.length = TrainLength(r->experiment.task());
  s.key = MinKeyDimension(spec);
  return s;
}

std::string SizeName(const Size& s) {
  return absl::StrCat("width ", s.width, ", N ", s.state, ", ", s.depth, " layers (key ", s.key.value_or(0),
                      ")");
}

// One reading: a group's size with its final exact accuracy at L and 2L (2L missing: not read).
struct Reading {
  std::string variant;
  Size size;
  Stat at_l, at_2l;
};

std::vector<Reading> Readings(const FigureRun& run) {
  std::vector<Reading> out;
  for (const Group& g : run.summary.aggregate.groups) {
    const std::optional<Size> s = SizeOf(run, g);
    if (!s || s->length <= 0 || !g.exact.count(s->length) || !g.exact.count(2 * s->length)) continue;
    out.push_back(Reading{g.variant, *s, g.exact.at(s->length), g.exact.at(2 * s->length)});
  }
  return out;
}

absl::StatusOr<Figure> Draw(const FigureRun& run) {
  const std::vector<Reading> readings = Readings(run);
  if (readings.empty()) return absl::FailedPreconditionError("no run was read at both L and 2L");
  // (N, depth) -> (variant, L) -> width -> exact@2L
  std::map<std::pair<int, int>, std::map<std::pair<std::string, int>, std::map<double, Stat>>> panels;
  for (const Reading& r : readings) {
    panels[{r.size.state, r.size.depth}][{r.variant, r.size.length}][r.size.width] = r.at_2l;
  }
  Figure fig;
  fig.title = "Copy at twice the training length against model size: default vs mimetic init";
  fig.columns = std::min<int>(2, panels.size());
  for (const auto& [nd, lines] : panels) {
    CurvePanel p{absl::StrCat("N ", nd.first, ", ", nd.second, " layers"), "width D", "exact accuracy at 2L"};
    p.y_min = 0;
    p.y_max = 1;
    int color = 0;
    for (const auto& [vl, by_width] : lines) {
      p.bands.push_back(StatBand(absl::StrCat(vl.first, ", L ", vl.second), by_width, color++));
    }
    fig.panels.push_back(std::move(p));
  }
  return fig;
}

// "width 128, N 128, 4 layers (key 128) at L 20: exact@2L 0.31 ± 0.05 (n=2)".
std::string Describe(const Reading& r) {
  return absl::StrCat(SizeName(r.size), " at L ", r.size.length, ": exact@2L ", FormatStat(r.at_2l),
                      " (n=", r.at_2l.n, ")");
}

// Mean exact@2L above `level` and above its t interval over seeds (claims.h ClearlyPositive).
bool Reaches(const Reading& r, double level) { return ClearlyPositive(r.at_2l, level); }

// The smallest size (by key dimension, then width, depth) per training length at which `variant`'s
// exact@2L reaches 0.5 over seeds; the lengths with none are listed as such.
std::string SmallestPerLength(const std::vector<Reading>& readings, const std::string& variant,
                              bool* any_at_half) {
  std::map<int, std::vector<const Reading*>> by_length;
  for (const Reading& r : readings) {
    if (r.variant == variant) by_length[r.size.length].push_back(&r);
  }
  std::vector<std::string> parts;
  for (auto& [length, rs] : by_length) {
    std::sort(rs.begin(), rs.end(), [](const Reading* a, const Reading* b) {
      return std::make_tuple(a->size.key.value_or(0), a->size.width, a->size.depth) <
             std::make_tuple(b->size.key.value_or(0), b->size.width, b->size.depth);
    });
    auto it = std::find_if(rs.begin(), rs.end(), [](const Reading* r) { return Reaches(*r, 0.5); });
    if (it != rs.end()) {
      *any_at_half = true;
      parts.push_back(absl::StrCat("L ", length, ": smallest ", Describe(**it)));
    } else {
      const Reading* best = *std::max_element(rs.begin(), rs.end(),
                                              [](auto* a, auto* b) { return a->at_2l.mean < b->at_2l.mean; });
      parts.push_back(absl::StrCat("L ", length, ": none reaches 0.5; best ", Describe(*best)));
    }
  }
  return absl::StrJoin(parts, "; ");
}

absl::StatusOr<std::vector<Claim>> Claims(const FigureRun& run) {
  const std::vector<Reading> readings = Readings(run);
  if (readings.empty()) return absl::FailedPreconditionError("no run was read at both L and 2L");
  bool mimetic_fits = false, mimetic_above_floor = false, default_fits = false, default_half = false;
  // "The default never copies 2L" is evidence only at sizes where mimetic does (FailureIsEvidence): a
  // failure both inits share says the size is too small, not that the default is worse.
  bool default_fails_where_mimetic_copies = false;
  for (const Reading& r : readings) {
    const bool fits = r.at_l.mean >= 0.9;
    if (r.variant == "mimetic") {
      mimetic_fits = mimetic_fits || fits;
      mimetic_above_floor = mimetic_above_floor || Reaches(r, 0.05);
    } else if (r.variant == "default") {
      default_fits = default_fits || fits;
      default_half = default_half || (fits && r.at_2l.mean >= 0.5);
      for (const Reading& o : readings) {
        if (o.variant == "mimetic" && SizeName(o.size) == SizeName(r.size) &&
            o.size.length == r.size.length && fits && r.at_2l.mean < 0.5 && Reaches(o, 0.5) &&
            FailureIsEvidence(r.at_2l, o.at_2l, 0.5)) {
          default_fails_where_mimetic_copies = true;
        }
      }
    }
  }
  bool mimetic_half = false, unused = false;
  const std::string mimetic = SmallestPerLength(readings, "mimetic", &mimetic_half);
  const std::string def = SmallestPerLength(readings, "default", &unused);
  std::vector<Claim> claims;
  claims.push_back(
      Claim{"scaling.mimetic_2x",
            "Mimetic init copies strings of twice the training length once the model is large enough",
            mimetic, !mimetic_fits ? Verdict::kNotTested : Graded(mimetic_half, mimetic_above_floor),
            "reproduced: at some size mimetic's mean exact@2L exceeds 0.5 and its t interval over seeds (the "
            "smallest "
            "such size is named per L, ordered by key dimension, width, depth); partly: exceeds 0.05 and its "
            "t interval "
            "at some size; not tested when mimetic fits L (exact@L >= 0.9) at no size"});
  claims.push_back(Claim{
      "scaling.default_never_2x", "The default init does not copy twice its training length at any size here",
      def,
      default_half                         ? Verdict::kNotReproduced
      : default_fails_where_mimetic_copies ? Verdict::kReproduced
                                           : Verdict::kNotTested,
      "reproduced: at every size where the default fits L (exact@L >= 0.9) its exact@2L < 0.5, and at one "
      "of them mimetic copies 2L (exact@2L above 0.5 and its t interval, clearly above the default's); not "
      "reproduced when one reaches 0.5; not tested when the default fits L at no size or mimetic copies 2L "
      "at none of its sizes (a failure both inits share)"});
  return claims;
}

}  // namespace

FigureDef MakeScalingFigure() {
  return FigureDef{"scaling", "Where 2x length generalisation appears: copy against model size (Mamba 2)",
                   Draw, Claims, /*paper_figure=*/false};
}

}  // namespace mimetic::experiments
