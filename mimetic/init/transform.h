// Init transforms: values that take a model (spec + parameter tree) and a key and return a new
// model, or a Status naming what did not fit. They compose:
//
//   Transform t = Compose({DefaultInit(), OnLayers({3}, Mimetic())});
//   ASSIGN_OR_RETURN(Model m, t(Model{spec, {}}, Key::FromSeed(0)));
//
// A transform that changes a layer's parameterization (A = -exp(-c A_log)) changes the layer's spec
// in the returned model: nothing hides in flags on tensors (docs/architecture.md, "Init transforms are
// values").
#ifndef MIMETIC_INIT_TRANSFORM_H_
#define MIMETIC_INIT_TRANSFORM_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/core/key.h"
#include "mimetic/core/param_tree.h"
#include "mimetic/models/model_spec.pb.h"

namespace mimetic::init {

using core::Key;
using core::ParamTree;
using core::Tensor;
using models::LayerSpec;
using models::ModelSpec;

struct Model {
  ModelSpec spec;  // resolved (every layer listed)
  ParamTree params;
};

// A whole-model transform.
class Transform {
 public:
  using Fn = std::function<absl::StatusOr<Model>(const Model&, Key)>;
  Transform(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  absl::StatusOr<Model> operator()(const Model& model, Key key) const { return fn_(model, key); }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  Fn fn_;
};

// A transform of one layer (index) of a model; OnLayers turns it into a Transform.
class LayerTransform {
 public:
  using Fn = std::function<absl::StatusOr<Model>(const Model&, int layer, Key)>;
  LayerTransform(std::string name, Fn fn) : name_(std::move(name)), fn_(std::move(fn)) {}
  absl::StatusOr<Model> operator()(const Model& model, int layer, Key key) const {
    return fn_(model, layer, key);
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  Fn fn_;
};

// mamba_ssm's default init of the model's spec (models::Init); ignores the incoming tree.
Transform DefaultInit();
// Applies transforms in order, each with the same key: a transform that draws random numbers
// derives its own keys (FoldIn(key, "<its name>") then the path), so Compose({DefaultInit(), t})
// keeps every value t does not touch bit-identical to DefaultInit() alone.
Transform Compose(std::vector<Transform> transforms);
// Applies `t` to each listed layer (FoldIn(key, layer) as its key). An index outside the model is
// an InvalidArgument naming it and the layer count.
Transform OnLayers(std::vector<int> layers, LayerTransform t);
// Applies `t` to every layer for which `select(index, layer_spec)` is true.
Transform OnLayersWhere(std::function<bool(int, const LayerSpec&)> select, LayerTransform t,
                        std::string what);
// Every Mamba 1 or Mamba 2 layer.
Transform OnMambaLayers(LayerTransform t);
// Runs layer transforms in order on the same layer.
LayerTransform ComposeLayer(std::vector<LayerTransform> transforms);

// Runs `t` starting from an empty tree for `spec` (so `t` normally begins with DefaultInit()).
absl::StatusOr<Model> MakeModel(const ModelSpec& spec, const Transform& t, Key key);

// Helpers for transforms: "layers/3/mixer/" etc.; a Status when `layer` is out of range.
absl::Status CheckLayer(const Model& model, int layer);
std::string MixerPath(int layer, const std::string& name);

}  // namespace mimetic::init

#endif  // MIMETIC_INIT_TRANSFORM_H_
