// ctmc-snn flux MODEL.json --H LIST [--precision BITS | --exact | --double] [--json]
//
// Prints the stationary distribution and spike flux at each input H (GTH,
// DESIGN.md section 5). For a model whose meta.family names a known family
// (and whose structure matches it) it also prints the family's closed form
// (paper eq. 2 for three-state) evaluated at the same exact rates, and the
// difference: exactly in --exact mode, as a relative difference and correct
// bits otherwise.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "scalar_text.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/families.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::cli {
namespace {

struct FluxOptions {
  std::string model_path;
  std::string h_list;
  unsigned precision = 256;
  bool exact = false;
  bool use_double = false;
  bool json = false;
};

template <class T>
unsigned bits_of() {
  if constexpr (std::is_same_v<T, double>) {
    return 53;
  } else {
    return solvers::precision_bits();
  }
}

// |a - b| / |b| as a double (0 when both are 0).
template <class T>
double relative_difference(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, double>) {
    if (a == b) return 0;
    return std::abs(a - b) / std::abs(b);
  } else {
    if (a == b) return 0;
    return solvers::to_double(T(abs(a - b) / abs(b)));
  }
}

template <class T>
void run_flux(const FluxOptions& o) {
  const auto model = solvers::read_model_file(o.model_path);
  const auto hs = solvers::parse_input_list(o.h_list, "--H");
  const std::string family = solvers::family_name(model);
  // Every H is solved before anything is printed: a bad H (e.g. one where the
  // chain has two closed classes) exits 2 with nothing half-written.
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& h : hs) {
    const auto r = solvers::solve_stationary<T>(model, h, solvers::Method::Auto, o.model_path);
    nlohmann::ordered_json row;
    row["H"] = solvers::exact_text(h);
    nlohmann::ordered_json pi = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < model.size(); ++i) pi[model.states[i]] = show(r.pi[i], o.precision);
    row["pi"] = pi;
    row["flux"] = show(r.flux, o.precision);
    auto cf = solvers::closed_form_flux<T>(model, h);
    if (cf && cf->den == 0) cf.reset();  // no spanning tree: the solver has already refused such a chain
    bool overflows = false;  // the closed form's products beyond double's range (inf / inf printed -nan)
    if constexpr (std::is_same_v<T, double>) overflows = cf && !std::isfinite(cf->value());
    if (overflows) {
      row["family"] = family;
      row["closed_form"] = "not evaluated: its products overflow a double at this H (use the default MPFR mode or "
                           "--exact)";
    } else if (cf) {
      const T value = cf->value();
      row["family"] = family;
      row["closed_form"] = solvers::closed_form_text(family);
      row["closed_form_value"] = show(value, o.precision);
      if constexpr (std::is_same_v<T, solvers::Rational>) {
        row["difference"] = solvers::exact_text(r.flux - value);
      } else {
        const double rel = relative_difference(r.flux, value);
        row["relative_difference"] = rel;
        row["correct_bits"] = solvers::correct_bits(rel, bits_of<T>());
      }
    } else if (!family.empty()) {
      row["family"] = family;
      // Why there is none, so that a valid model does not read as broken.
      if (family == "general")
        row["closed_form"] = "none for the general family (the flux above is from GTH)";
      else if (!solvers::closed_form_text(family).empty())
        row["closed_form"] = "unavailable: the model's states and transitions do not have the " + family +
                             " family's structure (meta.family says " + family + ")";
      else
        row["closed_form"] = "none: meta.family '" + family +
                             "' is not one with a closed form (two-state, three-state, full-three-state, bernstein)";
    }
    out.push_back(row);
  }
  if (o.json) {
    fmt::print("{}\n", out.dump(2));
    return;
  }
  for (const auto& row : out) {
    fmt::print("H = {}\n  flux = {}\n", row["H"].get<std::string>(), row["flux"].get<std::string>());
    if (row.contains("closed_form_value")) {
      fmt::print("  closed form ({}: {}) = {}\n", family, row["closed_form"].get<std::string>(),
                 row["closed_form_value"].get<std::string>());
      if (row.contains("difference"))
        fmt::print("  difference (exact) = {}\n", row["difference"].get<std::string>());
      else
        fmt::print("  relative difference = {:.3e} ({:.1f} correct bits of {})\n",
                   row["relative_difference"].get<double>(), row["correct_bits"].get<double>(), bits_of<T>());
    } else if (row.contains("closed_form")) {
      fmt::print("  closed form: {}\n", row["closed_form"].get<std::string>());
    }
    // In state order (an ordered object); a lookup by name would be a linear scan per state.
    for (const auto& p : row["pi"].items()) fmt::print("  pi[{}] = {}\n", p.key(), p.value().get<std::string>());
  }
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<FluxOptions>();
  auto* cmd = root.add_subcommand(
      "flux", "Stationary distribution and spike flux of a model at inputs H (with the closed form of a known family)");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  cmd->add_option("--H", o->h_list, "Comma-separated inputs (exact decimals or p/q)")->required();
  auto* prec = cmd->add_option("--precision", o->precision, "MPFR precision in bits")->capture_default_str()
                   ->check(CLI::Range(53u, 100000u));
  auto* exact = cmd->add_flag("--exact", o->exact, "Exact rational arithmetic")->excludes(prec);
  cmd->add_flag("--double", o->use_double, "IEEE double arithmetic")->excludes(prec)->excludes(exact);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] {
    if (o->exact) {
      run_flux<solvers::Rational>(*o);
    } else if (o->use_double) {
      run_flux<double>(*o);
    } else {
      solvers::set_precision_bits(o->precision);
      run_flux<solvers::Mpfr>(*o);
    }
  });
});

}  // namespace
}  // namespace ctmc::cli
