// Three more registered transforms that draw random numbers, named to sort before, among and after
// the built-in ones, linked into init_determinism_test only (alwayslink). Were the registry to leak
// registration order, position or count into keys, the built-in transforms' results would change.
#include "mimetic/core/random.h"
#include "mimetic/init/registry.h"
#include "mimetic/init/tree_edit.h"

namespace mimetic::init {
namespace {

TransformInfo NoiseInfo(const std::string& name) {
  TransformInfo info;
  info.name = name;
  info.doc = "test only: A_log rows scaled by 1 + N(0, 0.1^2)";
  info.make_layer = [name](const Params&) -> absl::StatusOr<LayerTransform> {
    return LayerTransform(name, [name](const Model& m, int layer, Key key) -> absl::StatusOr<Model> {
      Model out = m;
      const std::string path = MixerPath(layer, "A_log");
      ASSIGN_OR_RETURN(core::Tensor a_log, m.params.Get(path));
      ASSIGN_OR_RETURN(std::vector<double> noise,
                       core::NormalVectorF64(core::FoldIn(key, name), a_log.numel()));
      ASSIGN_OR_RETURN(out.params, EditRows(m.params, path, [&](RowEditor& w) {
                         for (int64_t r = 0; r < w.rows(); ++r)
                           RETURN_IF_ERROR(w.Scale({r, 1}, 1 + 0.1 * noise[r]));
                         return absl::OkStatus();
                       }));
      return out;
    });
  };
  return info;
}

}  // namespace

MIMETIC_REGISTER_INIT_TRANSFORM(AaaNoise, [] { return NoiseInfo("aaa_noise"); });
MIMETIC_REGISTER_INIT_TRANSFORM(MimeticZzNoise, [] { return NoiseInfo("mimetic_zz"); });
MIMETIC_REGISTER_INIT_TRANSFORM(ZzzNoise, [] { return NoiseInfo("zzz_noise"); });

}  // namespace mimetic::init
