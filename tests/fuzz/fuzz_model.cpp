// Model JSON (solvers/model.hpp): read_model_file on the input; for a model
// it accepts, the writer's JSON must read back to the same model, and the
// double stationary solver (dense GTH) must give a distribution or an
// InputError at a few inputs H.
#include <cmath>

#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/solvers/stationary.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::write_file("model.json", data, size);
  solvers::Model m;
  if (!fuzz::reject_only("read_model_file", [&] { m = solvers::read_model_file(path); })) return 0;

  const std::string text = solvers::model_to_json(m).dump();
  solvers::Model back;
  if (!fuzz::reject_only("model_from_json_text(model_to_json)", [&] { back = solvers::model_from_json_text(text, "round trip"); }))
    fuzz::finding("model_to_json wrote a model its reader rejects: " + text.substr(0, 200));
  if (back.states != m.states || back.transitions.size() != m.transitions.size())
    fuzz::finding("model_to_json round trip changed the states or transitions");
  for (std::size_t k = 0; k < m.transitions.size(); ++k) {
    const auto &a = m.transitions[k], &b = back.transitions[k];
    if (a.from != b.from || a.to != b.to || a.spike != b.spike || a.offset.value != b.offset.value ||
        a.slope.value != b.slope.value)
      fuzz::finding("model_to_json round trip changed transition " + std::to_string(k));
  }

  // The solvers' numerics on small chains only (a fuzz run must stay fast).
  if (m.size() > 12) return 0;
  for (const char* h : {"0", "1", "-1/3"}) {
    fuzz::reject_only("solve_stationary<double>", [&] {
      const auto s = solvers::solve_stationary<double>(m, solvers::parse_input_value(h, "H"));
      double sum = 0;
      for (double p : s.pi) {
        if (!(p >= 0 && p <= 1)) fuzz::finding(std::string("pi outside [0, 1] at H = ") + h);
        sum += p;
      }
      if (!(std::abs(sum - 1) < 1e-9)) fuzz::finding(std::string("pi does not sum to 1 at H = ") + h);
    });
  }
  return 0;
}
