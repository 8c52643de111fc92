// Key: a Threefry-2x32 PRNG key (two uint32 words), bit-compatible with JAX's legacy
// `jax.random.PRNGKey` under the classic (non-partitionable) threefry implementation,
// i.e. JAX with `jax_threefry_partitionable=False`.
//
//   Key key = Key::FromSeed(0);                     // jax.random.PRNGKey(0)
//   auto [params_key, data_key] = Split2(key);      // jax.random.split(key)
//   Key layer = FoldIn(params_key, 3);              // jax.random.fold_in(params_key, 3)
//   Key a_log = FoldIn(layer, "mixer/A_log");       // mimetic only: FNV-1a-64 of the path, folded in
//   std::vector<uint32_t> bits = RandomBits(a_log, 16);  // jax.random.bits(a_log, (16,))
//
// Keys are values: every function here is a pure function of its arguments, so the same key gives
// the same bits on every machine. Never use one key twice for different purposes: Split it for
// siblings, FoldIn an index or a path for named children (docs/architecture.md, "Keys, never
// global randomness"). The samplers that turn bits into floats and integers are in random.h.
#ifndef MIMETIC_CORE_KEY_H_
#define MIMETIC_CORE_KEY_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mimetic::core {

class Key {
 public:
  // jax.random.PRNGKey(seed) for the threefry implementation: the words are the seed's high and low
  // 32 bits, [seed >> 32, seed & 0xFFFFFFFF] (JAX's `threefry_seed`). With jax_enable_x64 off, JAX
  // keeps only the low 32 bits of a Python int seed; seeds below 2^32 agree either way.
  static Key FromSeed(uint64_t seed) {
    return Key(static_cast<uint32_t>(seed >> 32), static_cast<uint32_t>(seed & 0xFFFFFFFFu));
  }
  // A key with the given raw words (jax.random.key_data order), e.g. read back from a checkpoint.
  static Key FromWords(std::array<uint32_t, 2> words) { return Key(words[0], words[1]); }

  const std::array<uint32_t, 2>& words() const { return words_; }

  bool operator==(const Key& other) const { return words_ == other.words_; }
  bool operator!=(const Key& other) const { return words_ != other.words_; }
  template <typename H>
  friend H AbslHashValue(H h, const Key& key) {
    return H::combine(std::move(h), key.words_[0], key.words_[1]);
  }

  std::string DebugString() const;  // "Key(0x00000000, 0x0000002a)"

 private:
  Key(uint32_t word0, uint32_t word1) : words_{word0, word1} {}
  std::array<uint32_t, 2> words_;
};

// The Threefry-2x32 block function with 20 rounds (Salmon et al., "Parallel Random Numbers: As Easy
// as 1, 2, 3", SC'11; Random123's threefry2x32_20): encrypts `counter` under `key`. This is JAX's
// `threefry2x32_p` applied to one pair of counter words.
std::array<uint32_t, 2> Threefry2x32(std::array<uint32_t, 2> key, std::array<uint32_t, 2> counter);

// jax.random.split(key, n), classic mode: the 2n words threefry_2x32(key, iota(2n)), read as n
// consecutive pairs. n must be >= 0 (checked).
std::vector<Key> Split(Key key, int n = 2);
// Split(key, 2) as a pair: `auto [a, b] = Split2(key);`.
std::array<Key, 2> Split2(Key key);
// Split(key, n)[i], computed without the other n - 1 keys. 0 <= i < n (checked).
Key SplitAt(Key key, int n, int i);

// jax.random.fold_in(key, data): threefry_2x32(key, [0, data]).
Key FoldIn(Key key, uint32_t data);
// Folds in a string such as a parameter path ("layers/3/mixer/A_log"). Not in JAX: the path is
// hashed with 64-bit FNV-1a over its bytes (offset basis 0xcbf29ce484222325, prime 0x100000001b3),
// and the hash is folded in as two words, high then low: FoldIn(FoldIn(key, h >> 32), h & 0xFFFFFFFF).
// 64 bits rather than 32 so that two paths of one model practically never share a key (a 32-bit hash
// makes a collision among 10^4 paths about 1% likely). Stable: pinned by key_test.
Key FoldIn(Key key, std::string_view path);
// The 64-bit FNV-1a hash FoldIn(Key, string_view) uses.
uint64_t Fnv1a64(std::string_view bytes);

// jax.random.bits(key, (n,), uint32), classic mode (`_threefry_random_bits_original` for width 32):
// threefry_2x32(key, iota(n)) — the counts are split in halves, hashed pairwise, the two output
// halves concatenated, and a padding word dropped when n is odd. n >= 0 (checked).
std::vector<uint32_t> RandomBits(Key key, int64_t n);
// jax.random.bits(key, (n,), uint64) with jax_enable_x64, classic mode: the 2n words w of
// RandomBits(key, 2n) combined as (w[i] << 32) | w[n + i].
std::vector<uint64_t> RandomBits64(Key key, int64_t n);

}  // namespace mimetic::core

#endif  // MIMETIC_CORE_KEY_H_
