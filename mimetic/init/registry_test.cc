#include "mimetic/init/registry.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/random.h"
#include "mimetic/init/gamma.h"
#include "mimetic/init/mimetic.h"
#include "mimetic/init/model_digest.h"
#include "mimetic/init/tree_edit.h"
#include "mimetic/models/test_specs.h"

namespace mimetic::init {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsSupersetOf;

uint64_t Digest(const ModelSpec& spec, const Transform& t, uint64_t seed = 3) {
  absl::StatusOr<Model> m = MakeModel(spec, t, Key::FromSeed(seed));
  EXPECT_TRUE(m.ok()) << m.status();
  if (!m.ok()) return 0;
  absl::StatusOr<uint64_t> d = ModelDigest(*m);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *d : 0;
}

Transform MustBuild(const TransformRegistry& r, const std::string& name,
                    const std::map<std::string, std::string>& params, const std::vector<int>& layers) {
  absl::StatusOr<Params> p = r.ParseParams(name, params);
  EXPECT_TRUE(p.ok()) << p.status();
  absl::StatusOr<Transform> t = r.Build(name, p.ok() ? *p : Params(), layers);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : DefaultInit();
}

// A transform that adds key-dependent noise to every mixer leaf of its layers: one whose result
// would change if the registry leaked registration order or position into keys.
TransformInfo NoiseInfo(const std::string& name) {
  TransformInfo info;
  info.name = name;
  info.doc = "test noise";
  info.params = {ParamSpec::Double("scale", 0.1, Interval::LeftOpen(0, 1), "noise std")};
  info.make_layer = [name](const Params& p) -> absl::StatusOr<LayerTransform> {
    const double scale = p.Double("scale");
    return LayerTransform(name, [name, scale](const Model& m, int layer, Key key) -> absl::StatusOr<Model> {
      Model out = m;
      const std::string path = MixerPath(layer, "A_log");
      ASSIGN_OR_RETURN(std::vector<double> noise,
                       core::NormalVectorF64(core::FoldIn(key, name), m.params.Get(path)->numel()));
      ASSIGN_OR_RETURN(out.params, EditRows(m.params, path, [&](RowEditor& w) {
                         for (int64_t r = 0; r < w.rows(); ++r) {
                           RETURN_IF_ERROR(w.Scale({r, 1}, 1.0 + scale * noise[r]));
                         }
                         return absl::OkStatus();
                       }));
      return out;
    });
  };
  return info;
}

TEST(RegistryTest, BuiltInTransformsAreRegistered) {
  EXPECT_THAT(GlobalTransformRegistry().Names(),
              IsSupersetOf({"gamma", "mimetic", "mimetic_a", "mimetic_bc", "mimetic_conv", "mimetic_delta"}));
}

TEST(RegistryTest, NamedBuiltInsGiveTheSameModelAsTheFunctions) {
  const TransformRegistry& r = GlobalTransformRegistry();
  const ModelSpec spec = models::testing::TinyMamba2(3);
  EXPECT_EQ(Digest(spec, Compose({DefaultInit(), MustBuild(r, "mimetic", {}, {})})),
            Digest(spec, Compose({DefaultInit(), OnMambaLayers(Mimetic())})));
  EXPECT_EQ(Digest(spec, Compose({DefaultInit(), MustBuild(r, "mimetic_a", {{"c", "4"}}, {1})})),
            Digest(spec, Compose({DefaultInit(), OnLayers({1}, MimeticA(4.0))})));
  EXPECT_EQ(Digest(spec, Compose({DefaultInit(), MustBuild(r, "gamma", {{"gamma", "1"}}, {})})),
            Digest(spec, Compose({DefaultInit(), GammaInit(1.0)})));
  MimeticOptions o;
  o.conv_mamba2 = false;
  o.w_delta_scale = 0.1;
  EXPECT_EQ(Digest(spec, Compose({DefaultInit(),
                                  MustBuild(r, "mimetic",
                                            {{"conv_mamba2", "false"}, {"w_delta_scale", "0.1"}}, {0, 2})})),
            Digest(spec, Compose({DefaultInit(), OnLayers({0, 2}, Mimetic(o))})));
}

TEST(RegistryTest, AnUnknownNameListsTheRegisteredOnes) {
  absl::Status s = GlobalTransformRegistry().ParseParams("mimetik", {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), AllOf(HasSubstr("no init transform is registered as 'mimetik'"),
                                 HasSubstr("gamma, mimetic, mimetic_a")));
  EXPECT_THAT(GlobalTransformRegistry().Build("nope", Params(), {}).status().message(),
              HasSubstr("registered: "));
}

TEST(RegistryTest, UnknownWrongTypeAndOutOfRangeParametersNameWhatIsExpected) {
  const TransformRegistry& r = GlobalTransformRegistry();
  EXPECT_THAT(
      r.ParseParams("mimetic_a", {{"cc", "4"}}).status().message(),
      AllOf(HasSubstr("'mimetic_a' has no parameter 'cc'"), HasSubstr("c (a number in (0, 100], default 8)"),
            HasSubstr("reparameterize (true or false, default true)")));
  EXPECT_THAT(r.ParseParams("mimetic_a", {{"c", "0"}}).status().message(),
              HasSubstr("'mimetic_a': c = \"0\"; expected a number in (0, 100]"));
  EXPECT_THAT(r.ParseParams("mimetic_a", {{"c", "nan"}}).status().message(),
              HasSubstr("expected a number in"));
  EXPECT_THAT(r.ParseParams("mimetic_a", {{"c", "eight"}}).status().message(),
              HasSubstr("c = \"eight\"; expected a number in (0, 100]"));
  EXPECT_THAT(r.ParseParams("mimetic", {{"a", "maybe"}}).status().message(),
              HasSubstr("a = \"maybe\"; expected true or false"));
  EXPECT_THAT(r.CheckParams("gamma", {{"gamma", -1.0}}).status().message(),
              HasSubstr("gamma = -1; expected a number in (0, 4]"));
  EXPECT_THAT(r.ParseParams("mimetic_bc", {{"c", "1"}}).status().message(), HasSubstr("it takes none"));
  // Values that are in range parse exactly (a double, not rounded to float).
  absl::StatusOr<Params> p = r.ParseParams("mimetic_delta", {{"w_delta_scale", "0.1"}});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->Double("w_delta_scale"), 0.1);
  EXPECT_EQ(p->Double("bias"), kSoftplusInverseOfOne);  // the default
}

