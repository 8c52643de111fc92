// A registry of init transforms by name, with typed, range-checked parameters, so that experiment
// configs (`init { named { name: "mimetic_a" params { key: "c" value: "4" } } layers: 3 }`) and
// `--set` reach any registered transform without editing the runner. The built-in transforms
// (mimetic, mimetic_a, mimetic_delta, mimetic_bc, mimetic_conv, gamma) register themselves in
// builtin_transforms.cc; a user's transform registers the same way from its own cc_library:
//
//   // my_init.cc, in a cc_library with alwayslink = 1 (else the linker drops the registration):
//   MIMETIC_REGISTER_INIT_TRANSFORM(MyInit, [] {
//     TransformInfo info;
//     info.name = "my_init";
//     info.doc = "what it does, and the paper it comes from";
//     info.params = {ParamSpec::Double("scale", 1.0, Interval::LeftOpen(0, 10), "row norm")};
//     info.make_layer = [](const Params& p) -> absl::StatusOr<LayerTransform> {
//       return MyInit(p.Double("scale"));
//     };
//     return info;
//   });
//
// Or, without static initialisation: MIMETIC_CHECK_OK(GlobalTransformRegistry().Register(info))
// at the start of main. docs/init_transforms.md explains the transform contract and the registry.
//
// Determinism: the registry only maps names to factories. A built transform draws its random
// numbers from the key it is given, folded with its own name and the layer index (transform.h), so
// which other transforms are linked in, and in which order they registered, never changes a result.
#ifndef MIMETIC_INIT_REGISTRY_H_
#define MIMETIC_INIT_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "mimetic/init/transform.h"

namespace mimetic::init {

// The values a parameter may take: [min, max], either end open, either end infinite.
struct Interval {
  double min = 0, max = 0;
  bool min_open = false, max_open = false;
  static Interval Closed(double min, double max) { return {min, max, false, false}; }
  // (min, max]
  static Interval LeftOpen(double min, double max) { return {min, max, true, false}; }
  bool Contains(double v) const;
  // "[0, 1]", "(0, inf)".
  std::string ToString() const;
};

// One typed parameter of a registered transform. Values are held as doubles (exact for bools and
// for integers up to 2^53).
struct ParamSpec {
  enum class Type { kDouble, kInt, kBool };
  std::string name;
  Type type = Type::kDouble;
  double default_value = 0;
  Interval range;
  std::string doc;

  static ParamSpec Double(std::string name, double default_value, Interval range, std::string doc);
  static ParamSpec Int(std::string name, int64_t default_value, Interval range, std::string doc);
  static ParamSpec Bool(std::string name, bool default_value, std::string doc);
  // "a number in (0, 100]", "an integer in [1, 8]", "true or false".
  std::string Expected() const;
};

// The checked parameter values a factory receives: every declared parameter, given or default.
class Params {
 public:
  Params() = default;
  explicit Params(std::map<std::string, double> values) : values_(std::move(values)) {}
  // The value of a declared parameter; aborts naming `name` when the transform did not declare it
  // (a programming error that the transform's own test catches).
  double Double(const std::string& name) const;
  int64_t Int(const std::string& name) const;
  bool Bool(const std::string& name) const;
  const std::map<std::string, double>& values() const { return values_; }

 private:
  std::map<std::string, double> values_;
};

// Which layers a layer transform applies to when the config lists none.
enum class DefaultLayers { kEveryMambaLayer, kEveryLayer, kNone };

struct TransformInfo {
  std::string name;  // letters, digits and '_'
  std::string doc;   // one line: what it does and where it comes from
  std::vector<ParamSpec> params;
  // Exactly one of the two factories. A layer transform runs on the config's `layers` (OnLayers,
  // which folds the layer index into its key); with no layers given, on `default_layers`.
  std::function<absl::StatusOr<LayerTransform>(const Params&)> make_layer;
  DefaultLayers default_layers = DefaultLayers::kEveryMambaLayer;
  // A whole-model transform; a config that gives it `layers` is refused.
  std::function<absl::StatusOr<Transform>(const Params&)> make_model;
};

class TransformRegistry {
 public:
  // InvalidArgument for a malformed info (no or a bad name, no factory or both, a parameter named
  // twice, a default outside its range); AlreadyExists for a name that is taken.
  absl::Status Register(TransformInfo info);
  // nullptr when `name` is not registered.
  const TransformInfo* Find(const std::string& name) const;
  // Sorted, so listings do not depend on the order registrations ran in.
  std::vector<std::string> Names() const;

  // Parameters from text ("4", "1e-3", "true"): each converted by its declared type and checked
  // against its range; defaults for the rest. Errors: an unknown transform (listing the known
  // names), an unknown parameter (listing the transform's parameters), a value of the wrong type
  // or out of range (naming what is expected).
  absl::StatusOr<Params> ParseParams(const std::string& name,
                                     const std::map<std::string, std::string>& text) const;
  // The same checks for values already typed (a config's own message fields).
  absl::StatusOr<Params> CheckParams(const std::string& name,
                                     const std::map<std::string, double>& values) const;
  // The transform `name` with checked `params`, on `layers` (empty: its default layers).
  absl::StatusOr<Transform> Build(const std::string& name, const Params& params,
                                  const std::vector<int>& layers) const;

  // One paragraph per transform: name, doc, parameters with type, range and default.
  std::string Describe() const;

 private:
  absl::StatusOr<const TransformInfo*> Lookup(const std::string& name) const;
  std::map<std::string, TransformInfo> transforms_;
};

// The process's registry, holding the built-in transforms and whatever linked-in libraries
// registered. Registration happens during static initialisation, before main; reading it is
// thread-safe afterwards.
TransformRegistry& GlobalTransformRegistry();

namespace internal {
// Registers make_info() in the global registry; aborts with the Status on a malformed info or a
// name registered twice (two libraries claiming one name is a link-time mistake). Returns true.
bool RegisterOrDie(const std::function<TransformInfo()>& make_info);
}  // namespace internal

}  // namespace mimetic::init

// At namespace scope in a .cc file of a cc_library with alwayslink = 1. `ident` makes the
// registration's variable name unique; `make_info` is a callable returning a TransformInfo.
#define MIMETIC_REGISTER_INIT_TRANSFORM(ident, make_info)                        \
  [[maybe_unused]] static const bool mimetic_init_transform_registered_##ident = \
      ::mimetic::init::internal::RegisterOrDie(make_info)

#endif  // MIMETIC_INIT_REGISTRY_H_
