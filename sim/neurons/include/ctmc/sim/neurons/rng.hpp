// Seeded random streams for the simulator (DESIGN.md sections 7 and 9).
//
// Reproducibility rule: every random result is fixed by --seed and identical
// for any --threads. Work is split into independent units (a trial, a sample,
// a start) and unit k draws only from its own stream
//   Rng(stream_seed(seed, k))        or   Rng(stream_seed(seed, k, sub)),
// never from a generator shared between threads, so the schedule cannot
// change the numbers.
//
// stream_seed and splitmix64 are the seeding module's
// (ctmc/core/seeding.hpp); Rng is xoshiro256** (Blackman and Vigna,
// "Scrambled linear pseudorandom number generators", ACM TOMS 2021), whose
// 256-bit state is filled from the seed by splitmix64 as its authors
// recommend. Rng satisfies the C++ UniformRandomBitGenerator requirements, so
// <random> distributions accept it.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "ctmc/core/seeding.hpp"
#include "ctmc/solvers/det_math.hpp"

namespace ctmc::sim {


class Rng {
 public:
  using result_type = std::uint64_t;
  explicit Rng(std::uint64_t seed);

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform on [0, 1): the top 53 bits, so every value is a multiple of 2^-53.
  double uniform() { return static_cast<double>((*this)() >> 11) * 0x1.0p-53; }
  // Uniform on (0, 1]: never 0, safe under log.
  double uniform_pos() { return static_cast<double>(((*this)() >> 11) + 1) * 0x1.0p-53; }
  // Exp(1) by inversion: -log U with U on (0, 1].
  double exponential() { return -detmath::log(uniform_pos()); }
  // Uniform integer on [0, n), n >= 1 (Lemire's multiply-shift; bias < n / 2^64).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>((*this)()) * n) >> 64);
  }

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace ctmc::sim
