#include "mimetic/experiments/config/field_ranges.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <limits>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/experiment.pb.h"
#include "mimetic/init/registry.h"

namespace mimetic::experiments {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using ::testing::HasSubstr;

// Every numeric field reachable from Experiment, each message type once.
std::vector<const FieldDescriptor*> NumericFields() {
  std::vector<const FieldDescriptor*> out;
  std::set<const Descriptor*> seen;
  std::function<void(const Descriptor*)> walk = [&](const Descriptor* d) {
    if (!seen.insert(d).second) return;
    for (int i = 0; i < d->field_count(); ++i) {
      const FieldDescriptor* f = d->field(i);
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        walk(f->message_type());
      } else if (f->cpp_type() != FieldDescriptor::CPPTYPE_BOOL &&
                 f->cpp_type() != FieldDescriptor::CPPTYPE_STRING &&
                 f->cpp_type() != FieldDescriptor::CPPTYPE_ENUM) {
        out.push_back(f);
      }
    }
  };
  walk(Experiment::descriptor());
  return out;
}

TEST(FieldRangesTest, EveryNumericFieldOfBothProtosHasARangeAndTheTableNothingElse) {
  std::set<std::string> covered;
  for (const FieldDescriptor* f : NumericFields()) {
    const FieldRange* r = FindRange(f);
    EXPECT_NE(r, nullptr) << f->full_name() << " has no entry in field_ranges.cc";
    if (r == nullptr) continue;
    covered.insert(r->field);
    // The proto's default is valid (fields whose default is 0 but that need a value are required).
    if (!f->is_repeated() && f->has_default_value()) {
      double d = 0;
      switch (f->cpp_type()) {
        case FieldDescriptor::CPPTYPE_INT32:
          d = f->default_value_int32();
          break;
        case FieldDescriptor::CPPTYPE_INT64:
          d = static_cast<double>(f->default_value_int64());
          break;
        case FieldDescriptor::CPPTYPE_UINT32:
          d = f->default_value_uint32();
          break;
        case FieldDescriptor::CPPTYPE_UINT64:
          d = static_cast<double>(f->default_value_uint64());
          break;
        case FieldDescriptor::CPPTYPE_FLOAT:
          d = f->default_value_float();
          break;
        default:
          d = f->default_value_double();
          break;
      }
      EXPECT_TRUE(InRange(*r, d)) << f->full_name() << " default " << d;
    }
  }
  for (const FieldRange& r : FieldRanges())
    EXPECT_EQ(covered.count(r.field), 1u) << r.field << " is no field";
}

// A built-in init kind's fields (`mimetic { c: 4 }`) are the parameters of the registered transform of its
// name (init_config.h), which checks them too: their range here, and so in docs/config_ranges.md, is the
// registry's. (They were two tables: the docs said c in [0, 1000] while c = 0 and c = 500 were refused.)
TEST(FieldRangesTest, AnInitKindsFieldsTakeTheirRegisteredTransformsRanges) {
  const google::protobuf::OneofDescriptor* kinds = InitTransform::descriptor()->FindOneofByName("kind");
  int checked = 0;
  for (int i = 0; i < kinds->field_count(); ++i) {
    const init::TransformInfo* info = init::GlobalTransformRegistry().Find(kinds->field(i)->name());
    if (info == nullptr) continue;  // `named` and the kinds that read a checkpoint
    for (const init::ParamSpec& p : info->params) {
      if (p.type == init::ParamSpec::Type::kBool) continue;
      const FieldDescriptor* f = kinds->field(i)->message_type()->FindFieldByName(p.name);
      ASSERT_NE(f, nullptr) << info->name << "." << p.name;
      const FieldRange* r = FindRange(f);
      ASSERT_NE(r, nullptr) << f->full_name();
      EXPECT_EQ(RangeText(*r, false), absl::StrCat("a finite number in ", p.range.ToString()))
          << f->full_name() << " vs the registry's " << info->name << "." << p.name;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4);  // mimetic: c, w_delta_scale, delta_bias; gamma: gamma
}

TEST(FieldRangesTest, TheErrorNamesThePathTheValueAndTheRange) {
  Experiment e;
  e.mutable_train()->set_eps(std::numeric_limits<double>::infinity());
  absl::Status s = CheckFieldRanges(e);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("train.eps = inf; expected a finite number in (0, 1]"));
  Experiment v;
  v.add_variants()->add_init()->mutable_mimetic()->set_c(-1);
  EXPECT_THAT(CheckFieldRanges(v).message(), HasSubstr("variants[0].init[0].mimetic.c = -1"));
  Experiment lengths;
  lengths.mutable_eval()->add_lengths(5);
  lengths.mutable_eval()->add_lengths(-3);
  EXPECT_THAT(CheckFieldRanges(lengths).message(), HasSubstr("eval.lengths[1] = -3; expected an integer"));
  Experiment model;
  model.mutable_model()->set_vocab_size(12);
  model.mutable_model()->set_d_model(16);
  model.mutable_model()->mutable_default_layer()->mutable_mamba1()->set_dt_min(std::nan(""));
  EXPECT_THAT(CheckFieldRanges(model).message(), HasSubstr("model.default_layer.mamba1.dt_min = nan"));
  Experiment fine;
  fine.add_seeds(std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(CheckFieldRanges(fine).ok());
}

TEST(FieldRangesTest, TheDocumentationIsTheTable) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  std::ifstream in(std::string(srcdir) + "/mimetic/docs/config_ranges.md");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), RangesMarkdown())
      << "regenerate: tools/bazel run //mimetic/experiments:print_ranges > docs/config_ranges.md";
}

}  // namespace
}  // namespace mimetic::experiments
