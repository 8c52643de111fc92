#include "mimetic/init/safetensors.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/file_util.h"

namespace mimetic::init {
namespace {

using core::DType;
using core::ParamTree;
using core::Tensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TestPath(const std::string& name) { return absl::StrCat(::testing::TempDir(), "/", name); }

// Whether a temporary of `path`'s writes (core::TempPathFor) is left in its directory.
bool TempLeftFor(const std::string& path) {
  const std::string dir = core::DirName(path), base = path.substr(path.find_last_of('/') + 1);
  DIR* d = ::opendir(dir.c_str());
  bool found = false;
  while (struct dirent* e = d != nullptr ? ::readdir(d) : nullptr) {
    int64_t pid = 0;
    const std::string name = e->d_name;
    found = found || (name.rfind(base, 0) == 0 && core::IsTempName(name, &pid));
  }
  if (d != nullptr) ::closedir(d);
  return found;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string LittleEndian64(uint64_t v) {
  std::string s(8, '\0');
  for (int b = 0; b < 8; ++b) s[b] = static_cast<char>(v >> (8 * b));
  return s;
}

// A safetensors file from a header text (padded here) and raw data bytes.
std::string MakeFile(std::string header, const std::string& data) {
  header.append((8 - header.size() % 8) % 8, ' ');
  return LittleEndian64(header.size()) + header + data;
}

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

std::string LeafBytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.storage()->data()), t.bytes());
}

absl::Status ReadStatus(const std::string& name, const std::string& bytes) {
  const std::string path = TestPath(name);
  WriteFile(path, bytes);
  return ReadSafetensors(path).status();
}

ParamTree MixedTree() {
  const float nan_payload = [] {
    uint32_t bits = 0x7fc01234u;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }();
  std::vector<std::pair<std::string, Tensor>> pairs;
  pairs.emplace_back("embedding/weight",
                     Tensor::FromHost<float>({2, 3}, {1.5f, -0.0f, nan_payload, 1e-40f, -3.25f,
                                                      std::numeric_limits<float>::infinity()})
                         .value());
  pairs.emplace_back("layers/0/mixer/A_log",
                     Tensor::FromHost<double>({4}, {0.1, -2.5e300, 3.0, 1e-310}).value());
  pairs.emplace_back(
      "layers/0/counts",
      Tensor::FromHost<int32_t>({2, 2}, {std::numeric_limits<int32_t>::min(), -1, 0, 7}).value());
  pairs.emplace_back("layers/0/scale", Tensor::Scalar<float>(0.75f));
  pairs.emplace_back("layers/1/empty", Tensor::Zeros({0, 5}).value());
  pairs.emplace_back("layers/1/empty_i32", Tensor::Zeros({0}, DType::kI32).value());
  pairs.emplace_back("norm_f/weight", Tensor::FromHost<double>({1, 1}, {42.0}).value());
  return ParamTree::FromPairs(std::move(pairs)).value();
}

TEST(SafetensorsTest, RoundTripIsBitExact) {
  const std::string path = TestPath("roundtrip.safetensors");
  const ParamTree tree = MixedTree();
  ASSERT_TRUE(WriteSafetensors(path, tree).ok());
  absl::StatusOr<ParamTree> back = ReadSafetensors(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Paths(), tree.Paths());
  for (size_t i = 0; i < tree.size(); ++i) {
    SCOPED_TRACE(tree.Paths()[i]);
    EXPECT_EQ(back->Leaves()[i].meta(), tree.Leaves()[i].meta());
    EXPECT_EQ(LeafBytes(back->Leaves()[i]), LeafBytes(tree.Leaves()[i]));
  }
  EXPECT_FALSE(TempLeftFor(path));
}

