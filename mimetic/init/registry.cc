#include "mimetic/init/registry.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/status.h"

namespace mimetic::init {
namespace {

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Shortest text that reads back as the same double, so ranges and defaults print as written.
  for (int precision = 6; precision <= 17; ++precision) {
    char buffer[40];
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, v);
    if (std::strtod(buffer, nullptr) == v) return buffer;
  }
  return absl::StrCat(v);
}

std::string ValueText(const ParamSpec& p, double v) {
  if (p.type == ParamSpec::Type::kBool) return v != 0 ? "true" : "false";
  return Number(v);
}

bool ValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

const ParamSpec* FindParam(const TransformInfo& info, const std::string& name) {
  for (const ParamSpec& p : info.params) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string ParamList(const TransformInfo& info) {
  if (info.params.empty()) return "it takes none";
  std::vector<std::string> parts;
  for (const ParamSpec& p : info.params) {
    parts.push_back(
        absl::StrCat(p.name, " (", p.Expected(), ", default ", ValueText(p, p.default_value), ")"));
  }
  return absl::StrCat("its parameters: ", absl::StrJoin(parts, "; "));
}

// Whether `v` is a value of `p`'s type and range; the error names both.
absl::Status CheckValue(const TransformInfo& info, const ParamSpec& p, double v, const std::string& shown) {
  bool ok = p.range.Contains(v);
  if (p.type == ParamSpec::Type::kInt) ok = ok && v == std::floor(v);
  if (p.type == ParamSpec::Type::kBool) ok = v == 0 || v == 1;
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("init transform '", info.name, "': ", p.name, " = ", shown, "; expected ", p.Expected()));
}

}  // namespace

bool Interval::Contains(double v) const {
  if (std::isnan(v)) return false;
  const bool above = min_open ? v > min : v >= min;
  const bool below = max_open ? v < max : v <= max;
  return above && below;
}

std::string Interval::ToString() const {
  return absl::StrCat(min_open || std::isinf(min) ? "(" : "[", Number(min), ", ", Number(max),
                      max_open || std::isinf(max) ? ")" : "]");
}

ParamSpec ParamSpec::Double(std::string name, double default_value, Interval range, std::string doc) {
  return ParamSpec{std::move(name), Type::kDouble, default_value, range, std::move(doc)};
}

ParamSpec ParamSpec::Int(std::string name, int64_t default_value, Interval range, std::string doc) {
  return ParamSpec{std::move(name), Type::kInt, static_cast<double>(default_value), range, std::move(doc)};
}

ParamSpec ParamSpec::Bool(std::string name, bool default_value, std::string doc) {
  return ParamSpec{std::move(name), Type::kBool, default_value ? 1.0 : 0.0, Interval::Closed(0, 1),
                   std::move(doc)};
}

std::string ParamSpec::Expected() const {
  switch (type) {
    case Type::kDouble:
      return absl::StrCat("a number in ", range.ToString());
    case Type::kInt:
      return absl::StrCat("an integer in ", range.ToString());
    case Type::kBool:
      return "true or false";
  }
  return "";
}

double Params::Double(const std::string& name) const {
  auto it = values_.find(name);
  MIMETIC_CHECK(it != values_.end()) << "init transform parameter '" << name
                                     << "' was not declared in its TransformInfo::params";
  return it->second;
}

int64_t Params::Int(const std::string& name) const { return static_cast<int64_t>(Double(name)); }

bool Params::Bool(const std::string& name) const { return Double(name) != 0; }

absl::Status TransformRegistry::Register(TransformInfo info) {
  if (!ValidName(info.name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("init transform name '", info.name, "': expected letters, digits and '_', not empty"));
  }
  if (static_cast<bool>(info.make_layer) == static_cast<bool>(info.make_model)) {
    return absl::InvalidArgumentError(
        absl::StrCat("init transform '", info.name, "': expected exactly one of make_layer and make_model"));
  }
  for (size_t i = 0; i < info.params.size(); ++i) {
    const ParamSpec& p = info.params[i];
    if (!ValidName(p.name)) {
      return absl::InvalidArgumentError(absl::StrCat("init transform '", info.name, "': parameter name '",
                                                     p.name, "' is not an identifier"));
    }
    for (size_t j = 0; j < i; ++j) {
      if (info.params[j].name == p.name) {
        return absl::InvalidArgumentError(
            absl::StrCat("init transform '", info.name, "': parameter '", p.name, "' is declared twice"));
      }
    }
    RETURN_IF_ERROR(
        CheckValue(info, p, p.default_value, absl::StrCat(ValueText(p, p.default_value), " (default)")));
  }
  if (transforms_.count(info.name) > 0) {
    return absl::AlreadyExistsError(
        absl::StrCat("init transform '", info.name, "' is registered twice (two libraries claim the name)"));
  }
  std::string name = info.name;
  transforms_.emplace(std::move(name), std::move(info));
  return absl::OkStatus();
}

