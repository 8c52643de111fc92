#include "examples/inspect_init.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "mimetic/core/random.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/init/model_digest.h"
#include "mimetic/models/attention_maps.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"

namespace examples {
namespace {

using mimetic::core::Tensor;

// Text-format errors as a string, instead of protobuf's log lines.
struct ParseErrors : google::protobuf::io::ErrorCollector {
  void AddError(int line, int column, const std::string& message) override {
    absl::StrAppend(&text, text.empty() ? "" : "; ", "line ", line + 1, " column ", column + 1, ": ",
                    message);
  }
  std::string text;
};

absl::StatusOr<std::vector<double>> HostDoubles(const Tensor& t) {
  if (t.dtype() == mimetic::core::DType::kF64) return t.ToVector<double>();
  ASSIGN_OR_RETURN(std::vector<float> v, t.ToVector<float>());
  return std::vector<double>(v.begin(), v.end());
}

ParamStats Stats(const std::string& path, const Tensor& t, const std::vector<double>& v) {
  ParamStats s;
  s.path = path;
  s.shape = mimetic::core::ShapeString(t.shape());
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sum = 0, zeros = 0;
  for (double x : v) sum += x, zeros += x == 0;
  s.mean = sum / v.size();
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(sq / v.size());
  s.zero_fraction = zeros / v.size();
  return s;
}

}  // namespace

absl::StatusOr<InspectReport> InspectInit(const std::string& model, const std::string& variant, uint64_t seed,
                                          int64_t length, int64_t examples) {
  if (length < 1 || examples < 1) {
    return absl::InvalidArgumentError("inspect_init: length and examples must be >= 1");
  }
  ASSIGN_OR_RETURN(mimetic::models::ModelSpec spec, mimetic::models::ParseModelSpec(model));
  mimetic::experiments::Variant v;
  google::protobuf::TextFormat::Parser parser;
  ParseErrors errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(variant, &v)) {
    return absl::InvalidArgumentError(
        absl::StrCat("inspect_init: cannot parse the variant (", errors.text,
                     "); expected Variant text, e.g. init { mimetic {} layers: 3 }"));
  }
  // The same path an experiment takes: registry lookup and parameter checks, then the transforms.
  ASSIGN_OR_RETURN(mimetic::init::Transform t, mimetic::experiments::MakeTransform(v));
  InspectReport r;
  r.transform = t.name();
  ASSIGN_OR_RETURN(r.model, mimetic::init::MakeModel(spec, t, mimetic::core::Key::FromSeed(seed)));
  ASSIGN_OR_RETURN(uint64_t digest, mimetic::init::ModelDigest(r.model));
  r.digest = mimetic::init::DigestHex(digest);
  for (size_t i = 0; i < r.model.params.size(); ++i) {
    const Tensor& leaf = r.model.params.Leaves()[i];
    ASSIGN_OR_RETURN(std::vector<double> values, HostDoubles(leaf));
    r.params.push_back(Stats(r.model.params.Paths()[i], leaf, values));
  }
  // Token rows from their own key, so a different init never changes the inputs.
  const int32_t vocab = static_cast<int32_t>(r.model.spec.vocab_size());
  ASSIGN_OR_RETURN(
      Tensor tokens,
      mimetic::core::RandInt(mimetic::core::FoldIn(mimetic::core::Key::FromSeed(seed), "inspect_init/tokens"),
                             {examples, length}, 0, vocab));  // (B, L)
  std::vector<mimetic::models::LayerInternals> internals;
  Tensor logits = mimetic::models::Apply(r.model.params, r.model.spec, tokens, &internals);
  RETURN_IF_ERROR(logits.status());
  r.length = length;
  for (int l = 0; l < r.model.spec.layers_size(); ++l) {
    r.kinds.push_back(mimetic::models::MixerKind(r.model.spec.layers(l)));
    std::vector<double> mean(length * length, 0.0);  // (L, L)
    for (int64_t b = 0; b < examples; ++b) {
      ASSIGN_OR_RETURN(mimetic::models::LayerMap m,
                       mimetic::models::ComputeLayerMap(r.model.spec, internals[l], b));
      for (size_t k = 0; k < mean.size(); ++k) mean[k] += m.mask[k] / examples;
    }
    r.mean_masks.push_back(mimetic::models::MeanLowerTriangle(mean, length));
    r.masks.push_back(std::move(mean));
  }
  return r;
}

void PrintReport(const InspectReport& r, std::ostream& out) {
  out << "init: " << r.transform << "\nmodel digest: " << r.digest << "\n\n";
  char line[256];
  std::snprintf(line, sizeof(line), "%-34s %-12s %10s %10s %10s %10s %6s\n", "parameter", "shape", "mean",
                "std", "min", "max", "zeros");
  out << line;
  for (const ParamStats& s : r.params) {
    std::snprintf(line, sizeof(line), "%-34s %-12s %10.4g %10.4g %10.4g %10.4g %5.0f%%\n", s.path.c_str(),
                  s.shape.c_str(), s.mean, s.std, s.min, s.max, 100 * s.zero_fraction);
    out << line;
  }
  static constexpr char kShades[] = " .:-=+*#%@";  // 0 .. 1 in tenths
  out << "\naverage attention mask at init (row i: query token, column j <= i: earlier token; ' ' = 0, '@' = "
         "1)\n";
  for (size_t l = 0; l < r.masks.size(); ++l) {
    std::snprintf(line, sizeof(line), "\nlayer %zu (%s): mean over j <= i = %.3f", l, r.kinds[l].c_str(),
                  r.mean_masks[l]);
    out << line;
    // A reparameterization lives in the spec, not in the tree's values (docs/architecture.md).
    const mimetic::models::LayerSpec& ls = r.model.spec.layers(static_cast<int>(l));
    const double scale = ls.has_mamba1() ? ls.mamba1().a_log_scale() : ls.mamba2().a_log_scale();
    if ((ls.has_mamba1() || ls.has_mamba2()) && scale != 1.0) out << "; A = -exp(" << scale << " A_log)";
    out << "\n";
    for (int64_t i = 0; i < r.length; ++i) {
      std::string row = "  |";
      for (int64_t j = 0; j <= i; ++j) {
        const double m = std::clamp(r.masks[l][i * r.length + j], 0.0, 1.0);
        row += kShades[static_cast<int>(std::lround(m * 9))];
      }
      out << row << "\n";
    }
  }
}

}  // namespace examples
