// Seed derivation for per-unit random streams: see rng.hpp.
#include "ctmc/sim/rng.hpp"

namespace ctmc::sim {

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  // Two rounds of the splitmix64 mixer: the first spreads the seed, the second
  // folds in the stream index, so neighbouring seeds and neighbouring streams
  // land far apart (mix64 is a bijection, so for a fixed seed distinct streams
  // give distinct stream seeds).
  std::uint64_t s = seed;
  std::uint64_t h = splitmix64_next(s);
  return mix64(h ^ mix64(stream + 0x9e3779b97f4a7c15ULL));
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
