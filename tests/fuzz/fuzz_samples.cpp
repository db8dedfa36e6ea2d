// Samples and weights files (analysis/fit.hpp, fit --samples / --weights):
// read_samples on the input, with and without a domain; read_weights with the
// input as the weights of a 4-point grid and, when the input was accepted as
// samples, as the weights of those samples.
#include "ctmc/analysis/fit.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("samples.txt", data, size);
  analysis::FitData samples;
  const bool ok = fuzz::reject_only("read_samples", [&] { samples = analysis::read_samples(path); });
  fuzz::reject_only("read_samples(domain)", [&] {
    const solvers::Rational lo(-1), hi(1);
    (void)analysis::read_samples(path, &lo, &hi);
  });
  fuzz::reject_only("read_weights(grid)", [&] {
    analysis::FitData grid = analysis::make_grid(solvers::Rational(0), solvers::Rational(1), 4);
    analysis::read_weights(grid, path);
  });
  if (ok) fuzz::reject_only("read_weights(samples)", [&] { analysis::read_weights(samples, path); });
  return 0;
}
