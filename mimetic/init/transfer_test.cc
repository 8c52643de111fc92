#include "mimetic/init/transfer.h"

#include "mimetic/init/mimetic.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/models/test_specs.h"

namespace mimetic::init {
namespace {

using ::testing::HasSubstr;
using models::testing::MustParse;

std::vector<float> Host(const ParamTree& p, const std::string& path) {
  return p.Get(path).value().ToVector<float>().value();
}

std::vector<float> Rows(const std::vector<float>& v, int64_t width, int64_t begin, int64_t n) {
  return std::vector<float>(v.begin() + begin * width, v.begin() + (begin + n) * width);
}

TEST(TransferFromAttentionTest, CopiesExactlyTheNamedRows) {
  // Attention: 2 heads of 8 (H·P = 16). Mamba 2 target (MIL config): expand 1, d_inner 16,
  // ngroups 2, d_state 8, headdim 8.
  ModelSpec teacher = MustParse("vocab_size: 10 d_model: 16 n_layer: 2 default_layer { attention { num_heads: 2 } }");
  ModelSpec student = MustParse(
      "vocab_size: 10 d_model: 16 n_layer: 2 default_layer { mamba2 { expand: 1 ngroups: 2 d_state: 8 headdim: 8 } }");
  Model t = MakeModel(teacher, DefaultInit(), Key::FromSeed(1)).value();
  Model s0 = MakeModel(student, DefaultInit(), Key::FromSeed(2)).value();
  Model s = MakeModel(student, Compose({DefaultInit(), OnLayers({1}, TransferFromAttention(t, 0))}), Key::FromSeed(2))
                .value();
  const int64_t D = 16, E = 16, HP = 16;
  std::vector<float> qkv = Host(t.params, "layers/0/mixer/in_proj/weight");
  std::vector<float> in = Host(s.params, "layers/1/mixer/in_proj/weight");
  std::vector<float> in0 = Host(s0.params, "layers/1/mixer/in_proj/weight");
  EXPECT_EQ(Rows(in, D, 0, E), Rows(in0, D, 0, E));                  // z: fresh
  EXPECT_EQ(Rows(in, D, E, E), Rows(qkv, D, 2 * HP, HP));            // x <- V
  EXPECT_EQ(Rows(in, D, 2 * E, HP), Rows(qkv, D, HP, HP));           // B <- K
  EXPECT_EQ(Rows(in, D, 2 * E + HP, HP), Rows(qkv, D, 0, HP));       // C <- Q
  EXPECT_EQ(Rows(in, D, 2 * E + 2 * HP, 2), Rows(in0, D, 2 * E + 2 * HP, 2));  // dt rows: fresh
  EXPECT_EQ(Host(s.params, "layers/1/mixer/out_proj/weight"), Host(t.params, "layers/0/mixer/out_proj/weight"));
  EXPECT_EQ(Host(s.params, "layers/1/mixer/conv1d/weight"), Host(s0.params, "layers/1/mixer/conv1d/weight"));
  EXPECT_EQ(Host(s.params, "layers/0/mixer/in_proj/weight"), Host(s0.params, "layers/0/mixer/in_proj/weight"));
}

TEST(TransferFromAttentionTest, MismatchedSizesAreNamed) {
  ModelSpec teacher = MustParse("vocab_size: 10 d_model: 16 n_layer: 1 default_layer { attention { num_heads: 2 } }");
  ModelSpec student = MustParse("vocab_size: 10 d_model: 16 n_layer: 1 default_layer { mamba2 { d_state: 8 headdim: 8 } }");
  Model t = MakeModel(teacher, DefaultInit(), Key::FromSeed(1)).value();
  absl::Status st =
      MakeModel(student, Compose({DefaultInit(), OnLayers({0}, TransferFromAttention(t, 0))}), Key::FromSeed(2))
          .status();
  EXPECT_THAT(st.message(), HasSubstr("H·P = 16 must equal the target's d_inner (32)"));
}

TEST(TransplantTest, CopiesTheSourceLayerIntoChosenLayersWithItsSpec) {
  ModelSpec spec = models::testing::TinyMamba2(4);
  Model teacher = MakeModel(spec, Compose({DefaultInit(), OnLayers({2}, MimeticA(4))}), Key::FromSeed(7)).value();
  Model base = MakeModel(spec, DefaultInit(), Key::FromSeed(8)).value();
  Model student =
      MakeModel(spec, Compose({DefaultInit(), OnLayers({0, 3}, Transplant(teacher, 2))}), Key::FromSeed(8)).value();
  for (const std::string& path : student.params.Paths()) {
    if (path.rfind("layers/0/", 0) == 0 || path.rfind("layers/3/", 0) == 0) {
      const std::string src = "layers/2/" + path.substr(9);
      EXPECT_EQ(Host(student.params, path), Host(teacher.params, src)) << path;
    } else {
      EXPECT_EQ(Host(student.params, path), Host(base.params, path)) << path;
    }
  }
  EXPECT_FLOAT_EQ(student.spec.layers(3).mamba2().a_log_scale(), -4.f);
  EXPECT_FLOAT_EQ(student.spec.layers(1).mamba2().a_log_scale(), 1.f);
}

TEST(TransplantTest, KindMismatchIsAnError) {
  Model teacher = MakeModel(models::testing::TinyMamba1(2), DefaultInit(), Key::FromSeed(7)).value();
  absl::Status st = MakeModel(models::testing::TinyMamba2(2),
                              Compose({DefaultInit(), OnLayers({0}, Transplant(teacher, 1))}), Key::FromSeed(8))
                        .status();
  EXPECT_THAT(st.message(), HasSubstr("source layer 1 is mamba1 but target layer 0 is mamba2"));
}

}  // namespace
}  // namespace mimetic::init
