#include "mimetic/experiments/config/init_config.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/config/config.h"
#include "mimetic/experiments/config/sweep.h"
#include "mimetic/init/model_digest.h"
#include "mimetic/init/registry.h"

namespace mimetic::experiments {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kBase[] = R"pb(
  name: "t"
  model {
    vocab_size: 12
    d_model: 16
    n_layer: 3
    default_layer { mamba2 { d_state: 8 headdim: 8 } }
  }
  variants { name: "default" }
  variants {
    name: "custom"
    init {
      named {
        name: "mimetic_a"
        params { key: "c" value: "4" }
      }
      layers: 1
    }
  }
  task { copy { vocab: 8 min_len: 2 max_len: 6 context_len: 32 } }
  train { steps: 10 batch_size: 4 }
  eval { lengths: [ 6, 12 ] }
  seeds: [ 1 ]
)pb";

absl::Status Check(const std::vector<std::string>& overrides) {
  Experiment e = ParseExperiment(kBase).value();
  for (const std::string& o : overrides) RETURN_IF_ERROR(ApplyOverride(o, &e));
  return ValidateExperiment(&e);
}

uint64_t Digest(const std::string& init_text) {
  Experiment e = ParseExperiment(kBase).value();
  Variant v;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(init_text, &v)) << init_text;
  absl::StatusOr<init::Transform> t = MakeTransform(v);
  EXPECT_TRUE(t.ok()) << t.status();
  if (!t.ok()) return 0;
  absl::StatusOr<init::Model> m = init::MakeModel(e.model(), *t, core::Key::FromSeed(1));
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? init::ModelDigest(*m).value() : 0;
}

TEST(InitConfigTest, TheNamedFormIsTheSameTransformAsTheBuiltInField) {
  EXPECT_EQ(Digest(R"pb(init {
                          named {
                            name: "mimetic"
                            params { key: "c" value: "4" }
                          }
                          layers: 1
                        })pb"),
            Digest(R"pb(init {
                          mimetic { c: 4 }
                          layers: 1
                        })pb"));
  EXPECT_EQ(Digest(R"pb(init {
                          named {
                            name: "gamma"
                            params { key: "gamma" value: "1" }
                          }
                        })pb"),
            Digest(R"pb(init { gamma { gamma: 1 } })pb"));
  EXPECT_NE(Digest(R"pb(init {
                          mimetic { c: 4 }
                          layers: 1
                        })pb"),
            Digest(R"pb(init { mimetic { c: 4 } })pb"));
  EXPECT_TRUE(Check({}).ok()) << Check({});
}

// The built-in config messages are the registry's transforms: every field is a parameter of the
// same name and default, so `mimetic {}` and `named { name: "mimetic" }` agree.
TEST(InitConfigTest, BuiltInMessagesMatchTheRegisteredParameters) {
  for (const google::protobuf::Descriptor* d : {MimeticInit::descriptor(), GammaInit::descriptor()}) {
    const google::protobuf::FieldDescriptor* kind =
        InitTransform::descriptor()->FindFieldByName(d == MimeticInit::descriptor() ? "mimetic" : "gamma");
    ASSERT_NE(kind, nullptr);
    const init::TransformInfo* info = init::GlobalTransformRegistry().Find(kind->name());
    ASSERT_NE(info, nullptr) << kind->name();
    ASSERT_EQ(static_cast<size_t>(d->field_count()), info->params.size()) << kind->name();
    for (int i = 0; i < d->field_count(); ++i) {
      const google::protobuf::FieldDescriptor* f = d->field(i);
      const init::ParamSpec& p = info->params[i];
      EXPECT_EQ(f->name(), p.name);
      const double proto_default = f->cpp_type() == google::protobuf::FieldDescriptor::CPPTYPE_BOOL
                                       ? f->default_value_bool()
                                       : f->default_value_double();
      EXPECT_EQ(proto_default, p.default_value) << kind->name() << "." << f->name();
    }
  }
}

TEST(InitConfigTest, UnknownNamesAndParametersAreRefusedBeforeTraining) {
  EXPECT_THAT(Check({"variants[custom].init[0].named.name=mimetik"}).message(),
              AllOf(HasSubstr("init[0].named.name = \"mimetik\"; expected a registered init transform"),
                    HasSubstr("gamma, mimetic, mimetic_a, mimetic_bc, mimetic_conv, mimetic_delta")));
  EXPECT_THAT(Check({"variants[custom].init[0].named.params[cc]=4"}).message(),
              AllOf(HasSubstr("'mimetic_a' has no parameter 'cc'"),
                    HasSubstr("c (a number in (0, 100], default 8)")));
  EXPECT_THAT(Check({"variants[custom].init[0].named.params[c]=-1"}).message(),
              HasSubstr("init[0]: init transform 'mimetic_a': c = \"-1\"; expected a number in (0, 100]"));
  // The field's range is the registry's (field_ranges.cc), checked first, so the message names the field.
  EXPECT_THAT(Check({"variants[custom].init=[{ mimetic { c: 0 } }]"}).message(),
              HasSubstr("init[0].mimetic.c = 0; expected a finite number in (0, 100]"));
  EXPECT_THAT(Check({"variants[custom].init=[{ gamma { gamma: 1 } layers: 0 }]"}).message(),
              HasSubstr("applies to the whole model; remove `layers`"));
  EXPECT_THAT(Check({"variants[custom].init=[{ layers: 0 }]"}).message(),
              AllOf(HasSubstr("no kind"), HasSubstr("named { name: \"...\" }")));
}

TEST(InitConfigTest, SetReachesNamedParameters) {
  Experiment e = ParseExperiment(kBase).value();
  ASSERT_TRUE(ApplyOverride("variants[custom].init[0].named.params[c]=2", &e).ok());
  ASSERT_TRUE(ApplyOverride("variants[custom].init[0].named.params[reparameterize]=false", &e).ok());
  const NamedInit& n = e.variants(1).init(0).named();
  EXPECT_EQ(n.params().size(), 2u);
  EXPECT_EQ(n.params().at("c"), "2");
  EXPECT_EQ(n.params().at("reparameterize"), "false");
  // An existing entry is also reachable as a message, by its key.
  ASSERT_TRUE(ApplyOverride("variants[custom].init[0].named.params[c].value=\"3\"", &e).ok());
  EXPECT_EQ(e.variants(1).init(0).named().params().at("c"), "3");
  EXPECT_TRUE(ValidateExperiment(&e).ok());
}

TEST(InitConfigTest, ASweepAxisCanVaryANamedParameter) {
  Experiment e = ParseExperiment(kBase).value();
  SweepAxis* axis = e.mutable_sweep()->add_axes();
  axis->set_name("c");
  axis->add_fields("variants[custom].init[0].named.params[c]");
  axis->add_values("2");
  axis->add_values("200");
  axis->add_variants("custom");
  absl::Status s = ExpandGrid(e).status();
  EXPECT_THAT(s.message(), AllOf(HasSubstr("c=200"), HasSubstr("expected a number in (0, 100]")));
  e.mutable_sweep()->mutable_axes(0)->set_values(1, "8");
  absl::StatusOr<std::vector<GridPoint>> grid = ExpandGrid(e);
  ASSERT_TRUE(grid.ok()) << grid.status();
  EXPECT_EQ(grid->size(), 3u);  // default, custom c=2, custom c=8
}

}  // namespace
}  // namespace mimetic::experiments
