// Debian's protobuf 3.21 works under Bazel's native proto rules: a text-format config parses, prints
// and parses back to an equal message, and a malformed config is reported with line and column.
#include <string>
#include <vector>

#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "third_party/tests/example.pb.h"

namespace mimetic::third_party_tests {
namespace {

using ::google::protobuf::TextFormat;
using ::google::protobuf::util::MessageDifferencer;

constexpr char kConfig[] = R"pb(
  name: "copy"
  steps: 4000
  learning_rate: 0.001
  mimetic_init: true
  layers { kind: MAMBA1 d_state: 16 }
  layers { kind: ATTENTION }
  eval_lengths: [ 50, 100, 200 ]
  tags { key: "figure" value: "2" }
)pb";

TEST(ProtoRoundTripTest, TextFormatRoundTripIsLossless) {
  ExampleConfig config;
  ASSERT_TRUE(TextFormat::ParseFromString(kConfig, &config));
  EXPECT_EQ(config.name(), "copy");
  EXPECT_EQ(config.steps(), 4000);
  EXPECT_DOUBLE_EQ(config.learning_rate(), 0.001);
  EXPECT_TRUE(config.mimetic_init());
  ASSERT_EQ(config.layers_size(), 2);
  EXPECT_EQ(config.layers(0).kind(), Layer::MAMBA1);
  EXPECT_EQ(config.layers(0).d_state(), 16);
  EXPECT_EQ(config.layers(1).kind(), Layer::ATTENTION);
  EXPECT_EQ(config.eval_lengths_size(), 3);
  EXPECT_EQ(config.tags().at("figure"), "2");

  std::string printed;
  ASSERT_TRUE(TextFormat::PrintToString(config, &printed));
  ExampleConfig reparsed;
  ASSERT_TRUE(TextFormat::ParseFromString(printed, &reparsed)) << printed;
  EXPECT_TRUE(MessageDifferencer::Equals(config, reparsed)) << printed;
  // Binary serialization agrees too.
  EXPECT_EQ(config.SerializeAsString(), reparsed.SerializeAsString());
}

// Collects parser errors instead of logging them to stderr.
class CollectingErrors : public ::google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    errors.push_back(std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message);
  }
  std::vector<std::string> errors;
};

TEST(ProtoRoundTripTest, ParseErrorIsReportedWithPosition) {
  CollectingErrors collector;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  ExampleConfig config;
  // Line 2 names a field the message lacks.
  EXPECT_FALSE(parser.ParseFromString("name: \"copy\"\nnot_a_field: 3\n", &config));
  ASSERT_EQ(collector.errors.size(), 1u);
  EXPECT_EQ(collector.errors[0].rfind("2:", 0), 0u) << collector.errors[0];
  EXPECT_NE(collector.errors[0].find("not_a_field"), std::string::npos) << collector.errors[0];

  // A type error: steps is an integer.
  collector.errors.clear();
  EXPECT_FALSE(parser.ParseFromString("steps: \"many\"", &config));
  EXPECT_FALSE(collector.errors.empty());
}

}  // namespace
}  // namespace mimetic::third_party_tests