TEST(SafetensorsTest, FileLayoutFollowsTheFormat) {
  const std::string path = TestPath("layout.safetensors");
  const ParamTree tree = MixedTree();
  ASSERT_TRUE(WriteSafetensors(path, tree).ok());
  const std::string bytes = ReadFile(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int b = 7; b >= 0; --b) n = (n << 8) | static_cast<unsigned char>(bytes[b]);
  EXPECT_EQ(n % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.front(), '{');
  EXPECT_EQ(header.find("__metadata__"), std::string::npos);  // omitted when empty
  EXPECT_THAT(header, HasSubstr(R"("layers/0/scale":{"dtype":"F32","shape":[],"data_offsets":[72,76]})"));
  EXPECT_THAT(header, HasSubstr(R"("layers/1/empty":{"dtype":"F32","shape":[0,5],"data_offsets":[76,76]})"));
  EXPECT_THAT(header,
              HasSubstr(R"("layers/0/mixer/A_log":{"dtype":"F64","shape":[4],"data_offsets":[24,56]})"));
  int64_t data = 0;
  for (const Tensor& t : tree.Leaves()) data += t.bytes();
  EXPECT_EQ(bytes.size(), 8 + n + data);
}

TEST(SafetensorsTest, MetadataRoundTrips) {
  const std::string path = TestPath("metadata.safetensors");
  const std::map<std::string, std::string> metadata = {
      {"format", "pt"}, {"step", "1000"}, {"config", "d_model: 64 \"quoted\"\n\tλ"}, {"empty", ""}};
  ASSERT_TRUE(WriteSafetensors(path, MixedTree(), metadata).ok());
  std::map<std::string, std::string> back = {{"stale", "value"}};
  ASSERT_TRUE(ReadSafetensors(path, &back).ok());
  EXPECT_EQ(back, metadata);

  ASSERT_TRUE(WriteSafetensors(path, MixedTree()).ok());
  ASSERT_TRUE(ReadSafetensors(path, &back).ok());
  EXPECT_TRUE(back.empty());
}