TEST(RegistryTest, IntegerParametersRefuseFractions) {
  TransformRegistry r;
  TransformInfo info = NoiseInfo("noise");
  info.params.push_back(ParamSpec::Int("repeats", 2, Interval::Closed(1, 8), "how often"));
  ASSERT_TRUE(r.Register(info).ok());
  EXPECT_THAT(r.ParseParams("noise", {{"repeats", "1.5"}}).status().message(),
              HasSubstr("repeats = \"1.5\"; expected an integer in [1, 8]"));
  EXPECT_THAT(r.ParseParams("noise", {{"repeats", "9"}}).status().message(), HasSubstr("[1, 8]"));
  EXPECT_EQ(r.ParseParams("noise", {{"repeats", "8"}})->Int("repeats"), 8);
}

TEST(RegistryTest, LayerSelection) {
  const TransformRegistry& r = GlobalTransformRegistry();
  // A whole-model transform takes no layers; a layer transform on a non-Mamba layer says which.
  EXPECT_THAT(r.Build("gamma", Params(), {0}).status().message(), HasSubstr("remove `layers`"));
  absl::StatusOr<Transform> on_attention = r.Build("mimetic", Params(), {2});
  ASSERT_TRUE(on_attention.ok());
  EXPECT_THAT(
      MakeModel(models::testing::TinyHybrid(), Compose({DefaultInit(), *on_attention}), Key::FromSeed(0))
          .status()
          .message(),
      HasSubstr("layer 2 is attention"));
  TransformRegistry local;
  TransformInfo info = NoiseInfo("noise");
  info.default_layers = DefaultLayers::kNone;
  ASSERT_TRUE(local.Register(info).ok());
  EXPECT_THAT(local.Build("noise", Params(), {}).status().message(), HasSubstr("needs `layers`"));
}

