#include "mimetic/core/key.h"

#include "absl/strings/str_format.h"
#include "mimetic/core/status.h"

namespace mimetic::core {
namespace {

inline uint32_t RotateLeft(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// The words threefry_2x32(key, iota(count)) for count < 2^32, written to out[0, count). JAX pads an
// odd count with one zero counter, splits the counters in halves x0 = [0, m), x1 = [m, 2m) with
// m = ceil(count / 2), hashes the pairs (x0[i], x1[i]), concatenates the first output words with
// the second ones and drops the padding word.
void ThreefryIota(Key key, uint64_t count, uint32_t* out) {
  const uint64_t m = (count + 1) / 2;
  for (uint64_t i = 0; i < m; ++i) {
    const uint64_t j = m + i;  // Second counter; == count only for the padding word.
    const uint32_t second = j < count ? static_cast<uint32_t>(j) : 0u;
    const std::array<uint32_t, 2> y = Threefry2x32(key.words(), {static_cast<uint32_t>(i), second});
    out[i] = y[0];
    if (j < count) out[j] = y[1];
  }
}

// Word `index` of threefry_2x32(key, iota(count)), without computing the others.
uint32_t ThreefryIotaWord(Key key, uint64_t count, uint64_t index) {
  const uint64_t m = (count + 1) / 2;
  const uint64_t i = index < m ? index : index - m;
  const uint64_t j = m + i;
  const uint32_t second = j < count ? static_cast<uint32_t>(j) : 0u;
  const std::array<uint32_t, 2> y = Threefry2x32(key.words(), {static_cast<uint32_t>(i), second});
  return index < m ? y[0] : y[1];
}

}  // namespace

std::string Key::DebugString() const { return absl::StrFormat("Key(0x%08x, 0x%08x)", words_[0], words_[1]); }

std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> counter) {
  // Rotation constants for Threefry-2x32 (Random123, after Skein's Threefish), alternating every
  // four rounds; a key injection follows each group of four, with the third key word
  // k0 ^ k1 ^ 0x1BD11BDA (the Skein key-schedule parity constant) and the injection count added.
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {key[0], key[1], key[0] ^ key[1] ^ 0x1BD11BDAu};
  uint32_t x0 = counter[0] + ks[0];
  uint32_t x1 = counter[1] + ks[1];
  for (int group = 0; group < 5; ++group) {  // 5 groups x 4 rounds = 20 rounds.
    for (int r : kRotations[group % 2]) {
      x0 += x1;
      x1 = RotateLeft(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

std::vector<Key> Split(Key key, int n) {
  MIMETIC_CHECK(n >= 0) << "Split: n = " << n << ", expected n >= 0";
  std::vector<uint32_t> words(2 * static_cast<size_t>(n));
  ThreefryIota(key, words.size(), words.data());
  std::vector<Key> keys;
  keys.reserve(n);
  for (int i = 0; i < n; ++i) keys.push_back(Key::FromWords({words[2 * i], words[2 * i + 1]}));
  return keys;
}

std::array<Key, 2> Split2(Key key) {
  // threefry_2x32(key, [0, 1, 2, 3]) hashes the pairs (0, 2) and (1, 3); the first key is the first
  // words of both hashes, the second key their second words.
  const std::array<uint32_t, 2> a = Threefry2x32(key.words(), {0, 2});
  const std::array<uint32_t, 2> b = Threefry2x32(key.words(), {1, 3});
  return {Key::FromWords({a[0], b[0]}), Key::FromWords({a[1], b[1]})};
}

Key SplitAt(Key key, int n, int i) {
  MIMETIC_CHECK(0 <= i && i < n) << "SplitAt: i = " << i << ", expected 0 <= i < n = " << n;
  const uint64_t count = 2 * static_cast<uint64_t>(n);
  return Key::FromWords({ThreefryIotaWord(key, count, 2 * static_cast<uint64_t>(i)),
                         ThreefryIotaWord(key, count, 2 * static_cast<uint64_t>(i) + 1)});
}

Key FoldIn(Key key, uint32_t data) {
  // threefry_seed(data) = [0, data] for a 32-bit datum; two counters form a single pair.
  return Key::FromWords(Threefry2x32(key.words(), {0u, data}));
}

uint64_t Fnv1a64(std::string_view bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Key FoldIn(Key key, std::string_view path) {
  const uint64_t hash = Fnv1a64(path);
  return FoldIn(FoldIn(key, static_cast<uint32_t>(hash >> 32)), static_cast<uint32_t>(hash & 0xFFFFFFFFu));
}

std::vector<uint32_t> RandomBits(Key key, int64_t n) {
  MIMETIC_CHECK(n >= 0) << "RandomBits: n = " << n << ", expected n >= 0";
  std::vector<uint32_t> bits(static_cast<size_t>(n));
  // JAX's counters are uint32, so it hashes at most 2^32 - 1 counters per key: a longer request is
  // served by Split(key, blocks + 1), whole blocks of 2^32 - 1 words from the first keys and the
  // remainder from the last (`_threefry_random_bits_original`).
  constexpr uint64_t kBlock = 0xFFFFFFFFull;
  const uint64_t total = static_cast<uint64_t>(n);
  const uint64_t blocks = total / kBlock;
  if (blocks == 0) {
    ThreefryIota(key, total, bits.data());
    return bits;
  }
  const std::vector<Key> keys = Split(key, static_cast<int>(blocks + 1));
  for (uint64_t b = 0; b < blocks; ++b) ThreefryIota(keys[b], kBlock, bits.data() + b * kBlock);
  ThreefryIota(keys.back(), total - blocks * kBlock, bits.data() + blocks * kBlock);
  return bits;
}

std::vector<uint64_t> RandomBits64(Key key, int64_t n) {
  MIMETIC_CHECK(n >= 0) << "RandomBits64: n = " << n << ", expected n >= 0";
  const std::vector<uint32_t> words = RandomBits(key, 2 * n);
  std::vector<uint64_t> bits(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) bits[i] = (static_cast<uint64_t>(words[i]) << 32) | words[n + i];
  return bits;
}

}  // namespace mimetic::core
