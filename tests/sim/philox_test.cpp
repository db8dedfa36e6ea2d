// Philox4x32-10 (philox.hpp) against the known-answer vectors published with
// Random123 (file tests/kat_vectors of github.com/DEShawResearch/random123,
// the "philox4x32 10" and "philox4x32 7" lines: counter, key, expected).
#include <doctest/doctest.h>

#include <set>

#include "ctmc/sim/neurons/philox.hpp"

using namespace ctmc::sim;

TEST_CASE("Philox4x32-10 reproduces the Random123 known-answer vectors") {
  struct Kat {
    PhiloxBlock ctr;
    PhiloxKey key;
    PhiloxBlock want;
  };
  const Kat kat10[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
       {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kat10) CHECK(philox4x32<10>(k.ctr, k.key) == k.want);
  // The 7-round lines check the round loop and key schedule separately from
  // the round count.
  const Kat kat7[] = {
      {{0x00000000, 0x00000000, 0x00000000, 0x00000000}, {0x00000000, 0x00000000},
       {0x5f6fb709, 0x0d893f64, 0x4f121f81, 0x4f730a48}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
       {0x5207ddc2, 0x45165e59, 0x4d8ee751, 0x8c52f662}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
       {0x4dfccaba, 0x190a87f0, 0xc47362ba, 0xb6b5242a}},
  };
  for (const Kat& k : kat7) CHECK(philox4x32<7>(k.ctr, k.key) == k.want);
  // The default is 10 rounds.
  CHECK(philox4x32(kat10[2].ctr, kat10[2].key) == kat10[2].want);
}

TEST_CASE("Philox uniforms: [0, 1) and (0, 1] from the top 53 bits of a word") {
  CHECK(philox_uniform(0) == 0.0);
  CHECK(philox_uniform(~std::uint64_t{0}) == 1.0 - 0x1.0p-53);
  CHECK(philox_uniform_pos(0) == 0x1.0p-53);
  CHECK(philox_uniform_pos(~std::uint64_t{0}) == 1.0);
  CHECK(philox_word({1, 2, 3, 4}, 0) == ((std::uint64_t{2} << 32) | 1));
  CHECK(philox_word({1, 2, 3, 4}, 1) == ((std::uint64_t{4} << 32) | 3));
  const PhiloxKey k = philox_key(0x0123456789abcdefULL);
  CHECK(k[0] == 0x89abcdefu);
  CHECK(k[1] == 0x01234567u);
  // Distinct counters give distinct blocks (a bijection for a fixed key).
  std::set<PhiloxBlock> seen;
  for (std::uint32_t i = 0; i < 1000; ++i) seen.insert(philox4x32({i, 0, 7, 1}, k));
  CHECK(seen.size() == 1000);
}
