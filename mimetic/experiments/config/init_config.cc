#include "mimetic/experiments/config/init_config.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "mimetic/core/status.h"
#include "mimetic/experiments/config/checkpoint_init.h"

namespace mimetic::experiments {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// The fields set in a built-in kind's message (MimeticInit, GammaInit) as typed parameter values;
// unset fields take the registry's defaults.
absl::StatusOr<std::map<std::string, double>> FieldValues(const Message& m) {
  std::map<std::string, double> values;
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const FieldDescriptor*> set;
  r->ListFields(m, &set);
  for (const FieldDescriptor* f : set) {
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_DOUBLE:
        values[f->name()] = r->GetDouble(m, f);
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        values[f->name()] = r->GetFloat(m, f);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        values[f->name()] = r->GetBool(m, f) ? 1 : 0;
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        values[f->name()] = r->GetInt32(m, f);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        values[f->name()] = static_cast<double>(r->GetInt64(m, f));
        break;
      default:
        return absl::InternalError(absl::StrCat(m.GetDescriptor()->name(), ".", f->name(),
                                                ": only number and bool fields map to init parameters"));
    }
  }
  return values;
}

}  // namespace

absl::StatusOr<init::Transform> MakeInitTransform(const InitTransform& t,
                                                  const init::TransformRegistry& registry) {
  const std::vector<int> layers(t.layers().begin(), t.layers().end());
  switch (t.kind_case()) {
    case InitTransform::kPretrained:
    case InitTransform::kTransplant:
    case InitTransform::kTransferFromAttention:
      return MakeCheckpointTransform(t);
    case InitTransform::kNamed: {
      const std::map<std::string, std::string> text(t.named().params().begin(), t.named().params().end());
      ASSIGN_OR_RETURN(init::Params params, registry.ParseParams(t.named().name(), text));
      return registry.Build(t.named().name(), params, layers);
    }
    case InitTransform::KIND_NOT_SET:
      return absl::InvalidArgumentError(
          absl::StrCat("an init entry with no kind; expected mimetic {...}, gamma {...}, pretrained {...}, "
                       "transplant {...}, "
                       "transfer_from_attention {...} or named { name: \"...\" } with a registered name: ",
                       absl::StrJoin(registry.Names(), ", ")));
    default: {
      // A built-in kind: the oneof field's name is the registered name, its fields the parameters.
      const google::protobuf::Reflection* r = t.GetReflection();
      const FieldDescriptor* f = r->GetOneofFieldDescriptor(t, t.GetDescriptor()->FindOneofByName("kind"));
      ASSIGN_OR_RETURN(auto values, FieldValues(r->GetMessage(t, f)));
      ASSIGN_OR_RETURN(init::Params params, registry.CheckParams(f->name(), values));
      return registry.Build(f->name(), params, layers);
    }
  }
}

}  // namespace mimetic::experiments
