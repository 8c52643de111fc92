#include "mimetic/core/key.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace mimetic::core {
namespace {

using ::testing::ElementsAre;

using Words = std::array<uint32_t, 2>;

// Random123's known answers for threefry2x32_20, as quoted by JAX's tests/random_test.py
// (PrngTest.testThreefry2x32, which cites Random123-Boost libs/random/test/test_threefry.cpp).
TEST(Threefry2x32Test, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(Threefry2x32({0, 0}, {0, 0}), (Words{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(Threefry2x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (Words{0x1cb996fc, 0xbb002be7}));
  EXPECT_EQ(Threefry2x32({0x13198a2e, 0x03707344}, {0x243f6a88, 0x85a308d3}),
            (Words{0xc4923a9c, 0x483df7a0}));
}

// JAX's tests/random_test.py, test_prng_seeds_and_keys: PRNGKey(seed) = [seed >> 32, seed & 0xFFFFFFFF].
TEST(KeyTest, FromSeedMatchesJax) {
  EXPECT_EQ(Key::FromSeed(0).words(), (Words{0, 0}));
  EXPECT_EQ(Key::FromSeed(3).words(), (Words{0, 3}));
  EXPECT_EQ(Key::FromSeed(2147483747).words(), (Words{0, 2147483747}));
  // seed -1 and -3 as int64 with jax_enable_x64 on.
  EXPECT_EQ(Key::FromSeed(static_cast<uint64_t>(int64_t{-1})).words(), (Words{4294967295u, 4294967295u}));
  EXPECT_EQ(Key::FromSeed(static_cast<uint64_t>(int64_t{-3})).words(), (Words{4294967295u, 4294967293u}));
}

TEST(KeyTest, EqualityAndDebugString) {
  EXPECT_EQ(Key::FromSeed(42), Key::FromWords({0, 42}));
  EXPECT_NE(Key::FromSeed(42), Key::FromSeed(43));
  EXPECT_EQ(Key::FromSeed(42).DebugString(), "Key(0x00000000, 0x0000002a)");
  EXPECT_EQ(Key::FromSeed(0xdeadbeef00000001ull).DebugString(), "Key(0xdeadbeef, 0x00000001)");
}

// JAX's tests/random_test.py, PrngTest.testPRNGValues (classic threefry): split(PRNGKey(0), 4) and
// fold_in(PRNGKey(0), 4).
TEST(KeyTest, SplitAndFoldInMatchJaxPrngValues) {
  const Key key = Key::FromSeed(0);
  const std::vector<Key> keys = Split(key, 4);
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0].words(), (Words{2285895361u, 1501764800u}));
  EXPECT_EQ(keys[1].words(), (Words{1518642379u, 4090693311u}));
  EXPECT_EQ(keys[2].words(), (Words{433833334u, 4221794875u}));
  EXPECT_EQ(keys[3].words(), (Words{839183663u, 3740430601u}));
  EXPECT_EQ(FoldIn(key, 4).words(), (Words{2285895361u, 433833334u}));
}

// jax.random.split(PRNGKey(0)) as printed in JAX's "Pseudo Random Numbers in JAX" tutorial (classic
// threefry): new key [4146024105 967050713], subkey [2718843009 1272950319].
TEST(KeyTest, DefaultSplitMatchesJaxTutorial) {
  const Key key = Key::FromSeed(0);
  const std::vector<Key> keys = Split(key);
  ASSERT_EQ(keys.size(), 2u);
  EXPECT_EQ(keys[0].words(), (Words{4146024105u, 967050713u}));
  EXPECT_EQ(keys[1].words(), (Words{2718843009u, 1272950319u}));
  const auto [a, b] = Split2(key);
  EXPECT_EQ(a, keys[0]);
  EXPECT_EQ(b, keys[1]);
}

TEST(KeyTest, SplitAtAgreesWithSplit) {
  const Key key = Key::FromSeed(7);
  for (int n : {1, 2, 3, 4, 7, 16}) {
    const std::vector<Key> keys = Split(key, n);
    for (int i = 0; i < n; ++i) EXPECT_EQ(SplitAt(key, n, i), keys[i]) << "n=" << n << " i=" << i;
  }
  EXPECT_TRUE(Split(key, 0).empty());
}

// JAX's tests/random_test.py, PrngTest.testRngRandomBits (classic threefry): PRNGKey(1701).
TEST(RandomBitsTest, MatchesJaxRandomBits) {
  const Key key = Key::FromSeed(1701);
  EXPECT_THAT(RandomBits(key, 3), ElementsAre(56197195u, 4200222568u, 961309823u));
  EXPECT_THAT(RandomBits64(key, 3),
              ElementsAre(3982329540505020460ull, 16822122385914693683ull, 7882654074788531506ull));
}

// JAX's tests/random_test.py, _RANDOM_VALUES_CASES "bits" for threefry2x32: the key is
// PRNGKey(zlib.adler32(b"bitsthreefry2x32")) = PRNGKey(942802475).
TEST(RandomBitsTest, MatchesJaxRandomValuesCases) {
  const Key key = Key::FromSeed(942802475);
  EXPECT_THAT(RandomBits(key, 5),
              ElementsAre(1978747883u, 4134381225u, 3628107870u, 689687174u, 2788938207u));
  EXPECT_THAT(RandomBits64(key, 5),
              ElementsAre(17649965731882839947ull, 1415307058040849897ull, 8282622628079774249ull,
                          14024425113645909402ull, 2012979996110532418ull));
}

TEST(RandomBitsTest, OddAndEvenLengthsAndPrefixStructure) {
  const Key key = Key::FromSeed(5);
  EXPECT_TRUE(RandomBits(key, 0).empty());
  // One word: counters [0, pad 0] hash to one block, whose first word is kept.
  EXPECT_THAT(RandomBits(key, 1), ElementsAre(Threefry2x32(key.words(), {0, 0})[0]));
  // Four words hash the pairs (0, 2) and (1, 3): the same words as Split(key, 2).
  const std::vector<uint32_t> four = RandomBits(key, 4);
  const std::vector<Key> halves = Split(key, 2);
  EXPECT_THAT(four, ElementsAre(halves[0].words()[0], halves[0].words()[1], halves[1].words()[0],
                                halves[1].words()[1]));
  // Five words: counters (0, 3), (1, 4), (2, pad 0).
  const std::vector<uint32_t> five = RandomBits(key, 5);
  const Words b0 = Threefry2x32(key.words(), {0, 3});
  const Words b1 = Threefry2x32(key.words(), {1, 4});
  const Words b2 = Threefry2x32(key.words(), {2, 0});
  EXPECT_THAT(five, ElementsAre(b0[0], b1[0], b2[0], b0[1], b1[1]));
}

TEST(FoldInTest, FnvIsTheStandard64BitFnv1a) {
  EXPECT_EQ(Fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(Fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(Fnv1a64("foobar"), 0x85944171f73967e8ull);
}

// Path keys are part of every checkpointed experiment's identity, so they must never change. The
// values below were computed by this implementation and cross-checked against an independent
// Python re-implementation of threefry_2x32 / fold_in / FNV-1a (run once while writing this test;
// the same script reproduced JAX's published split and fold_in values above).
TEST(FoldInTest, PathFoldInIsStable) {
  const Key key = Key::FromSeed(42);
  EXPECT_EQ(Fnv1a64("layers/3/mixer/A_log"), 0x2ecff9424270fffaull);
  EXPECT_EQ(FoldIn(key, "layers/3/mixer/A_log").words(), (Words{0x71fb9196u, 0x0b4221cfu}));
  EXPECT_EQ(FoldIn(key, "embedding/weight").words(), (Words{0x037d84e1u, 0x8b02b83bu}));
  EXPECT_EQ(FoldIn(key, "layers/0/mixer/in_proj/kernel").words(), (Words{0x8acd80fbu, 0xd2e7fc2cu}));
  EXPECT_EQ(FoldIn(key, "").words(), (Words{0x308d4526u, 0x0580cb64u}));
  const uint64_t h = Fnv1a64("embedding/weight");
  EXPECT_EQ(FoldIn(key, "embedding/weight"),
            FoldIn(FoldIn(key, static_cast<uint32_t>(h >> 32)), static_cast<uint32_t>(h)));
}

TEST(FoldInTest, NearbyPathsAndIndicesGiveDifferentKeys) {
  const Key key = Key::FromSeed(0);
  EXPECT_NE(FoldIn(key, "layers/1/w"), FoldIn(key, "layers/2/w"));
  EXPECT_NE(FoldIn(key, "layers/1/w"), FoldIn(key, "layers/1/w "));
  EXPECT_NE(FoldIn(key, 0u), FoldIn(key, 1u));
  EXPECT_NE(FoldIn(key, 0u), key);
}

// Derives about 10^5 keys through trees of Split, FoldIn(index) and FoldIn(path) and checks that
// no two are equal (a collision would silently give two parameters the same initialization).
TEST(KeyTest, DerivedKeysAreAllDistinct) {
  absl::flat_hash_set<Key> seen;
  int64_t derived = 0;
  auto insert = [&](Key k) {
    ++derived;
    EXPECT_TRUE(seen.insert(k).second) << "duplicate key " << k.DebugString() << " after " << derived;
  };
  const Key root = Key::FromSeed(0);
  insert(root);
  const std::vector<std::string> paths = {"embedding/weight", "layers/0/mixer/A_log", "layers/1/mixer/A_log",
                                          "layers/0/mixer/in_proj", "lm_head"};
  for (const Key& branch : Split(root, 16)) {
    insert(branch);
    for (uint32_t i = 0; i < 1000; ++i) {
      const Key child = FoldIn(branch, i);
      insert(child);
      for (const std::string& path : paths) insert(FoldIn(child, path));
      const auto [left, right] = Split2(child);
      insert(left);
      insert(right);
    }
  }
  // FoldIn with a sequence of indices on one key, and a chain of splits.
  Key chain = Key::FromSeed(1);
  for (int i = 0; i < 4000; ++i) {
    const auto [next, leaf] = Split2(chain);
    insert(leaf);
    insert(FoldIn(leaf, absl::StrCat("step/", i)));
    chain = next;
  }
  EXPECT_GE(derived, 100000);
  EXPECT_EQ(static_cast<int64_t>(seen.size()), derived);
}

}  // namespace
}  // namespace mimetic::core
