// --subset index:FILE (sim/formats/dataset.hpp): parse_test_subset on the input as an
// index file; accepted indices are whole numbers, each listed once.
#include <set>

#include "ctmc/sim/formats/dataset.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("index.txt", data, size);
  sim::TestSubset s;
  if (!fuzz::reject_only("parse_test_subset", [&] { s = sim::parse_test_subset("index:" + path); })) return 0;
  if (s.indices.empty()) fuzz::finding("an accepted index file lists nothing");
  std::set<int> seen;
  for (int k : s.indices)
    if (k < 0 || !seen.insert(k).second) fuzz::finding("a negative or repeated index was accepted");
  return 0;
}
