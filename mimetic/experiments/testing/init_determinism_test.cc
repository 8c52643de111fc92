// The init registry adds no state that changes results: the same config and seed give
// bit-identical initial models in this binary, which links three extra transforms
// (extra_init_transforms_for_test.cc), and in init_determinism_probe, which links none.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/experiments/testing/init_determinism_probe.h"
#include "mimetic/init/registry.h"

namespace mimetic::experiments {
namespace {

using ::testing::Contains;
using ::testing::Not;

std::string RunProbe() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  EXPECT_NE(srcdir, nullptr);
  const std::string probe =
      std::string(srcdir ? srcdir : ".") + "/mimetic/mimetic/experiments/init_determinism_probe_main";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(probe.c_str(), "r"), pclose);
  EXPECT_NE(pipe, nullptr) << probe;
  std::string out;
  std::array<char, 256> buffer;
  while (pipe && fgets(buffer.data(), buffer.size(), pipe.get()) != nullptr) out += buffer.data();
  return out;
}

TEST(InitDeterminismTest, ExtraLinkedTransformsChangeNoResult) {
  const std::vector<std::string> here = init::GlobalTransformRegistry().Names();
  ASSERT_THAT(here, Contains("aaa_noise"));
  ASSERT_THAT(here, Contains("zzz_noise"));
  absl::StatusOr<std::string> mine = InitProbeDigests();
  ASSERT_TRUE(mine.ok()) << mine.status();

  const std::string probe = RunProbe();
  const size_t newline = probe.find('\n');
  ASSERT_NE(newline, std::string::npos) << probe;
  const std::vector<std::string> there = absl::StrSplit(probe.substr(0, newline), ',');
  EXPECT_THAT(there, Not(Contains("aaa_noise")));  // the probe really links fewer transforms
  EXPECT_THAT(there, Contains("mimetic"));
  EXPECT_EQ(probe.substr(newline + 1), *mine);
  // 4 variants x 2 seeds, and the variants really differ.
  const std::vector<std::string> lines = absl::StrSplit(*mine, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_NE(lines[0].substr(lines[0].rfind(' ')), lines[2].substr(lines[2].rfind(' ')));
}

}  // namespace
}  // namespace mimetic::experiments
