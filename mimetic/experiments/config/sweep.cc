#include "mimetic/experiments/config/sweep.h"

#include <cstdint>
#include <map>
#include <ostream>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/field_mask.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/field_mask_util.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/names.h"

namespace mimetic::experiments {
namespace {

bool AppliesTo(const SweepAxis& axis, const std::string& variant) {
  if (axis.variants().empty()) return true;
  for (const std::string& v : axis.variants()) {
    if (v == variant) return true;
  }
  return false;
}

std::string ValueName(const SweepAxis& axis, int i) {
  return axis.value_names_size() > 0 ? axis.value_names(i) : axis.values(i);
}

// Every field of `e` but its seeds and sweep, which a point replaces. A whole copy would copy every seed
// for every point, quadratic in the seed count over a grid (1.6 MB per point with 200,000 seeds).
Experiment WithoutSeedsAndSweep(const Experiment& e) {
  google::protobuf::FieldMask mask;
  const google::protobuf::Descriptor* d = Experiment::descriptor();
  for (int i = 0; i < d->field_count(); ++i) {
    const int number = d->field(i)->number();
    if (number != Experiment::kSeedsFieldNumber && number != Experiment::kSweepFieldNumber) {
      mask.add_paths(d->field(i)->name());
    }
  }
  Experiment out;
  google::protobuf::util::FieldMaskUtil::MergeMessageTo(
      e, mask, google::protobuf::util::FieldMaskUtil::MergeOptions(), &out);
  return out;
}

// A sweep error: "config: <field>: <what>".
absl::Status SweepError(const std::string& field, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrCat("config: ", field, ": ", what));
}

// Whether some variant varies along both axes.
bool ShareAVariant(const SweepAxis& a, const SweepAxis& b) {
  if (a.variants().empty() || b.variants().empty()) return true;
  for (const std::string& v : a.variants()) {
    if (AppliesTo(b, v)) return true;
  }
  return false;
}

// `field` with a leading "variants[<name>]" written as "variants[<position>]", so that two spellings of one
// field compare equal.
std::string CanonicalField(const Experiment& e, const std::string& field) {
  const std::string prefix = "variants[";
  const size_t close = field.find(']');
  if (field.rfind(prefix, 0) != 0 || close == std::string::npos) return field;
  const std::string index = field.substr(prefix.size(), close - prefix.size());
  for (int i = 0; i < e.variants_size(); ++i) {
    if (e.variants(i).name() == index) return absl::StrCat(prefix, i, field.substr(close));
  }
  return field;
}

// Each field is set by at most one of the axes a variant varies along (otherwise the later axis wins at
// every point, and the earlier one's values, listed in directories and summaries, are never used), and by
// no axis at all when every grid point sets it itself.
absl::Status CheckAxisFields(const Experiment& e) {
  for (int a = 0; a < e.sweep().axes_size(); ++a) {
    const SweepAxis& axis = e.sweep().axes(a);
    for (int k = 0; k < axis.fields_size(); ++k) {
      const std::string at = absl::StrCat("sweep.axes[", a, "].fields[", k, "]");
      const std::string field = CanonicalField(e, axis.fields(k));
      const std::string top = field.substr(0, field.find_first_of(".["));
      if (top == "seeds" || top == "name" || top == "output_dir" || top == "sweep") {
        return SweepError(at,
                          absl::StrCat("\"", axis.fields(k),
                                       "\" is set by every grid point itself (its one seed, the "
                                       "experiment's name and output_dir, no sweep), so the axis would be "
                                       "overridden or would move points out of the run directory; list "
                                       "seeds in `seeds`, or run another experiment"));
      }
      for (int b = 0; b < a; ++b) {
        if (!ShareAVariant(axis, e.sweep().axes(b))) continue;
        for (const std::string& earlier : e.sweep().axes(b).fields()) {
          if (CanonicalField(e, earlier) != field) continue;
          return SweepError(
              at, absl::StrCat("\"", axis.fields(k), "\" is also set by sweep.axes[", b, "] (\"", earlier,
                               "\"); a point would take only axes[", a, "]'s value and axes[", b,
                               "]'s values would never be used; sweep each field in one axis"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// No two values of an axis are one value written twice ("4" and "04", "1e-3" and "0.001"): compared as the
// experiment they make, i.e. parsed as the fields' types, since such points would be trained twice under
// two names. A value that does not apply is left to the point's own validation, which names it.
absl::Status CheckAxisValuesDiffer(const Experiment& e, int a) {
  const SweepAxis& axis = e.sweep().axes(a);
  std::map<std::string, int> seen;  // the experiment a value makes -> that value's index
  for (int i = 0; i < axis.values_size(); ++i) {
    Experiment set = e;
    bool applies = true;
    for (const std::string& f : axis.fields()) {
      applies = applies && ApplyOverride(absl::StrCat(f, "=", axis.values(i)), &set).ok();
    }
    if (!applies) continue;
    std::string key;
    google::protobuf::TextFormat::PrintToString(set, &key);
    const auto [it, inserted] = seen.emplace(key, i);
    if (!inserted) {
      return SweepError(absl::StrCat("sweep.axes[", a, "].values"),
                        absl::StrCat("'", axis.values(it->second), "' and '", axis.values(i),
                                     "' are the same value of ", absl::StrJoin(axis.fields(), ", "),
                                     "; each point would be trained twice under two names"));
    }
  }
  return absl::OkStatus();
}

// The sweep's own fields: non-empty, names usable as directory names, no duplicates.
absl::Status ValidateSweep(const Experiment& e) {
  std::set<std::string> variants;
  for (int i = 0; i < e.variants_size(); ++i) {
    const std::string& name = e.variants(i).name();
    RETURN_IF_ERROR(CheckSafeName(absl::StrCat("variants[", i, "].name"), name));
    if (!variants.insert(name).second) {
      return SweepError(absl::StrCat("variants[", i, "].name"),
                        absl::StrCat("\"", name,
                                     "\" is used by two variants; they would "
                                     "share one run directory"));
    }
  }
  if (!e.seeds().empty()) RETURN_IF_ERROR(CheckDistinctSeeds(e.seeds()));
  std::set<std::string> axis_names;
  for (int a = 0; a < e.sweep().axes_size(); ++a) {
    const SweepAxis& axis = e.sweep().axes(a);
    const std::string at = absl::StrCat("sweep.axes[", a, "]");
    if (axis.fields().empty())
      return SweepError(at + ".fields", "[]; expected at least one field path, e.g. \"train.lr\"");
    if (axis.values().empty()) return SweepError(at + ".values", "[]; expected at least one value");
    // Before the axis's default name is taken from a path's last part: a path that is no field would be
    // reported as a bad name the config never gave.
    for (int k = 0; k < axis.fields_size(); ++k) {
      if (absl::Status s = CheckFieldPath(e, axis.fields(k)); !s.ok()) {
        return SweepError(absl::StrCat(at, ".fields[", k, "]"),
                          absl::StrCat(Quoted(axis.fields(k)), " is not a field path: ", s.message()));
      }
    }
    const std::string name = AxisName(axis);
    RETURN_IF_ERROR(CheckSafeName(at + ".name", name));
    if (!axis_names.insert(name).second) {
      return SweepError(at + ".name",
                        absl::StrCat("'", name, "' names two axes; give one of them another `name`"));
    }
    if (axis.value_names_size() > 0 && axis.value_names_size() != axis.values_size()) {
      return SweepError(at + ".value_names",
                        absl::StrCat(axis.value_names_size(), " names for ", axis.values_size(),
                                     " values; expected one name per value or none"));
    }
    std::set<std::string> seen;
    for (int i = 0; i < axis.values_size(); ++i) {
      const std::string vn = ValueName(axis, i);
      // A value that cannot be a directory needs a value_names entry that can.
      if (absl::Status bad =
              CheckSafeName(at + (axis.value_names_size() > 0 ? ".value_names" : ".values"), vn);
          !bad.ok()) {
        return axis.value_names_size() > 0 ? bad
                                           : absl::InvalidArgumentError(absl::StrCat(
                                                 bad.message(), "; or give the axis value_names"));
      }
      if (!seen.insert(vn).second)
        return SweepError(at + ".values", absl::StrCat("'", vn, "' appears twice"));
    }
    RETURN_IF_ERROR(CheckAxisValuesDiffer(e, a));
    for (const std::string& v : axis.variants()) {
      if (variants.count(v) == 0) {
        return SweepError(at + ".variants", absl::StrCat("no variant is named '", v,
                                                         "'; variants are: ", absl::StrJoin(variants, ", ")));
      }
    }
  }
  RETURN_IF_ERROR(CheckAxisFields(e));
  if (e.sweep().select_length() != 0) {
    bool found = false;
    for (int len : e.eval().lengths()) found = found || len == e.sweep().select_length();
    if (!found) {
      return SweepError("sweep.select_length",
                        absl::StrCat(e.sweep().select_length(), " is not one of eval.lengths"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string AxisName(const SweepAxis& axis) {
  if (!axis.name().empty()) return axis.name();
  if (axis.fields().empty()) return "";
  std::vector<std::string> parts = absl::StrSplit(axis.fields(0), '.');
  return parts.back();
}

bool IsLearningRateAxis(const SweepAxis& axis) {
  for (const std::string& f : axis.fields()) {
    if (f == "train.lr") return true;
  }
  return false;
}

GridSize CountGrid(const Experiment& e) {
  auto times = [](int64_t a, int64_t b) {
    int64_t out = 0;
    return __builtin_mul_overflow(a, b, &out) ? INT64_MAX : out;
  };
  GridSize size;
  for (const Variant& v : e.variants()) {
    int64_t configurations = 1;
    for (const SweepAxis& axis : e.sweep().axes()) {
      if (AppliesTo(axis, v.name())) configurations = times(configurations, axis.values_size());
    }
    if (__builtin_add_overflow(size.configurations, configurations, &size.configurations)) {
      size.configurations = INT64_MAX;
    }
  }
  size.points = times(size.configurations, e.seeds_size());
  return size;
}

absl::StatusOr<std::vector<GridPoint>> ExpandGrid(const Experiment& e, std::ostream* progress) {
  // Counted first: a grid that cannot run is refused before seconds and gigabytes go into listing it.
  const GridSize size = CountGrid(e);
  if (size.points > kMaxGridPoints) {
    return SweepError(
        "sweep", absl::StrCat(size.points, " grid points (", e.seeds_size(), " seeds x ", size.configurations,
                              " configurations of variants and axis values); at most ", kMaxGridPoints,
                              " can run, each a training run with its own directory; split the sweep "
                              "into several experiments (fewer seeds or axis values in each)"));
  }
  const bool announce =
      size.points >= kAnnouncedGridPoints || size.configurations >= kConfigurationsPerProgressLine;
  if (progress != nullptr && announce) {
    *progress << "sweep: listing " << size.points << " grid points and checking " << size.configurations
              << " configurations before anything runs" << std::endl;
  }
  RETURN_IF_ERROR(ValidateSweep(e));
  std::vector<GridPoint> grid;
  grid.reserve(static_cast<size_t>(size.points));
  for (uint64_t seed : e.seeds()) {
    for (const Variant& v : e.variants()) {
      std::vector<int> axes;  // the axes that apply to this variant
      for (int a = 0; a < e.sweep().axes_size(); ++a) {
        if (AppliesTo(e.sweep().axes(a), v.name())) axes.push_back(a);
      }
      // Odometer over the applicable axes, the last axis fastest.
      std::vector<int> at(axes.size(), 0);
      while (true) {
        GridPoint p;
        p.index = static_cast<int>(grid.size());
        p.variant = v.name();
        p.seed = seed;
        std::vector<std::string> dir_parts;
        for (size_t k = 0; k < axes.size(); ++k) {
          const SweepAxis& axis = e.sweep().axes(axes[k]);
          p.axes.push_back({AxisName(axis), ValueName(axis, at[k])});
          dir_parts.push_back(absl::StrCat(AxisName(axis), "=", ValueName(axis, at[k])));
          for (const std::string& f : axis.fields())
            p.overrides.push_back(absl::StrCat(f, "=", axis.values(at[k])));
        }
        p.dir = absl::StrCat("points/", v.name(), "/",
                             dir_parts.empty() ? "" : absl::StrJoin(dir_parts, ",") + "/", "seed", seed);
        grid.push_back(std::move(p));
        int k = static_cast<int>(axes.size()) - 1;
        while (k >= 0 && ++at[k] == e.sweep().axes(axes[k]).values_size()) at[k--] = 0;
        if (k < 0) break;
      }
    }
  }
  // Validate each distinct configuration once (seeds do not change what is valid).
  std::set<std::string> checked;
  for (const GridPoint& p : grid) {
    const std::string key = absl::StrCat(p.variant, "|", absl::StrJoin(p.overrides, "|"));
    if (!checked.insert(key).second) continue;
    absl::StatusOr<Experiment> one = PointExperiment(e, p);
    if (!one.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("sweep point ", p.dir, ": ", one.status().message()));
    }
    const int64_t done = static_cast<int64_t>(checked.size());
    if (progress != nullptr && announce && done % kConfigurationsPerProgressLine == 0) {
      *progress << "sweep: checked " << done << " of " << size.configurations << " configurations"
                << std::endl;
    }
  }
  return grid;
}

absl::StatusOr<Experiment> PointExperiment(const Experiment& e, const GridPoint& point) {
  Experiment one = WithoutSeedsAndSweep(e);
  for (const std::string& o : point.overrides) RETURN_IF_ERROR(ApplyOverride(o, &one));
  int position = -1;  // the variant's in the config
  for (int i = 0; i < one.variants_size(); ++i) {
    if (one.variants(i).name() == point.variant) position = i;
  }
  if (position < 0)
    return absl::NotFoundError(absl::StrCat("sweep point: no variant named '", point.variant, "'"));
  Variant variant = one.variants(position);
  one.clear_variants();
  *one.add_variants() = std::move(variant);
  one.add_seeds(point.seed);
  if (absl::Status s = ValidateExperiment(&one); !s.ok()) {
    // The point holds its variant at position 0; a message about it must name the config's position, the
    // one the user can find and --set. (The teacher's own variants, "config: teacher: ...", keep theirs.)
    constexpr absl::string_view kOwn = "config: variants[0]";
    if (position == 0 || !absl::StartsWith(s.message(), kOwn)) return s;
    return absl::Status(s.code(),
                        absl::StrCat("config: variants[", position, "]", s.message().substr(kOwn.size())));
  }
  return one;
}

}  // namespace mimetic::experiments
