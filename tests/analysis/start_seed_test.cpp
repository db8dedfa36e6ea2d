// The multistart fits' per-start seed is the seeding module's
// multistart_seed (ctmc/solvers/seeding.hpp), so the fits can draw from the
// module without changing any published fit table.
#include <doctest/doctest.h>

#include <cstdint>

#include "ctmc/analysis/fit.hpp"
#include "ctmc/solvers/seeding.hpp"

TEST_CASE("analysis::start_seed equals solvers::multistart_seed") {
  for (std::uint64_t seed : {0ULL, 1ULL, 12345ULL, 0xffffffffffffffffULL})
    for (std::uint64_t k = 0; k < 64; ++k) CHECK(ctmc::analysis::start_seed(seed, k) == ctmc::solvers::multistart_seed(seed, k));
}
