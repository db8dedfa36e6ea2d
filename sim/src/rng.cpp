// Seed derivation for per-unit random streams: see rng.hpp.
#include "ctmc/sim/rng.hpp"

namespace ctmc::sim {

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  // Mix the seed, add the stream index times an odd constant (a bijection of
  // the stream index mod 2^64), mix again: for a fixed seed distinct streams
  // give distinct stream seeds, and (seed, stream) is not symmetric (mixing
  // both with the same function and XOR-ing would make (3, 5) equal (5, 3)).
  std::uint64_t s = seed;
  const std::uint64_t h = splitmix64_next(s);
  return mix64(h + (stream + 1) * 0xd1b54a32d192ed03ULL);
}

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream, std::uint64_t sub) {
  return stream_seed(stream_seed(seed, stream), sub);
}

Rng::Rng(std::uint64_t seed) {
  // xoshiro256** must not start from the all-zero state; splitmix64 outputs
  // of consecutive states are never all zero.
  std::uint64_t sm = seed;
  for (auto& w : s_) w = splitmix64_next(sm);
}

}  // namespace ctmc::sim
