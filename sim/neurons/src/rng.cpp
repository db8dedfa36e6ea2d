// xoshiro256** seeding: see rng.hpp.
#include "ctmc/sim/neurons/rng.hpp"

namespace ctmc::sim {

Rng::Rng(std::uint64_t seed) {
  // xoshiro256** must not start from the all-zero state; splitmix64 outputs
  // of consecutive states are never all zero.
  std::uint64_t sm = seed;
  for (auto& w : s_) w = splitmix64_next(sm);
}

}  // namespace ctmc::sim
