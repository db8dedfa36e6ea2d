// Sweep parts (sim/studies/sweep.hpp): read_sweep_part on the input, once read whole
// and once through the streamed scan of its spec and shard (the path of a
// part over the scan threshold, whose size its own grid bounds), then
// merge_sweep_parts of it alone (every field checked against the grid);
// each may only reject with InputError.
#include "ctmc/sim/studies/sweep_document.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("part.json", data, size);
  fuzz::reject_only("read_sweep_part (scanned)", [&] { (void)sim::read_sweep_part(path, 0); });
  nlohmann::ordered_json part;
  if (!fuzz::reject_only("read_sweep_part", [&] { part = sim::read_sweep_part(path); })) return 0;
  fuzz::reject_only("merge_sweep_parts", [&] { (void)sim::merge_sweep_parts({{path, part}}); });
  return 0;
}
