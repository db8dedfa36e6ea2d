// check's numeric fields (commands/check.hpp): the input's bytes, as a JSON
// string, are the claimed value of a flux claim (compared as an exact
// rational) and of a fit claim (compared as a double), under the tolerance
// that the first byte picks. run_check may only reject with InputError, and:
// - a fit claim whose value is not a finite double of the normal range
//   (1e999, -1e400, 1e-320) never passes: check refuses it as not checkable;
// - the flux claim under the exact tolerance passes only when its value is
//   the flux, 1 (a = 1 + H = 2, d = 2 at H = 1: F = ad / (a + d));
// - no row's evidence reads inf or nan.
#include <cmath>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "ctmc/commands/check.hpp"
#include "ctmc/solvers/exact.hpp"
#include "fuzz_common.hpp"

using namespace ctmc;

namespace {

const char* const kTolerances[] = {nullptr, "exact", "digits", "relative", "absolute"};

nlohmann::json tolerance(std::uint8_t pick) {
  const char* t = kTolerances[pick % 5];
  if (!t) return nullptr;
  if (std::string(t) == "relative") return {{"relative", 1e-6}};
  if (std::string(t) == "absolute") return {{"absolute", 1e-6}};
  return t;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string value(reinterpret_cast<const char*>(data) + 1, size - 1);
  const nlohmann::json model = nlohmann::json::parse(
      R"({"states": ["B", "R"], "transitions": [{"from": "B", "to": "R", "offset": 1, "slope": 1, "spike": true},)"
      R"( {"from": "R", "to": "B", "offset": 2}]})");
  nlohmann::json flux = {{"id", "flux"}, {"kind", "flux"}, {"model", model}, {"H", 1}, {"value", value}};
  nlohmann::json fit = {{"id", "fit"},   {"kind", "fit"},   {"model", model}, {"activation", "relu"},
                        {"domain", "0,1"}, {"points", 3},   {"mse", value}};
  const nlohmann::json tol = tolerance(data[0]);
  if (!tol.is_null()) flux["tolerance"] = fit["tolerance"] = tol;
  std::string text;
  try {
    text = nlohmann::json{{"claims", {flux, fit}}}.dump();
  } catch (const nlohmann::json::exception&) {
    return 0;  // not UTF-8: no JSON file holds it
  }
  const std::string path = fuzz::write_file("claims.json", text);
  commands::CheckOptions options;
  options.threads = 1;
  options.precision = 64;
  commands::CheckResult r;
  const bool ran = fuzz::reject_only("run_check", [&] { r = commands::run_check(path, options); });
  if (!ran) return 0;
  const auto q = solvers::parse_exact(value);  // how check reads the value
  for (const auto& [id, verdict] : r.verdicts) {
    if (verdict != commands::Verdict::Reproduced) continue;
    if (!q) fuzz::finding("a claim that is not a number passed");
    const double d = std::abs(solvers::to_double(*q));
    if (id == "fit" && (!std::isfinite(d) || (d != 0 && d < std::numeric_limits<double>::min())))
      fuzz::finding("a fit claim outside the normal range of doubles passed");
    if (id == "flux" && (tol.is_null() || tol == "exact") && *q != 1)
      fuzz::finding("a flux claim other than 1 passed the exact comparison");
  }
  for (const auto& row : r.results)
    if (row.evidence.find("inf") != std::string::npos || row.evidence.find("nan") != std::string::npos)
      fuzz::finding("evidence reads inf or nan: " + row.evidence);
  return 0;
}
