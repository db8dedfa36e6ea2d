// ctmc-snn flux MODEL.json --H LIST [--precision BITS | --exact | --double] [--json]
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "command.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/stationary.hpp"

namespace ctmc::cli {
namespace {

struct FluxOptions {
  std::string model_path;
  std::string h_list;
  unsigned precision = 256;
  bool exact = false;
  bool json = false;
};

template <class T>
std::string show(const T& x, unsigned precision) {
  if constexpr (std::is_same_v<T, solvers::Rational>) {
    return solvers::exact_text(x);
  } else {
    return solvers::to_string(x, static_cast<int>(precision * 0.30103) + 1);
  }
}

template <class T>
void run_flux(const FluxOptions& o) {
  const auto model = solvers::read_model_file(o.model_path);
  const auto hs = solvers::parse_input_list(o.h_list, "--H");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& h : hs) {
    const auto r = solvers::solve_stationary<T>(model, h, solvers::Method::Auto, o.model_path);
    nlohmann::ordered_json row;
    row["H"] = solvers::exact_text(h);
    nlohmann::ordered_json pi = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < model.size(); ++i) pi[model.states[i]] = show(r.pi[i], o.precision);
    row["pi"] = pi;
    row["flux"] = show(r.flux, o.precision);
    if (!o.json) {
      fmt::print("H = {}\n  flux = {}\n", row["H"].get<std::string>(), row["flux"].get<std::string>());
      for (std::size_t i = 0; i < model.size(); ++i)
        fmt::print("  pi[{}] = {}\n", model.states[i], pi[model.states[i]].get<std::string>());
    }
    out.push_back(row);
  }
  if (o.json) fmt::print("{}\n", out.dump(2));
}

Register reg([](CLI::App& root) {
  auto o = std::make_shared<FluxOptions>();
  auto* cmd = root.add_subcommand("flux", "Stationary distribution and spike flux of a model at inputs H");
  cmd->add_option("model", o->model_path, "Model JSON file")->required();
  cmd->add_option("--H", o->h_list, "Comma-separated inputs (exact decimals or p/q)")->required();
  auto* prec = cmd->add_option("--precision", o->precision, "MPFR precision in bits")->capture_default_str()
                   ->check(CLI::Range(53u, 100000u));
  cmd->add_flag("--exact", o->exact, "Exact rational arithmetic")->excludes(prec);
  cmd->add_flag("--json", o->json, "Machine-readable output");
  cmd->callback([o] {
    if (o->exact) {
      run_flux<solvers::Rational>(*o);
    } else {
      solvers::set_precision_bits(o->precision);
      run_flux<solvers::Mpfr>(*o);
    }
  });
});

}  // namespace
}  // namespace ctmc::cli
