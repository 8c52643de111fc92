// RandomStream: an endless stream of random words drawn from one core::Key, for data generators
// whose number of draws is not known in advance (packing, rejection sampling). Word pair i is the
// Threefry-2x32 block function (key.h) applied to the 64-bit counter i, so the stream is a pure
// function of the key, allocates nothing and costs one 20-round block per two words.
//
//   RandomStream rng(core::FoldIn(batch_key, row));  // one independent stream per row
//   int64_t len = rng.UniformInt(min_len, max_len);   // inclusive, exactly uniform
//   int64_t letter = rng.UniformBelow(vocab);         // [0, vocab), exactly uniform
//
// Integers are exactly uniform (Lemire's multiply-shift with rejection of the biased zone, "Fast
// Random Integer Generation in an Interval", ACM TOMACS 2019), not merely "bias below 2^-32".
//
// DistinctSampler draws k distinct integers from [0, n) in uniformly random order, reusing its
// scratch memory between calls (so a batch of rows costs no per-row allocation).
#ifndef MIMETIC_DATA_RANDOM_STREAM_H_
#define MIMETIC_DATA_RANDOM_STREAM_H_

#include <array>
#include <cstdint>
#include <vector>

#include "mimetic/core/key.h"

namespace mimetic::data {

class RandomStream {
 public:
  explicit RandomStream(core::Key key) : key_(key) {}

  // The next uniformly random 32-bit word.
  uint32_t NextWord() {
    if (have_spare_) {
      have_spare_ = false;
      return spare_;
    }
    const std::array<uint32_t, 2> y = core::Threefry2x32(
        key_.words(), {static_cast<uint32_t>(counter_ >> 32), static_cast<uint32_t>(counter_)});
    ++counter_;
    spare_ = y[1];
    have_spare_ = true;
    return y[0];
  }
  // The next uniformly random 64-bit word (two 32-bit words, high first).
  uint64_t NextWord64() {
    const uint64_t high = NextWord();
    return (high << 32) | NextWord();
  }

  // Uniform in [0, n) for n >= 1 (checked); exact.
  int64_t UniformBelow(int64_t n);
  // Uniform in [lo, hi], both inclusive, lo <= hi (checked); exact.
  int64_t UniformInt(int64_t lo, int64_t hi) { return lo + UniformBelow(hi - lo + 1); }

 private:
  core::Key key_;
  uint64_t counter_ = 0;
  uint32_t spare_ = 0;
  bool have_spare_ = false;
};

class DistinctSampler {
 public:
  // Writes k distinct integers from [0, n) to out[0, k), every ordered k-tuple equally likely.
  // 0 <= k <= n (checked). Sparse draws (k <= n / 4) use rejection against a generation-stamped
  // table of size n (O(k) expected work); dense draws use a partial Fisher-Yates shuffle (O(n)).
  void Sample(RandomStream& rng, int64_t n, int64_t k, int32_t* out);

 private:
  std::vector<uint32_t> stamp_;  // stamp_[v] == generation_ <=> v already drawn in this call.
  uint32_t generation_ = 0;
  std::vector<int32_t> pool_;  // Fisher-Yates scratch.
};

}  // namespace mimetic::data

#endif  // MIMETIC_DATA_RANDOM_STREAM_H_
