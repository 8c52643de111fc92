#include "mimetic/data/random_stream.h"

#include <algorithm>
#include <numeric>

#include "mimetic/core/status.h"

namespace mimetic::data {

int64_t RandomStream::UniformBelow(int64_t n) {
  MIMETIC_CHECK(n >= 1) << "UniformBelow: n = " << n << ", expected n >= 1";
  if (n <= (int64_t{1} << 32)) {
    // Lemire: the high word of word * n is uniform on [0, n) once the low words below
    // 2^32 mod n (the zone that would be hit once more than the others) are rejected.
    const uint64_t range = static_cast<uint64_t>(n);
    uint64_t product = static_cast<uint64_t>(NextWord()) * range;
    uint32_t low = static_cast<uint32_t>(product);
    if (low < range) {
      const uint32_t threshold = static_cast<uint32_t>((uint64_t{1} << 32) % range);
      while (low < threshold) {
        product = static_cast<uint64_t>(NextWord()) * range;
        low = static_cast<uint32_t>(product);
      }
    }
    return static_cast<int64_t>(product >> 32);
  }
  // Wide ranges: reject the top 2^64 mod n words, then reduce.
  const uint64_t range = static_cast<uint64_t>(n);
  const uint64_t excess = (0 - range) % range;  // 2^64 mod n.
  uint64_t word = NextWord64();
  while (word > ~uint64_t{0} - excess) word = NextWord64();
  return static_cast<int64_t>(word % range);
}

void DistinctSampler::Sample(RandomStream& rng, int64_t n, int64_t k, int32_t* out) {
  MIMETIC_CHECK(0 <= k && k <= n) << "DistinctSampler: k = " << k << ", n = " << n;
  if (k == 0) return;
  if (4 * k <= n) {
    if (static_cast<int64_t>(stamp_.size()) < n) stamp_.resize(n, 0);
    if (++generation_ == 0) {  // Wrapped: forget every old stamp.
      std::fill(stamp_.begin(), stamp_.end(), 0);
      generation_ = 1;
    }
    for (int64_t i = 0; i < k; ++i) {
      int64_t v = rng.UniformBelow(n);
      while (stamp_[v] == generation_) v = rng.UniformBelow(n);
      stamp_[v] = generation_;
      out[i] = static_cast<int32_t>(v);
    }
    return;
  }
  pool_.resize(n);
  std::iota(pool_.begin(), pool_.end(), 0);
  for (int64_t i = 0; i < k; ++i) {
    const int64_t j = i + rng.UniformBelow(n - i);
    std::swap(pool_[i], pool_[j]);
    out[i] = pool_[i];
  }
}

}  // namespace mimetic::data
