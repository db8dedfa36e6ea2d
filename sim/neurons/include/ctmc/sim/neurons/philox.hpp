// Philox4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3" (SC 2011), as published in
// their Random123 library (philox4x32 with R = 10 rounds, its default).
//
// A counter-based generator is a keyed bijection of a 128-bit counter: the
// block for (counter, key) depends on nothing else, so a random number can be
// addressed instead of consumed in order. The spiking kernel keys it with a
// sample's stream seed and counts per neuron (its jump number, its index, its
// layer), so a neuron's draws do not depend on the order in which neurons or
// samples are processed, nor on the thread that runs them.
//
// One round (Random123 philox.h): with (hi0, lo0) = M0 * c0 and
// (hi1, lo1) = M1 * c2 as 64-bit products,
//   c = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0),
// and the key is bumped by the Weyl constants (W0, W1) before every round but
// the first. tests/sim/philox_test.cpp checks the published known-answer
// vectors (Random123 tests/kat_vectors).
#pragma once
#include <array>
#include <cstdint>

namespace ctmc::sim {

using PhiloxBlock = std::array<std::uint32_t, 4>;
using PhiloxKey = std::array<std::uint32_t, 2>;

template <int Rounds = 10>
constexpr PhiloxBlock philox4x32(PhiloxBlock c, PhiloxKey k) {
  constexpr std::uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
  constexpr std::uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
  for (int r = 0; r < Rounds; ++r) {
    if (r > 0) {
      k[0] += W0;
      k[1] += W1;
    }
    const std::uint64_t p0 = static_cast<std::uint64_t>(M0) * c[0];
    const std::uint64_t p1 = static_cast<std::uint64_t>(M1) * c[2];
    const auto hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const auto hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
  }
  return c;
}

// The two 64-bit words of a block (word 0 = c1:c0, word 1 = c3:c2).
inline std::uint64_t philox_word(const PhiloxBlock& b, int w) {
  return static_cast<std::uint64_t>(b[2 * w]) | (static_cast<std::uint64_t>(b[2 * w + 1]) << 32);
}
// Uniform on [0, 1) and on (0, 1] from a 64-bit word: its top 53 bits, like Rng.
inline double philox_uniform(std::uint64_t x) { return static_cast<double>(x >> 11) * 0x1.0p-53; }
inline double philox_uniform_pos(std::uint64_t x) { return static_cast<double>((x >> 11) + 1) * 0x1.0p-53; }

inline PhiloxKey philox_key(std::uint64_t seed) {
  return {static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32)};
}

}  // namespace ctmc::sim
