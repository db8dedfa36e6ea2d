// Claims files (reports/check.hpp): validate_claims on the input, the reading
// and validation `ctmc-snn check` does before it computes anything; it may
// only reject with InputError. The seeds' models are inline objects (a file
// name is relative to the input's folder, where no model lies: a missing
// file). Checking the claims (fits, simulations) is not fuzzed: it runs the
// solvers the other targets reach.
#include "ctmc/reports/check.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("claims.json", data, size);
  fuzz::reject_only("validate_claims", [&] { (void)reports::validate_claims(path); });
  return 0;
}
