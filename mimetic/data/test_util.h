// Test helpers for mimetic/data: a batch read back to host vectors, and Pearson chi-square checks.
#ifndef MIMETIC_DATA_TEST_UTIL_H_
#define MIMETIC_DATA_TEST_UTIL_H_

#include <cmath>
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "mimetic/data/batch.h"

namespace mimetic::data::testing {

struct HostBatch {
  int64_t batch = 0;
  int64_t seq_len = 0;
  std::vector<int32_t> tokens;   // (B, T)
  std::vector<int32_t> targets;  // (B, T)
  std::vector<float> mask;       // (B, T)

  int32_t token(int64_t b, int64_t t) const { return tokens[b * seq_len + t]; }
  int32_t target(int64_t b, int64_t t) const { return targets[b * seq_len + t]; }
  float loss(int64_t b, int64_t t) const { return mask[b * seq_len + t]; }
  // Row b as full ids (T+1): tokens[b] followed by the last target.
  std::vector<int32_t> ids(int64_t b) const {
    std::vector<int32_t> row(tokens.begin() + b * seq_len, tokens.begin() + (b + 1) * seq_len);
    row.push_back(target(b, seq_len - 1));
    return row;
  }
};

inline HostBatch ToHost(const Batch& batch) {
  HostBatch host;
  EXPECT_EQ(batch.tokens.rank(), 2);
  EXPECT_EQ(batch.tokens.dtype(), core::DType::kI32);
  EXPECT_EQ(batch.targets.dtype(), core::DType::kI32);
  EXPECT_EQ(batch.loss_mask.dtype(), core::DType::kF32);
  EXPECT_EQ(batch.targets.shape(), batch.tokens.shape());
  EXPECT_EQ(batch.loss_mask.shape(), batch.tokens.shape());
  host.batch = batch.tokens.dim(0);
  host.seq_len = batch.tokens.dim(1);
  host.tokens = batch.tokens.ToVector<int32_t>().value();
  host.targets = batch.targets.ToVector<int32_t>().value();
  host.mask = batch.loss_mask.ToVector<float>().value();
  return host;
}

// Pearson's statistic of `counts` against probabilities `p` (same size, summing to 1).
inline double ChiSquare(const std::vector<int64_t>& counts, const std::vector<double>& p) {
  int64_t total = 0;
  for (int64_t c : counts) total += c;
  double stat = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double expected = p[i] * total;
    stat += (counts[i] - expected) * (counts[i] - expected) / expected;
  }
  return stat;
}

inline double ChiSquareUniform(const std::vector<int64_t>& counts) {
  return ChiSquare(counts, std::vector<double>(counts.size(), 1.0 / counts.size()));
}

// Upper 1e-4 quantile of chi-square with `df` degrees of freedom (Wilson-Hilferty, z = 3.719).
// The samples are fixed by their keys, so a pass is stable; this bounds how lucky the key was.
inline double ChiSquareCritical(int64_t df) {
  const double a = 2.0 / (9.0 * df);
  const double c = 1.0 - a + 3.719 * std::sqrt(a);
  return df * c * c * c;
}

}  // namespace mimetic::data::testing

#endif  // MIMETIC_DATA_TEST_UTIL_H_
