#include "mimetic/train/metrics_log.h"

#include <dirent.h>
#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/full_disk_for_test.h"
#include "mimetic/train/tensorboard_event.pb.h"
#include "nlohmann/json.hpp"

namespace mimetic::train {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string TestDir(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/metrics_log_test_", name);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& path) {
  std::vector<std::string> lines = absl::StrSplit(ReadFile(path), '\n', absl::SkipEmpty());
  return lines;
}

// Every Event in an event file, checking the framing and both CRCs of every record.
std::vector<tb::Event> ReadEvents(const std::string& path) {
  const std::string bytes = ReadFile(path);
  std::vector<tb::Event> events;
  size_t offset = 0;
  std::string data;
  absl::Status s;
  while ((s = ReadRecord(bytes, &offset, &data)).ok()) {
    tb::Event event;
    EXPECT_TRUE(event.ParseFromString(data)) << "record " << events.size() << " of " << path;
    events.push_back(event);
  }
  EXPECT_TRUE(absl::IsOutOfRange(s)) << s;
  EXPECT_EQ(offset, bytes.size());
  return events;
}

std::vector<std::string> ListDir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (struct dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    }
    ::closedir(d);
  }
  return names;
}

TEST(Crc32cTest, KnownVectors) {
  EXPECT_EQ(Crc32c(""), 0u);
  EXPECT_EQ(Crc32c("123456789"), 0xE3069283u);  // the CRC catalogue's check value
  // RFC 3720 (iSCSI), appendix B.4.
  EXPECT_EQ(Crc32c(std::string(32, '\0')), 0x8A9136AAu);
  EXPECT_EQ(Crc32c(std::string(32, '\xff')), 0x62A8AB43u);
  std::string ascending, descending;
  for (int i = 0; i < 32; ++i) {
    ascending.push_back(static_cast<char>(i));
    descending.push_back(static_cast<char>(31 - i));
  }
  EXPECT_EQ(Crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(Crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32cTest, MaskIsTensorFlows) {
  const uint32_t crc = 0xE3069283u;
  EXPECT_EQ(MaskCrc32c(crc), (((crc >> 15) | (crc << 17)) + 0xa282ead8u));
  for (uint32_t c : {0u, 1u, 0xFFFFFFFFu, 0x12345678u, crc}) EXPECT_EQ(UnmaskCrc32c(MaskCrc32c(c)), c);
}

TEST(RecordTest, FramingLayoutAndCorruption) {
  const std::string framed = FrameRecord("abc");
  ASSERT_EQ(framed.size(), 8u + 4u + 3u + 4u);
  EXPECT_EQ(framed.substr(0, 8), std::string("\x03\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(framed.substr(12, 3), "abc");

  size_t offset = 0;
  std::string data;
  ASSERT_TRUE(ReadRecord(framed, &offset, &data).ok());
  EXPECT_EQ(data, "abc");
  EXPECT_TRUE(absl::IsOutOfRange(ReadRecord(framed, &offset, &data)));

  std::string flipped = framed;
  flipped[13] ^= 1;
  offset = 0;
  absl::Status s = ReadRecord(flipped, &offset, &data);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("data CRC"));
  offset = 0;
  s = ReadRecord(framed.substr(0, 10), &offset, &data);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
}

// The wire bytes TensorBoard expects, written out by hand from TensorFlow's field numbers, so the test
// does not only check our proto against itself.
TEST(EventProtoTest, WireFormatMatchesTensorFlowFieldNumbers) {
  tb::Summary::Value value;
  value.set_tag("loss");
  value.set_simple_value(0.0f);  // still written: simple_value sits in a oneof
  EXPECT_EQ(value.SerializeAsString(), std::string("\x0a\x04loss\x15\x00\x00\x00\x00", 11));

  tb::Event version;
  version.set_file_version("brain.Event:2");
  EXPECT_EQ(version.SerializeAsString(), std::string("\x1a\x0d"
                                                     "brain.Event:2",
                                                     15));

  tb::Event event;
  event.set_step(300);
  event.mutable_summary()->add_value()->set_tag("a");
  // step: field 2 varint (0x10, 300 = 0xac 0x02); summary: field 5 bytes (0x2a), one value: field 1 (0x0a)
  // holding tag "a" (0x0a 0x01 'a').
  EXPECT_EQ(event.SerializeAsString(), std::string("\x10\xac\x02\x2a\x05\x0a\x03\x0a\x01"
                                                   "a",
                                                   10));
}

TEST(MetricsLogTest, WritesJsonLinesAndEventFiles) {
  const std::string dir = TestDir("basic") + "/run";
  auto log = MetricsLog::Open(dir);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_TRUE(log->Log(10, "mimetic/seed1", {{"loss", 2.5}, {"accuracy/len64", 0.0}}).ok());
  ASSERT_TRUE(log->Log(20, "mimetic/seed1", {{"loss", 1.25}, {"accuracy/len64", 0.75}}).ok());
  ASSERT_TRUE(log->Log(10, "default/seed1", {{"loss", std::numeric_limits<double>::quiet_NaN()}}).ok());

  // JSON lines, one per call, in call order.
  std::vector<std::string> lines = Lines(dir + "/metrics.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  nlohmann::json first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["run"], "mimetic/seed1");
  EXPECT_EQ(first["step"], 10);
  EXPECT_EQ(first["loss"], 2.5);
  EXPECT_EQ(first["accuracy/len64"], 0.0);
  EXPECT_GT(first["wall_time"].get<double>(), 1.5e9);
  EXPECT_THAT(lines[0], StartsWith("{\"run\":\"mimetic/seed1\",\"step\":10,\"wall_time\":"));
  nlohmann::json third = nlohmann::json::parse(lines[2]);
  EXPECT_EQ(third["run"], "default/seed1");
  EXPECT_TRUE(third["loss"].is_null());  // NaN has no JSON spelling

  // One event file per run, under tb/<run>/.
  std::vector<std::string> files = ListDir(dir + "/tb/mimetic/seed1");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_THAT(files[0], StartsWith("events.out.tfevents."));
  EXPECT_EQ(dir + "/tb/mimetic/seed1/" + files[0], log->EventFilePath("mimetic/seed1"));
  EXPECT_EQ(log->EventFilePath("never/logged"), "");

  std::vector<tb::Event> events = ReadEvents(log->EventFilePath("mimetic/seed1"));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].file_version(), "brain.Event:2");
  EXPECT_GT(events[0].wall_time(), 1.5e9);
  for (int i = 1; i < 3; ++i) {
    ASSERT_EQ(events[i].what_case(), tb::Event::kSummary);
    EXPECT_EQ(events[i].step(), 10 * i);
    EXPECT_GE(events[i].wall_time(), events[0].wall_time());
    ASSERT_EQ(events[i].summary().value_size(), 2);
    // Tags in name order, each value a simple_value (even 0.0).
    EXPECT_EQ(events[i].summary().value(0).tag(), "accuracy/len64");
    EXPECT_EQ(events[i].summary().value(1).tag(), "loss");
    EXPECT_EQ(events[i].summary().value(0).value_case(), tb::Summary::Value::kSimpleValue);
  }
  EXPECT_EQ(events[1].summary().value(0).simple_value(), 0.0f);
  EXPECT_EQ(events[1].summary().value(1).simple_value(), 2.5f);
  EXPECT_EQ(events[2].summary().value(0).simple_value(), 0.75f);
  EXPECT_EQ(events[2].summary().value(1).simple_value(), 1.25f);

  std::vector<tb::Event> other = ReadEvents(log->EventFilePath("default/seed1"));
  ASSERT_EQ(other.size(), 2u);
  EXPECT_TRUE(std::isnan(other[1].summary().value(0).simple_value()));
}

TEST(MetricsLogTest, ReopeningAppends) {
  const std::string dir = TestDir("resume");
  {
    auto log = MetricsLog::Open(dir);
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE(log->Log(1, "r", {{"loss", 1}}).ok());
    MetricsLog moved = std::move(*log);  // a log is a movable value; its files move with it
    ASSERT_TRUE(moved.Log(2, "r", {{"loss", 0.5}}).ok());
  }
  {
    auto log = MetricsLog::Open(dir);
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE(log->Log(3, "r", {{"loss", 0.25}}).ok());
  }
  std::vector<std::string> lines = Lines(dir + "/metrics.jsonl");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(nlohmann::json::parse(lines[2])["step"], 3);
  // Every event across the run's files (one, or two if the second open fell in another second).
  int summaries = 0;
  for (const std::string& name : ListDir(dir + "/tb/r")) {
    for (const tb::Event& e : ReadEvents(dir + "/tb/r/" + name)) summaries += e.has_summary();
  }
  EXPECT_EQ(summaries, 3);
}

// Whether every line of `path` is whole JSON and the file ends with a newline.
::testing::AssertionResult WholeJsonLines(const std::string& path) {
  const std::string text = ReadFile(path);
  if (!text.empty() && text.back() != '\n') return ::testing::AssertionFailure() << "torn last line";
  for (const std::string& line : Lines(path)) {
    if (!nlohmann::json::accept(line)) return ::testing::AssertionFailure() << "not JSON: " << line;
  }
  return ::testing::AssertionSuccess();
}

TEST(MetricsLogTest, ReopeningCutsATornLineBack) {
  // A write cut short (a full disk, a kill mid-write) left half a line; the resumed run's next line was
  // appended to it, which lost a row and made the file no longer JSON lines.
  const std::string dir = TestDir("torn_line");
  {
    auto log = MetricsLog::Open(dir);
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE(log->Log(1, "r", {{"loss", 1}}).ok());
  }
  std::ofstream(dir + "/metrics.jsonl", std::ios::app) << "{\"run\":\"r\",\"st";
  {
    auto log = MetricsLog::Open(dir);
    ASSERT_TRUE(log.ok()) << log.status();
    ASSERT_TRUE(log->Log(2, "r", {{"loss", 0.5}}).ok());
  }
  ASSERT_TRUE(WholeJsonLines(dir + "/metrics.jsonl"));
  std::vector<std::string> lines = Lines(dir + "/metrics.jsonl");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(lines[1])["step"], 2);
}

TEST(MetricsLogTest, AFullDiskLeavesOnlyWholeLines) {
  const std::string dir = TestDir("full_disk");
  ASSERT_TRUE(MetricsLog::Open(dir).ok());
  // Log until the disk is full (at 1000 bytes): the failed line is an error naming the file and is not
  // left half-written. The log is then reopened with room again, as a resumed run would.
  const int code = core::RunWithFileSizeLimit(1000, [&] {
    auto log = MetricsLog::Open(dir);
    for (int step = 0; step < 1000 && log.ok(); ++step) {
      absl::Status s = log->Log(step, "r", {{"loss", 1.0 / (step + 3)}});
      if (!s.ok()) return s.message().find("metrics.jsonl") == std::string::npos ? 2 : 0;
    }
    return 1;
  });
  ASSERT_EQ(code, 0) << "1: no write failed; 2: the error did not name the file";
  EXPECT_TRUE(WholeJsonLines(dir + "/metrics.jsonl"));
  auto log = MetricsLog::Open(dir);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_TRUE(log->Log(5000, "r", {{"loss", 0}}).ok());
  ASSERT_TRUE(WholeJsonLines(dir + "/metrics.jsonl"));
  EXPECT_EQ(nlohmann::json::parse(Lines(dir + "/metrics.jsonl").back())["step"], 5000);
}

TEST(MetricsLogTest, CutsATornTailOfAnEventFileBackToItsLastWholeRecord) {
  // What a full disk or a kill mid-write leaves: a record's prefix. Appending after it would make every
  // later record unreadable, so a reopened event file is cut back first.
  const std::string dir = TestDir("torn_events");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  const std::string path = dir + "/events.out.tfevents.1.host";
  tb::Event event;
  event.set_step(7);
  const std::string whole = FrameRecord(event.SerializeAsString());
  for (size_t torn : {size_t{0}, size_t{5}, size_t{12}, whole.size() - 1}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << whole << whole.substr(0, torn);
    absl::StatusOr<int64_t> cut = CutTornRecords(path);
    ASSERT_TRUE(cut.ok()) << cut.status();
    EXPECT_EQ(*cut, static_cast<int64_t>(torn));
    EXPECT_EQ(ReadFile(path), whole) << "torn after " << torn << " bytes";
  }
  EXPECT_FALSE(CutTornRecords(dir + "/missing").ok());
}

TEST(MetricsLogTest, UnwritableRunDirIsAStatus) {
  const std::string base = TestDir("unwritable");
  ASSERT_EQ(::mkdir(base.c_str(), 0755), 0);
  std::ofstream(base + "/a_file") << "x";
  auto log = MetricsLog::Open(base + "/a_file/run");
  ASSERT_FALSE(log.ok());
  EXPECT_THAT(log.status().message(), HasSubstr("a_file"));
  EXPECT_THAT(log.status().message(), HasSubstr("Not a directory"));
}

TEST(MetricsLogTest, RejectsBadRunNamesAndReservedScalars) {
  auto log = MetricsLog::Open(TestDir("bad_names"));
  ASSERT_TRUE(log.ok()) << log.status();
  for (const char* run : {"", "/abs", "a//b", "../escape", "a/./b", "trailing/"}) {
    absl::Status s = log->Log(1, run, {{"loss", 1}});
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << "run \"" << run << "\": " << s;
  }
  absl::Status s = log->Log(1, "ok", {{"step", 1}});
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_THAT(s.message(), HasSubstr("\"step\""));
  EXPECT_TRUE(Lines(log->jsonl_path()).empty());  // nothing was written for the rejected calls
}

}  // namespace
}  // namespace mimetic::train