TEST(SafetensorsTest, EmptyTreeRoundTrips) {
  const std::string path = TestPath("empty_tree.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, ParamTree(), {{"a", "b"}}).ok());
  absl::StatusOr<ParamTree> back = ReadSafetensors(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->empty());
}

TEST(SafetensorsTest, TensorNameOption) {
  const std::string path = TestPath("renamed.safetensors");
  SafetensorsWriteOptions options;
  options.tensor_name = [](const std::string& p) { return absl::StrReplaceAll(p, {{"/", "."}}); };
  ASSERT_TRUE(WriteSafetensorsWithOptions(path, MixedTree(), options).ok());
  absl::StatusOr<ParamTree> back = ReadSafetensors(path);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->Paths()[0], "embedding.weight");
  EXPECT_EQ(back->Paths()[1], "layers.0.mixer.A_log");

  options.tensor_name = [](const std::string&) { return std::string("same"); };
  absl::Status status = WriteSafetensorsWithOptions(path, MixedTree(), options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'layers/0/mixer/A_log' would be stored as 'same'"));
}

TEST(SafetensorsTest, TreeOrderIsDataOrder) {
  // The header lists b first, but a's bytes come first; zero-size tensors keep header order.
  const std::string header = R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                             R"("z2":{"dtype":"F32","shape":[0],"data_offsets":[4,4]},)"
                             R"("z1":{"dtype":"I32","shape":[0],"data_offsets":[4,4]},)"
                             R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  const std::string path = TestPath("order.safetensors");
  WriteFile(path, MakeFile(header, Bytes<float>({1.0f, 2.0f})));
  absl::StatusOr<ParamTree> tree = ReadSafetensors(path);
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_THAT(tree->Paths(), ElementsAre("a", "z2", "z1", "b"));
  EXPECT_EQ(tree->Get("b")->Item<float>().value(), 2.0f);
}

TEST(SafetensorsTest, ConvertsHalfAndBFloat16ToF32) {
  const std::vector<uint16_t> f16 = {0x3C00, 0xC000, 0x0001, 0x03FF, 0x0400, 0x7BFF,
                                     0x7C00, 0xFC00, 0x8000, 0x3555, 0x7E00};
  const std::vector<uint16_t> bf16 = {0x3F80, 0xC000, 0x0001, 0x7F80, 0xFF80, 0x4049, 0x8000, 0x7FC0};
  const std::string header = absl::StrCat(
      R"({"__metadata__":{"format":"pt"},"h":{"dtype":"F16","shape":[11],"data_offsets":[0,22]},)",
      R"("b":{"dtype":"BF16","shape":[2,4],"data_offsets":[22,38]}})");
  const std::string path = TestPath("half.safetensors");
  WriteFile(path, MakeFile(header, Bytes(f16) + Bytes(bf16)));
  absl::StatusOr<ParamTree> tree = ReadSafetensors(path);
  ASSERT_TRUE(tree.ok()) << tree.status();
  const Tensor h = tree->Get("h").value();
  const Tensor b = tree->Get("b").value();
  EXPECT_EQ(h.dtype(), DType::kF32);
  EXPECT_EQ(b.dtype(), DType::kF32);
  EXPECT_EQ(b.shape(), (core::Shape{2, 4}));
  const std::vector<float> hv = h.ToVector<float>().value();
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(hv[0], 1.0f);
  EXPECT_EQ(hv[1], -2.0f);
  EXPECT_EQ(hv[2], std::ldexp(1.0f, -24));     // smallest subnormal
  EXPECT_EQ(hv[3], std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(hv[4], std::ldexp(1.0f, -14));     // smallest normal
  EXPECT_EQ(hv[5], 65504.0f);
  EXPECT_EQ(hv[6], inf);
  EXPECT_EQ(hv[7], -inf);
  EXPECT_EQ(hv[8], 0.0f);
  EXPECT_TRUE(std::signbit(hv[8]));
  EXPECT_EQ(hv[9], 0.333251953125f);
  EXPECT_TRUE(std::isnan(hv[10]));
  const std::vector<float> bv = b.ToVector<float>().value();
  EXPECT_EQ(bv[0], 1.0f);
  EXPECT_EQ(bv[1], -2.0f);
  EXPECT_EQ(bv[2], std::ldexp(1.0f, -133));  // bf16 subnormal
  EXPECT_EQ(bv[3], inf);
  EXPECT_EQ(bv[4], -inf);
  EXPECT_EQ(bv[5], 3.140625f);
  EXPECT_TRUE(std::signbit(bv[6]));
  EXPECT_TRUE(std::isnan(bv[7]));
}

#if defined(__FLT16_MANT_DIG__)
TEST(SafetensorsTest, HalfToFloatMatchesTheCompilerOnEveryBitPattern) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    _Float16 h;
    const uint16_t b16 = static_cast<uint16_t>(bits);
    std::memcpy(&h, &b16, 2);
    const float expected = static_cast<float>(h);
    const float got = HalfToFloat(b16);
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(got)) << bits;
    } else {
      uint32_t e, g;
      std::memcpy(&e, &expected, 4);
      std::memcpy(&g, &got, 4);
      ASSERT_EQ(g, e) << "bits 0x" << std::hex << bits;
    }
  }
}
#endif

// ---- malformed files: each an InvalidArgument naming what is wrong ----

void ExpectInvalid(const absl::Status& status, const std::vector<std::string>& parts) {
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  for (const std::string& part : parts) EXPECT_THAT(status.message(), HasSubstr(part));
}

TEST(SafetensorsTest, RejectsShortFile) {
  ExpectInvalid(ReadStatus("short.safetensors", std::string("\x10\0\0\0\0", 5)),
                {"file too short", "at least 8", "found 5"});
  ExpectInvalid(ReadStatus("empty.safetensors", ""), {"file too short", "found 0"});
}

