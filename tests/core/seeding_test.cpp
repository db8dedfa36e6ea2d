// The seeding module (ctmc/core/seeding.hpp): splitmix64 against its
// published reference outputs, and each stream derivation against the
// formula written out here with a separately coded splitmix64, so a change
// to the module that would change a report's random streams fails here.
#include <doctest/doctest.h>

#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>

#include "ctmc/core/seeding.hpp"

using namespace ctmc;

namespace {

// splitmix64.c (Vigna), written out independently of the module.
std::uint64_t reference_splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

TEST_CASE("splitmix64 matches the reference generator's outputs from state 0") {
  std::uint64_t state = 0;
  CHECK(splitmix64_next(state) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64_next(state) == 0x6e789e6aa1b965f4ULL);
  CHECK(splitmix64_next(state) == 0x06c45d188009454fULL);
  CHECK(splitmix64(0) == 0xe220a8397b1dcdafULL);
  for (std::uint64_t x : {0ULL, 1ULL, 42ULL, 0xffffffffffffffffULL}) CHECK(splitmix64(x) == reference_splitmix64(x));
}

TEST_CASE("the stream derivations are the documented formulas") {
  for (std::uint64_t seed : {0ULL, 1ULL, 7ULL, 20260101ULL}) {
    CAPTURE(seed);
    for (std::uint64_t i = 0; i < 20; ++i) {
      CAPTURE(i);
      // stream_seed: Weyl sequence over the mixed seed.
      const std::uint64_t weyl = mix64(reference_splitmix64(seed) + (i + 1) * 0xd1b54a32d192ed03ULL);
      CHECK(stream_seed(seed, i) == weyl);
      CHECK(stream_seed(seed, i, 3) == stream_seed(weyl, 3));
      // numbered_stream_seed: the purpose number plus the index.
      CHECK(numbered_stream_seed(seed, 0x2000, i) == reference_splitmix64(seed ^ reference_splitmix64(0x2000 + i)));
      // named_stream_seed: the purpose's bytes folded into the seed.
      std::uint64_t h = reference_splitmix64(seed);
      for (unsigned char ch : std::string("three-state/grid")) h = reference_splitmix64(h ^ ch);
      CHECK(named_stream_seed(seed, "three-state/grid", i) == reference_splitmix64(h ^ reference_splitmix64(i)));
      // multistart_seed.
      CHECK(multistart_seed(seed, i) ==
            reference_splitmix64(reference_splitmix64(seed) ^ (i * 0xd1b54a32d192ed03ULL + 0x632be59bd9b4e019ULL)));
    }
  }
}

TEST_CASE("streams of one seed are distinct across indices and purposes, and not symmetric in (seed, index)") {
  std::set<std::uint64_t> seen;
  std::size_t made = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    seen.insert(stream_seed(5, i));
    seen.insert(numbered_stream_seed(5, 0x1000, i));
    seen.insert(named_stream_seed(5, "a", i));
    seen.insert(named_stream_seed(5, "b", i));
    seen.insert(multistart_seed(5, i));
    made += 5;
  }
  CHECK(seen.size() == made);
  CHECK(stream_seed(3, 5) != stream_seed(5, 3));
  CHECK(purpose_key(1, "ab") != purpose_key(1, "ba"));
}

TEST_CASE("the derivations are constant expressions") {
  static_assert(splitmix64(0) == 0xe220a8397b1dcdafULL);
  static_assert(stream_seed(1, 2) == stream_seed(1, 2));
  static_assert(named_stream_seed(1, "x", 0) != named_stream_seed(1, "y", 0));
  CHECK(true);
}

TEST_CASE("StreamBlocks: consecutive blocks in the order reserved, looked up by name") {
  StreamBlocks streams;
  const auto starts = streams.reserve("starts", 64);
  const auto hops = streams.reserve("basin_hop", 3 * 24 * 4);
  const auto local = streams.reserve("local_phase", 10);
  CHECK(starts[0] == 0);
  CHECK(starts[63] == 63);
  CHECK(hops[0] == 64);
  CHECK(hops[3 * 24 * 4 - 1] == 64 + 3 * 24 * 4 - 1);
  CHECK(local[0] == 64 + 3 * 24 * 4);
  CHECK(streams.reserved() == 64 + 3 * 24 * 4 + 10);
  CHECK(streams.block("basin_hop").first == hops.first);
  CHECK(streams.block("local_phase").count == 10);
  // An empty block takes no index: the next block starts where it does.
  const auto none = streams.reserve("none", 0);
  CHECK(streams.reserve("after", 1)[0] == none.first);
  // Programming errors, not silent overlaps.
  CHECK_THROWS_AS(starts[64], std::logic_error);
  CHECK_THROWS_AS(none[0], std::logic_error);
  CHECK_THROWS_AS(streams.reserve("starts", 1), std::logic_error);
  CHECK_THROWS_AS(streams.block("polish"), std::logic_error);
}