const TransformInfo* TransformRegistry::Find(const std::string& name) const {
  auto it = transforms_.find(name);
  return it == transforms_.end() ? nullptr : &it->second;
}

std::vector<std::string> TransformRegistry::Names() const {
  std::vector<std::string> names;
  for (const auto& [name, info] : transforms_) names.push_back(name);
  return names;
}

absl::StatusOr<const TransformInfo*> TransformRegistry::Lookup(const std::string& name) const {
  if (const TransformInfo* info = Find(name)) return info;
  return absl::InvalidArgumentError(absl::StrCat("no init transform is registered as '", name,
                                                 "'; registered: ", absl::StrJoin(Names(), ", ")));
}

absl::StatusOr<Params> TransformRegistry::ParseParams(const std::string& name,
                                                      const std::map<std::string, std::string>& text) const {
  ASSIGN_OR_RETURN(const TransformInfo* info, Lookup(name));
  std::map<std::string, double> values;
  for (const auto& [key, raw] : text) {
    const ParamSpec* p = FindParam(*info, key);
    if (p == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("init transform '", name, "' has no parameter '", key, "'; ", ParamList(*info)));
    }
    const std::string shown = absl::StrCat("\"", raw, "\"");
    const absl::string_view stripped = absl::StripAsciiWhitespace(raw);
    double v = 0;
    bool parsed = false;
    if (p->type == ParamSpec::Type::kBool) {
      bool b = false;
      parsed = absl::SimpleAtob(stripped, &b);
      v = b ? 1 : 0;
    } else {
      parsed = absl::SimpleAtod(stripped, &v);
    }
    if (!parsed) {
      return absl::InvalidArgumentError(
          absl::StrCat("init transform '", name, "': ", key, " = ", shown, "; expected ", p->Expected()));
    }
    RETURN_IF_ERROR(CheckValue(*info, *p, v, shown));  // shown as written
    values[key] = v;
  }
  return CheckParams(name, values);
}

absl::StatusOr<Params> TransformRegistry::CheckParams(const std::string& name,
                                                      const std::map<std::string, double>& values) const {
  ASSIGN_OR_RETURN(const TransformInfo* info, Lookup(name));
  std::map<std::string, double> checked;
  for (const ParamSpec& p : info->params) checked[p.name] = p.default_value;
  for (const auto& [key, v] : values) {
    const ParamSpec* p = FindParam(*info, key);
    if (p == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("init transform '", name, "' has no parameter '", key, "'; ", ParamList(*info)));
    }
    RETURN_IF_ERROR(CheckValue(*info, *p, v, ValueText(*p, v)));
    checked[key] = v;
  }
  return Params(std::move(checked));
}

absl::StatusOr<Transform> TransformRegistry::Build(const std::string& name, const Params& params,
                                                   const std::vector<int>& layers) const {
  ASSIGN_OR_RETURN(const TransformInfo* info, Lookup(name));
  // Params may come from another registry or be hand-made: check them again against this one.
  ASSIGN_OR_RETURN(Params checked, CheckParams(name, params.values()));
  if (info->make_model) {
    if (!layers.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("init transform '", name, "' applies to the whole model; remove `layers`"));
    }
    return info->make_model(checked);
  }
  ASSIGN_OR_RETURN(LayerTransform t, info->make_layer(checked));
  if (!layers.empty()) return OnLayers(layers, std::move(t));
  switch (info->default_layers) {
    case DefaultLayers::kEveryMambaLayer:
      return OnMambaLayers(std::move(t));
    case DefaultLayers::kEveryLayer:
      return OnLayersWhere([](int, const LayerSpec&) { return true; }, std::move(t), "all");
    case DefaultLayers::kNone:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("init transform '", name, "' needs `layers`: the layer indices it applies to"));
}

std::string TransformRegistry::Describe() const {
  std::string out;
  for (const auto& [name, info] : transforms_) {
    absl::StrAppend(&out, name, info.make_model ? " (whole model)" : " (per layer)", ": ", info.doc, "\n");
    for (const ParamSpec& p : info.params) {
      absl::StrAppend(&out, "  ", p.name, ": ", p.Expected(), ", default ", ValueText(p, p.default_value),
                      ". ", p.doc, "\n");
    }
  }
  return out;
}

TransformRegistry& GlobalTransformRegistry() {
  // Constructed on first use, so registrations from any translation unit's static initialisers
  // find it ready; never destroyed, so none outlives it.
  static TransformRegistry* registry = new TransformRegistry();
  return *registry;
}

namespace internal {

bool RegisterOrDie(const std::function<TransformInfo()>& make_info) {
  MIMETIC_CHECK_OK(GlobalTransformRegistry().Register(make_info()));
  return true;
}

}  // namespace internal
}  // namespace mimetic::init