TEST(RegistryTest, MalformedRegistrationsAreRefused) {
  TransformRegistry r;
  ASSERT_TRUE(r.Register(NoiseInfo("noise")).ok());
  EXPECT_EQ(r.Register(NoiseInfo("noise")).code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(r.Register(NoiseInfo("bad name")).message(), HasSubstr("letters, digits and '_'"));
  TransformInfo both = NoiseInfo("both");
  both.make_model = [](const Params&) -> absl::StatusOr<Transform> { return DefaultInit(); };
  EXPECT_THAT(r.Register(both).message(), HasSubstr("exactly one of make_layer and make_model"));
  TransformInfo bad_default = NoiseInfo("bad_default");
  bad_default.params[0].default_value = 2.0;
  EXPECT_THAT(r.Register(bad_default).message(),
              HasSubstr("scale = 2 (default); expected a number in (0, 1]"));
  TransformInfo twice = NoiseInfo("twice");
  twice.params.push_back(twice.params[0]);
  EXPECT_THAT(r.Register(twice).message(), HasSubstr("'scale' is declared twice"));
  EXPECT_EQ(r.Names(), std::vector<std::string>{"noise"});
}

// The registry adds no state that changes results: a model built from one registry is
// bit-identical to the same model built from a registry holding other transforms too, registered
// before or after, in any order.
TEST(RegistryTest, OtherRegisteredTransformsNeverChangeAResult) {
  const ModelSpec spec = models::testing::TinyMamba2(3);
  auto build = [&](const TransformRegistry& r) {
    return Digest(spec, Compose({DefaultInit(), MustBuild(r, "noise_a", {{"scale", "0.5"}}, {0, 2}),
                                 MustBuild(r, "mimetic", {}, {1})}));
  };
  const TransformInfo* mimetic = GlobalTransformRegistry().Find("mimetic");
  ASSERT_NE(mimetic, nullptr);
  TransformRegistry alone;
  ASSERT_TRUE(alone.Register(NoiseInfo("noise_a")).ok());
  ASSERT_TRUE(alone.Register(*mimetic).ok());
  TransformRegistry crowded;
  for (const char* name : {"noise_z", "noise_b", "noise_0"})
    ASSERT_TRUE(crowded.Register(NoiseInfo(name)).ok());
  ASSERT_TRUE(crowded.Register(*mimetic).ok());
  ASSERT_TRUE(crowded.Register(NoiseInfo("noise_a")).ok());
  ASSERT_TRUE(crowded.Register(NoiseInfo("noise_c")).ok());
  const uint64_t a = build(alone);
  EXPECT_EQ(a, build(crowded));
  // ... and the noise really is there: another scale gives another model.
  EXPECT_NE(a, Digest(spec, Compose({DefaultInit(), MustBuild(alone, "noise_a", {{"scale", "0.25"}}, {0, 2}),
                                     MustBuild(alone, "mimetic", {}, {1})})));
}

TEST(RegistryTest, DescribeListsEveryTransformWithItsParameters) {
  const std::string d = GlobalTransformRegistry().Describe();
  EXPECT_THAT(d, HasSubstr("gamma (whole model): "));
  EXPECT_THAT(d, HasSubstr("mimetic_a (per layer): "));
  EXPECT_THAT(d, HasSubstr("  c: a number in (0, 100], default 8. "));
}

TEST(IntervalTest, OpenAndInfiniteEnds) {
  EXPECT_EQ(Interval::LeftOpen(0, 1).ToString(), "(0, 1]");
  EXPECT_EQ(Interval::Closed(-20, 0.5).ToString(), "[-20, 0.5]");
  EXPECT_EQ(Interval::Closed(1, INFINITY).ToString(), "[1, inf)");
  EXPECT_FALSE(Interval::LeftOpen(0, 1).Contains(0));
  EXPECT_TRUE(Interval::LeftOpen(0, 1).Contains(1));
  EXPECT_FALSE(Interval::Closed(0, 1).Contains(NAN));
}

}  // namespace
}  // namespace mimetic::init