TEST(SafetensorsTest, RejectsHeaderLengthBeyondFile) {
  ExpectInvalid(ReadStatus("long_header.safetensors", LittleEndian64(1000) + std::string(16, ' ')),
                {"header length 1000", "beyond", "expected <= 16"});
  ExpectInvalid(ReadStatus("huge_header.safetensors", LittleEndian64(~uint64_t{0}) + "{}      "),
                {"header length 18446744073709551615", "beyond"});
}

TEST(SafetensorsTest, RejectsInvalidJson) {
  ExpectInvalid(ReadStatus("bad_json.safetensors", MakeFile(R"({"w": {"dtype": )", "")), {"not valid JSON"});
  ExpectInvalid(ReadStatus("array_json.safetensors", MakeFile("[1, 2]", "")),
                {"must be a JSON object", "array"});
}

// A hostile header nested far deeper than any real one (depth 3) must be refused with a message, not
// overflow the stack in the parser or in an error message that prints the value. Run in a child process so
// that a crash fails this test instead of the whole binary.
TEST(SafetensorsTest, RejectsDeeplyNestedHeader) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string header = "{\"w\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  const std::string path = TestPath("deep.safetensors");
  WriteFile(path, MakeFile(header, ""));
  EXPECT_EXIT(
      {
        const absl::Status status = ReadSafetensors(path).status();
        std::fprintf(stderr, "status: %s\n", status.ToString().c_str());
        const bool expected = absl::IsInvalidArgument(status) &&
                              absl::StrContains(status.message(), "deep.safetensors") &&
                              absl::StrContains(status.message(), "nested deeper than 64");
        std::_Exit(expected ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  // Nesting inside a string is text, not depth.
  ExpectInvalid(
      ReadStatus("deep_string.safetensors", MakeFile("{\"w\": \"" + std::string(1000, '[') + "\\\"{\"}", "")),
      {"tensor 'w'", "expected an object, found \"[[["});
}

TEST(SafetensorsTest, RejectsUnknownDtype) {
  ExpectInvalid(
      ReadStatus("dtype.safetensors",
                 MakeFile(R"({"w":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", std::string(8, '\0'))),
      {"tensor 'w'", "unsupported dtype \"I64\"", "F32, F64, I32, F16, BF16"});
}

TEST(SafetensorsTest, RejectsBadEntries) {
  ExpectInvalid(ReadStatus("no_shape.safetensors",
                           MakeFile(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", std::string(4, '\0'))),
                {"tensor 'w'", "\"shape\""});
  ExpectInvalid(ReadStatus("neg_shape.safetensors",
                           MakeFile(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", "")),
                {"tensor 'w'", "non-negative"});
  ExpectInvalid(ReadStatus("reversed.safetensors",
                           MakeFile(R"({"w":{"dtype":"F32","shape":[0],"data_offsets":[4,0]}})", "")),
                {"tensor 'w'", "[4, 0]", "begin <= end"});
  ExpectInvalid(ReadStatus("bad_meta.safetensors", MakeFile(R"({"__metadata__":{"step":1000}})", "")),
                {"\"step\"", "expected a string", "1000"});
}

TEST(SafetensorsTest, RejectsOffsetsPastEnd) {
  ExpectInvalid(ReadStatus("past_end.safetensors",
                           MakeFile(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
                                    Bytes<float>({1, 2}))),
                {"tensor 'w'", "[0, 16]", "expected end <= 8", "found 16"});
}

TEST(SafetensorsTest, RejectsShapeSizeMismatch) {
  ExpectInvalid(ReadStatus("mismatch.safetensors",
                           MakeFile(R"({"w":{"dtype":"F32","shape":[2,3],"data_offsets":[0,20]}})",
                                    std::string(24, '\0'))),
                {"tensor 'w'", "span 20 bytes", "F32(2, 3) needs 24"});
  ExpectInvalid(
      ReadStatus("overflow.safetensors",
                 MakeFile(R"({"w":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                          std::string(8, '\0'))),
      {"tensor 'w'", "more than 2^64"});
}

TEST(SafetensorsTest, RejectsOverlappingTensors) {
  ExpectInvalid(
      ReadStatus("overlap.safetensors", MakeFile(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                                 R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
                                                 std::string(12, '\0'))),
      {"tensor 'b'", "[4, 12]", "overlap tensor 'a' [0, 8]", "expected begin >= 8"});
}

// Issue 51 item 6: the regions tile the data exactly (the reference reader's rule), so a header length off
// by a few bytes, a gap or bytes left over are refused instead of shifting or ignoring data.
TEST(SafetensorsTest, RejectsGapsAndBytesAfterTheLastTensor) {
  ExpectInvalid(
      ReadStatus("gap.safetensors", MakeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                             R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                                             std::string(12, '\0'))),
      {"tensor 'b'", "[8, 12]", "gap of 4 bytes after tensor 'a' [0, 4]", "expected begin == 4"});
  ExpectInvalid(
      ReadStatus("late_start.safetensors",
                 MakeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", std::string(8, '\0'))),
      {"tensor 'a'", "gap of 4 bytes after the start of the data", "expected begin == 0"});
  ExpectInvalid(
      ReadStatus("trailing.safetensors",
                 MakeFile(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", std::string(7, '\0'))),
      {"3 bytes follow the last tensor 'a' [0, 4]", "expected the data to end at byte 4"});
  ExpectInvalid(ReadStatus("trailing_empty.safetensors", MakeFile("{}", "x")),
                {"1 bytes follow the header, which lists no tensor"});
}

TEST(SafetensorsTest, RejectsAHeaderLengthAFewBytesShort) {
  const std::string path = TestPath("short_header.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, MixedTree()).ok());
  const std::string bytes = ReadFile(path);
  uint64_t header_len = 0;
  for (int b = 7; b >= 0; --b) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[b]);
  std::string header = bytes.substr(8, header_len);
  const std::string data = bytes.substr(8 + header_len);
  header.erase(header.find_last_not_of(' ') + 1);
  header.append(8, ' ');  // padding that a shorter length still parses within
  WriteFile(path, LittleEndian64(header.size()) + header + data);
  ASSERT_TRUE(ReadSafetensors(path).ok()) << "the padded file itself is well formed";
  // Four bytes short: the JSON still parses, and every tensor would start four bytes early.
  WriteFile(path, LittleEndian64(header.size() - 4) + header + data);
  ExpectInvalid(ReadSafetensors(path).status(),
                {"4 bytes follow the last tensor 'norm_f/weight'", "is the header length wrong?"});
}

TEST(SafetensorsTest, RejectsTruncatedCheckpointNamingTheLastTensor) {
  const std::string path = TestPath("truncated.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, MixedTree()).ok());
  std::string bytes = ReadFile(path);
  WriteFile(path, bytes.substr(0, bytes.size() - 3));
  ExpectInvalid(ReadSafetensors(path).status(), {"tensor 'norm_f/weight'", "past the data"});
}

TEST(SafetensorsTest, MissingFileIsNotFound) {
  absl::Status status = ReadSafetensors(TestPath("does_not_exist.safetensors")).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("does_not_exist.safetensors"));
}

// ---- atomic writes ----

TEST(SafetensorsTest, FailedWriteLeavesEarlierFileIntact) {
  const std::string path = TestPath("atomic.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, MixedTree(), {{"version", "1"}}).ok());
  const std::string before = ReadFile(path);

  // An error leaf is found before the file is touched.
  ParamTree bad = MixedTree().MapWithPath([](const std::string& p, const Tensor& t) {
    return p == "layers/0/counts" ? Tensor::Error(absl::InternalError("kernel failed")) : t;
  });
  absl::Status status = WriteSafetensors(path, bad);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(status.message(), HasSubstr("'layers/0/counts'"));
  EXPECT_THAT(status.message(), HasSubstr("kernel failed"));
  EXPECT_EQ(ReadFile(path), before);
  EXPECT_FALSE(TempLeftFor(path));

  // The rename fails (a directory is where the file would go): the temporary is removed. (A full disk:
  // core/file_util_test.)
  const std::string dir_path = TestPath("atomic_dir.safetensors");
  ASSERT_EQ(::mkdir(dir_path.c_str(), 0755), 0);
  WriteFile(dir_path + "/inside", "x");
  status = WriteSafetensors(dir_path, ParamTree());
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("atomic_dir.safetensors.tmp"));
  EXPECT_FALSE(TempLeftFor(dir_path));
  EXPECT_EQ(ReadFile(path), before);

  // A successful write replaces the file.
  ASSERT_TRUE(WriteSafetensors(path, ParamTree()).ok());
  EXPECT_NE(ReadFile(path), before);
  EXPECT_FALSE(TempLeftFor(path));
}

TEST(SafetensorsTest, WriteIntoMissingDirectoryFails) {
  absl::Status status = WriteSafetensors(TestPath("no/such/dir/x.safetensors"), MixedTree());
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound) << status;
  EXPECT_THAT(status.message(), HasSubstr("no/such/dir/x.safetensors.tmp"));
}

TEST(SafetensorsTest, WriteIntoUnwritableDirectoryFails) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  const std::string dir = TestPath("readonly_dir");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/ckpt.safetensors";
  ASSERT_TRUE(WriteSafetensors(path, MixedTree()).ok());
  const std::string before = ReadFile(path);
  ASSERT_EQ(::chmod(dir.c_str(), 0555), 0);
  absl::Status status = WriteSafetensors(path, ParamTree());
  ::chmod(dir.c_str(), 0755);
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_EQ(ReadFile(path), before);
}

// Files written by a Python safetensors writer (tools/golden/make_golden.py) read back, and our
// rewrite of them reads back identically.
TEST(SafetensorsTest, ReadsPythonWrittenGoldenFiles) {
  const std::string dir = "mimetic/models/testdata";
  DIR* d = ::opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  int files = 0;
  for (dirent* e; (e = ::readdir(d)) != nullptr;) {
    const std::string name = e->d_name;
    if (name.size() < 12 || name.substr(name.size() - 12) != ".safetensors") continue;
    SCOPED_TRACE(name);
    ++files;
    std::map<std::string, std::string> metadata;
    absl::StatusOr<ParamTree> tree = ReadSafetensors(dir + "/" + name, &metadata);
    ASSERT_TRUE(tree.ok()) << tree.status();
    EXPECT_FALSE(tree->empty());
    EXPECT_TRUE(metadata.count("spec"));
    const std::string copy = TestPath("golden_copy.safetensors");
    ASSERT_TRUE(WriteSafetensors(copy, *tree, metadata).ok());
    std::map<std::string, std::string> metadata_back;
    absl::StatusOr<ParamTree> back = ReadSafetensors(copy, &metadata_back);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(metadata_back, metadata);
    ASSERT_EQ(back->Paths(), tree->Paths());
    for (size_t i = 0; i < tree->size(); ++i)
      EXPECT_EQ(LeafBytes(back->Leaves()[i]), LeafBytes(tree->Leaves()[i]));
  }
  ::closedir(d);
  EXPECT_GT(files, 0);
}

// For a manual interoperability check: writes a known file into the test's undeclared outputs,
// which a pure-Python reader (struct + json) can parse.
TEST(SafetensorsTest, WritesInteropSample) {
  const char* dir = std::getenv("TEST_UNDECLARED_OUTPUTS_DIR");
  if (dir == nullptr) GTEST_SKIP() << "no TEST_UNDECLARED_OUTPUTS_DIR";
  ASSERT_TRUE(
      WriteSafetensors(absl::StrCat(dir, "/interop.safetensors"), MixedTree(), {{"format", "pt"}}).ok());
}

}  // namespace
}  // namespace mimetic::init
