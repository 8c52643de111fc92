// The `inspect_init` example, a researcher's first check of an init: build a model, apply a
// composed init, and look at it without training: per-parameter statistics and each layer's
// average attention mask (paper §2 Eq. 8: the decay exp(A (S_i - S_j)) of a Mamba layer, averaged
// over channels or heads and over a batch of random token rows; ≈ 1 everywhere for a layer that
// can look all the way back, as mimetic init's A ≈ 1 and Δ ≈ 1 intend, paper §3).
//
//   tools/bazel run //examples:inspect_init
//   tools/bazel run //examples:inspect_init -- --length=24 --variant='init { named { name: "mimetic_a" } }'
//   tools/bazel run //examples:inspect_init -- --variant='init { mimetic {} layers: 0 }'
//       --model='vocab_size: 12 d_model: 32 n_layer: 2 default_layer { mamba1 {} }'   (on one line)
#ifndef EXAMPLES_INSPECT_INIT_H_
#define EXAMPLES_INSPECT_INIT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/init/transform.h"

namespace examples {

// 8 Mamba 2 layers; mimetic init on layer index 3 and only A ≈ 1 with a smaller c on index 5.
inline constexpr char kInspectModel[] =
    "vocab_size: 12 d_model: 16 n_layer: 8 default_layer { mamba2 { d_state: 8 headdim: 8 chunk_size: 8 } }";
inline constexpr char kInspectVariant[] = R"pb(
  name: "inspect"
  init {
    mimetic {}
    layers: 3
  }
  init {
    named {
      name: "mimetic_a"
      params { key: "c" value: "2" }
    }
    layers: 5
  }
)pb";

struct ParamStats {
  std::string path;
  std::string shape;  // "(16, 16)"
  double mean = 0, std = 0, min = 0, max = 0;
  double zero_fraction = 0;
};

struct InspectReport {
  mimetic::init::Model model;
  std::string transform;  // the composed transform's name
  std::string digest;     // init/model_digest.h, to compare two builds
  std::vector<ParamStats> params;
  int64_t length = 0;
  std::vector<std::string> kinds;          // per layer: mamba1, mamba2, attention, ...
  std::vector<std::vector<double>> masks;  // per layer: (length, length), zero above the diagonal
  std::vector<double> mean_masks;          // per layer: mean over j <= i
};

// Builds `model` (ModelSpec text) with `variant`'s init (Variant text, as in a config) from `seed`
// and measures it on `examples` random token rows of `length` tokens.
absl::StatusOr<InspectReport> InspectInit(const std::string& model, const std::string& variant, uint64_t seed,
                                          int64_t length, int64_t examples = 4);

// A table of the statistics, then each layer's mask as characters from ' ' (0) to '@' (1).
void PrintReport(const InspectReport& report, std::ostream& out);

}  // namespace examples

#endif  // EXAMPLES_INSPECT_INIT_H_
