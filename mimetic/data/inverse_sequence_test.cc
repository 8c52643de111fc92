#include "mimetic/data/inverse_sequence.h"

#include <algorithm>
#include <array>
#include <set>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "mimetic/core/key.h"
#include "mimetic/data/test_util.h"

namespace mimetic::data {
namespace {

using testing::ChiSquareCritical;
using testing::ChiSquareUniform;
using ::testing::HasSubstr;
using testing::HostBatch;
using testing::ToHost;

const core::Key kKey = core::Key::FromSeed(13);

struct Decoded {
  std::set<int32_t> g;
  int label = 0;     // 1..5.
  int omitted = -1;  // Index (lexicographic) of the permutation left out.
};

int PermutationIndex(const std::vector<int32_t>& sequence, const std::vector<int32_t>& sorted_g) {
  std::vector<int32_t> perm = sorted_g;
  int index = 0;
  do {
    if (perm == sequence) return index;
    ++index;
  } while (std::next_permutation(perm.begin(), perm.end()));
  return -1;
}

// Checks one row's layout (key sequences, separators, fillers, query, label) and decodes it.
Decoded DecodeRow(const HostBatch& host, int64_t b, int64_t n_layers, int lo, int hi) {
  const int64_t s = 23 + 3 * n_layers;
  EXPECT_EQ(host.seq_len, s);
  Decoded d;
  for (int i = 0; i < 3; ++i) d.g.insert(host.token(b, i));
  EXPECT_EQ(d.g.size(), 3u);
  const std::vector<int32_t> sorted_g(d.g.begin(), d.g.end());
  std::vector<std::vector<int32_t>> keys;
  std::set<int> used;
  for (int k = 0; k < 5; ++k) {
    std::vector<int32_t> sequence;
    for (int i = 0; i < 3; ++i) sequence.push_back(host.token(b, 4 * k + i));
    const int index = PermutationIndex(sequence, sorted_g);
    EXPECT_GE(index, 0) << "key sequence " << k << " is not a permutation of G";
    EXPECT_TRUE(used.insert(index).second) << "permutation repeated";
    keys.push_back(sequence);
    EXPECT_FALSE(d.g.count(host.token(b, 4 * k + 3))) << "separator in G";
  }
  for (int index = 0; index < 6; ++index) {
    if (!used.count(index)) d.omitted = index;
  }
  for (int64_t t = 20; t < 20 + 3 * n_layers; ++t) EXPECT_FALSE(d.g.count(host.token(b, t))) << "filler in G";
  for (int64_t t = 0; t < s; ++t) {
    EXPECT_GE(host.token(b, t), lo);
    EXPECT_LE(host.token(b, t), hi);
    EXPECT_EQ(host.loss(b, t), t == s - 1 ? 1.0f : 0.0f);
  }
  d.label = host.target(b, s - 1);
  EXPECT_GE(d.label, 1);
  EXPECT_LE(d.label, 5);
  if (d.label >= 1 && d.label <= 5) {
    std::vector<int32_t> query = {host.token(b, s - 3), host.token(b, s - 2), host.token(b, s - 1)};
    std::reverse(query.begin(), query.end());
    EXPECT_EQ(query, keys[d.label - 1]) << "the query is not the reverse of key sequence " << d.label;
  }
  return d;
}

bool SameResidue(const std::set<int32_t>& g) {
  std::set<int> residues;
  for (int32_t v : g) residues.insert(v % 3);
  return residues.size() == 1;
}

TEST(InverseSequenceTaskTest, SplitsFollowTheResidueRule) {
  for (InverseSplit split : {InverseSplit::kTrain, InverseSplit::kTest, InverseSplit::kOod}) {
    InverseSequenceConfig config;
    config.split = split;
    const std::unique_ptr<Task> task = MakeInverseSequenceTask(config).value();
    EXPECT_EQ(task->seq_len(), 29);
    EXPECT_EQ(task->model_vocab(), 201);
    const HostBatch host = ToHost(task->SampleTrain(kKey, 3000).value());
    const int lo = split == InverseSplit::kOod ? 101 : 20, hi = split == InverseSplit::kOod ? 200 : 100;
    std::vector<int64_t> labels(5, 0), omitted(6, 0);
    int same_residue = 0;
    for (int64_t b = 0; b < host.batch; ++b) {
      const Decoded d = DecodeRow(host, b, 2, lo, hi);
      same_residue += SameResidue(d.g);
      if (d.label >= 1 && d.label <= 5) ++labels[d.label - 1];
      if (d.omitted >= 0) ++omitted[d.omitted];
    }
    if (split == InverseSplit::kTrain) {
      EXPECT_EQ(same_residue, 0);
    } else if (split == InverseSplit::kTest) {
      EXPECT_EQ(same_residue, host.batch);
    } else {
      EXPECT_GT(same_residue, 0);  // Unconstrained: about 1 in 9.
      EXPECT_LT(same_residue, host.batch / 4);
    }
    EXPECT_LT(ChiSquareUniform(labels), ChiSquareCritical(4));
    EXPECT_LT(ChiSquareUniform(omitted), ChiSquareCritical(5));
  }
}

TEST(InverseSequenceTaskTest, DeeperModelsGetLongerFillers) {
  InverseSequenceConfig config;
  config.n_layers = 5;
  const std::unique_ptr<Task> task = MakeInverseSequenceTask(config).value();
  EXPECT_EQ(task->seq_len(), 38);
  const EvalBatch eval = task->SampleEval(kKey, 50, 38).value();
  const HostBatch host = ToHost(eval.batch);
  for (int64_t b = 0; b < host.batch; ++b) {
    DecodeRow(host, b, 5, 20, 100);
    EXPECT_EQ(eval.answer_positions[b], std::vector<int64_t>{37});
    EXPECT_EQ(eval.lengths[b], 38);
  }
  EXPECT_THAT(task->SampleEval(kKey, 1, 29).status().message(),
              HasSubstr("length = 29; expected the fixed sequence length 23 + 3 * n_layers = 38"));
}

TEST(InverseSequenceTaskTest, SameKeySameBatchAndBadConfigs) {
  const std::unique_ptr<Task> task = MakeInverseSequenceTask(InverseSequenceConfig{}).value();
  EXPECT_EQ(ToHost(task->SampleTrain(kKey, 8).value()).tokens,
            ToHost(task->SampleTrain(kKey, 8).value()).tokens);
  EXPECT_NE(ToHost(task->SampleTrain(kKey, 8).value()).tokens,
            ToHost(task->SampleTrain(core::FoldIn(kKey, 3), 8).value()).tokens);
  InverseSequenceConfig bad;
  bad.n_layers = 0;
  EXPECT_THAT(MakeInverseSequenceTask(bad).status().message(),
              HasSubstr("InverseSequenceConfig.n_layers = 0; expected 1 <= n_layers"));
  bad.n_layers = -2;
  EXPECT_EQ(MakeInverseSequenceTask(bad).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace mimetic::data
