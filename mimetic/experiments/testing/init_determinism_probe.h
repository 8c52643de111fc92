// For init_determinism_test: one experiment config whose variants use built-in and named init
// transforms, and the digest (init/model_digest.h) of each variant's initial model at two seeds.
// The test computes these in a binary that links extra transforms and compares them with
// init_determinism_probe's output, a binary that links only the built-in ones.
//
//   ASSIGN_OR_RETURN(std::string lines, InitProbeDigests());   // "<variant> seed<k> <digest>\n"...
#ifndef MIMETIC_EXPERIMENTS_INIT_DETERMINISM_PROBE_H_
#define MIMETIC_EXPERIMENTS_INIT_DETERMINISM_PROBE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/init/model_digest.h"

namespace mimetic::experiments {

inline constexpr char kInitProbeConfig[] = R"pb(
  name: "init_determinism"
  model {
    vocab_size: 12
    d_model: 16
    n_layer: 4
    default_layer { mamba2 { d_state: 8 headdim: 8 } }
    layer_overrides {
      index: 1
      layer { mamba1 { d_state: 4 } }
    }
  }
  variants { name: "default" }
  variants {
    name: "mimetic"
    init { mimetic {} }
  }
  variants {
    name: "named"
    init {
      named {
        name: "mimetic_delta"
        params { key: "w_delta_scale" value: "0.5" }
      }
      layers: [ 0, 1 ]
    }
    init {
      named {
        name: "mimetic_a"
        params { key: "c" value: "4" }
      }
      layers: 3
    }
  }
  variants {
    name: "gamma"
    init { gamma { gamma: 1 } }
    init {
      named { name: "mimetic_bc" }
      layers: 2
    }
  }
  task { copy { vocab: 8 min_len: 2 max_len: 6 context_len: 32 } }
  eval { lengths: [ 6 ] }
  seeds: [ 1, 2 ]
)pb";

inline absl::StatusOr<std::string> InitProbeDigests() {
  ASSIGN_OR_RETURN(Experiment e, ParseExperiment(kInitProbeConfig));
  RETURN_IF_ERROR(ValidateExperiment(&e));
  std::string out;
  for (const Variant& v : e.variants()) {
    ASSIGN_OR_RETURN(init::Transform t, MakeTransform(v));
    for (uint64_t seed : e.seeds()) {
      ASSIGN_OR_RETURN(init::Model m, init::MakeModel(VariantModel(e, v), t, core::Key::FromSeed(seed)));
      ASSIGN_OR_RETURN(uint64_t digest, init::ModelDigest(m));
      absl::StrAppend(&out, v.name(), " seed", seed, " ", init::DigestHex(digest), "\n");
    }
  }
  return out;
}

}  // namespace mimetic::experiments

#endif  // MIMETIC_EXPERIMENTS_INIT_DETERMINISM_PROBE_H_
