#include "mimetic/init/transform.h"

#include "absl/strings/str_cat.h"
#include "mimetic/models/lm.h"
#include "mimetic/models/spec.h"

namespace mimetic::init {

absl::Status CheckLayer(const Model& model, int layer) {
  if (layer < 0 || layer >= model.spec.layers_size()) {
    return absl::InvalidArgumentError(absl::StrCat("layer index ", layer, " is outside the model's ",
                                                   model.spec.layers_size(), " layers [0, ",
                                                   model.spec.layers_size(), ")"));
  }
  return absl::OkStatus();
}

std::string MixerPath(int layer, const std::string& name) { return absl::StrCat("layers/", layer, "/mixer/", name); }

Transform DefaultInit() {
  return Transform("default_init", [](const Model& m, Key key) -> absl::StatusOr<Model> {
    ASSIGN_OR_RETURN(ModelSpec spec, models::ResolveSpec(m.spec));
    ASSIGN_OR_RETURN(ParamTree params, models::Init(key, spec));
    return Model{spec, params};
  });
}

Transform Compose(std::vector<Transform> transforms) {
  std::string name = "compose(";
  for (size_t i = 0; i < transforms.size(); ++i) absl::StrAppend(&name, i ? ", " : "", transforms[i].name());
  name += ")";
  return Transform(name, [transforms](const Model& m, Key key) -> absl::StatusOr<Model> {
    Model cur = m;
    for (size_t i = 0; i < transforms.size(); ++i) {
      absl::StatusOr<Model> next = transforms[i](cur, key);
      if (!next.ok()) {
        return absl::Status(next.status().code(),
                            absl::StrCat(transforms[i].name(), ": ", next.status().message()));
      }
      cur = *std::move(next);
    }
    return cur;
  });
}

Transform OnLayers(std::vector<int> layers, LayerTransform t) {
  std::string name = absl::StrCat("on_layers([");
  for (size_t i = 0; i < layers.size(); ++i) absl::StrAppend(&name, i ? "," : "", layers[i]);
  absl::StrAppend(&name, "], ", t.name(), ")");
  return Transform(name, [layers, t](const Model& m, Key key) -> absl::StatusOr<Model> {
    Model cur = m;
    for (int layer : layers) {
      RETURN_IF_ERROR(CheckLayer(cur, layer));
      absl::StatusOr<Model> next = t(cur, layer, core::FoldIn(key, static_cast<uint32_t>(layer)));
      if (!next.ok()) {
        return absl::Status(next.status().code(),
                            absl::StrCat(t.name(), " on layer ", layer, ": ", next.status().message()));
      }
      cur = *std::move(next);
    }
    return cur;
  });
}

Transform OnLayersWhere(std::function<bool(int, const LayerSpec&)> select, LayerTransform t, std::string what) {
  return Transform(absl::StrCat("on_layers(", what, ", ", t.name(), ")"),
                   [select, t](const Model& m, Key key) -> absl::StatusOr<Model> {
                     std::vector<int> layers;
                     for (int i = 0; i < m.spec.layers_size(); ++i) {
                       if (select(i, m.spec.layers(i))) layers.push_back(i);
                     }
                     return OnLayers(layers, t)(m, key);
                   });
}

Transform OnMambaLayers(LayerTransform t) {
  return OnLayersWhere(
      [](int, const LayerSpec& l) {
        return l.mixer_case() == LayerSpec::kMamba1 || l.mixer_case() == LayerSpec::kMamba2;
      },
      std::move(t), "mamba");
}

LayerTransform ComposeLayer(std::vector<LayerTransform> transforms) {
  std::string name = "compose(";
  for (size_t i = 0; i < transforms.size(); ++i) absl::StrAppend(&name, i ? ", " : "", transforms[i].name());
  name += ")";
  return LayerTransform(name, [transforms](const Model& m, int layer, Key key) -> absl::StatusOr<Model> {
    Model cur = m;
    for (size_t i = 0; i < transforms.size(); ++i) {
      absl::StatusOr<Model> next = transforms[i](cur, layer, key);
      if (!next.ok()) {
        return absl::Status(next.status().code(),
                            absl::StrCat(transforms[i].name(), ": ", next.status().message()));
      }
      cur = *std::move(next);
    }
    return cur;
  });
}

absl::StatusOr<Model> MakeModel(const ModelSpec& spec, const Transform& t, Key key) {
  ASSIGN_OR_RETURN(ModelSpec resolved, models::ResolveSpec(spec));
  return t(Model{resolved, ParamTree()}, key);
}

}  // namespace mimetic::init
