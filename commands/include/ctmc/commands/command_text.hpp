// Text helpers shared by the CLI and the Python module, so that both print
// and parse the same way: solver scalars as text, comma-separated number
// lists, error messages kept on one line and naming the command's options.
#pragma once
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::commands {

// A solver scalar: exact text for rationals, 17 significant digits for
// double, and the digits the precision carries for MPFR.
template <class T>
std::string show(const T& x, unsigned precision) {
  if constexpr (std::is_same_v<T, solvers::Rational>) {
    return solvers::exact_text(x);
  } else if constexpr (std::is_same_v<T, double>) {
    return fmt::format("{:.17g}", x);
  } else {
    return solvers::to_string(x, static_cast<int>(precision * 0.30103) + 1);
  }
}

// The whole of `item` as a double; InputError naming `option` otherwise.
inline double parse_number(const std::string& item, const std::string& option) {
  if (const auto x = ctmc::parse_double(item)) return *x;
  throw InputError(fmt::format("{}: {} {}", option, quote_excerpt(item), ctmc::not_a_number_reason(item)));
}

// Comma-separated plain numbers (grids of a sweep, per-layer values) as doubles.
inline std::vector<double> number_list(const std::string& text, const std::string& option) {
  std::vector<double> v;
  for (const auto& item : ctmc::split_input_list(text, option)) v.push_back(parse_number(item, option));
  return v;
}

// --layer-alpha: one alpha_l per spiking layer, each positive and finite,
// or "auto" keeping the scale rule (stored as NaN, which is why a "nan"
// written by the user must be refused here rather than read as "auto").
inline std::vector<double> layer_alpha_list(const std::string& text) {
  std::vector<double> v;
  for (const auto& item : ctmc::split_input_list(text, "--layer-alpha")) {
    if (item == "auto") {
      v.push_back(std::nan(""));
      continue;
    }
    const double a = parse_number(item, "--layer-alpha");
    if (!(a > 0) || !std::isfinite(a))
      throw InputError(fmt::format("--layer-alpha: {} is not a positive finite number (or auto)", quote_excerpt(item)));
    v.push_back(a);
  }
  return v;
}

// The text layer_alpha_list reads back: "auto" for a layer that keeps the
// scale rule (NaN).
inline std::string layer_alpha_text(const std::vector<double>& alphas) {
  std::string s;
  for (double a : alphas) s += (s.empty() ? "" : ",") + (std::isnan(a) ? std::string("auto") : fmt::format("{}", a));
  return s;
}

// The option of the commands (CLI flag; the Python module's messages name
// the same) behind each input that the libraries name by its parameter
// (InputError(input, detail), e.g. "trials", "domain", "out_root"); empty
// for any other name (a file, a claim field, a flag the caller passed).
inline std::string option_of_input(const std::string& input) {
  static const std::map<std::string, std::string> kOptions = {
      {"H", "--H"},
      {"N", "--N"},
      {"T", "--T"},
      {"activation", "--activation"},
      {"alpha", "--alpha"},
      {"batch_size", "--batch"},
      {"cifar", "--cifar"},
      {"criterion", "--criterion"},
      {"data", "--data"},
      {"data_root", "--data-root"},
      {"domain", "--domain"},
      {"dt", "--dt"},
      {"epochs", "--epochs"},
      {"eps", "--eps"},
      {"family", "--family"},
      {"hidden", "--hidden"},
      {"if_norm", "--if"},
      {"if_steps", "--if-steps"},
      {"layer_alpha", "--layer-alpha"},
      {"learning_rate", "--lr"},
      {"limit", "--limit"},
      {"mpfr_bits", "--precision"},
      {"net", "--net"},
      {"nets", "--net"},
      {"neurons", "--neurons"},
      {"kernel", "--kernel"},
      {"conv_path", "--conv-path"},
      {"normalization", "--normalize"},
      {"out_root", "--out"},
      {"output_scale", "--output-scale"},
      {"points", "--points"},
      {"rate", "--rate"},
      {"rates", "--rate"},
      {"readout", "--readout"},
      {"rho", "--rho"},
      {"rho_factor", "--rho-factor"},
      {"sampler", "--sampler"},
      {"samplers", "--sampler"},
      {"scale", "--scale"},
      {"shard", "--shard"},
      {"start", "--start"},
      {"starts", "--starts"},
      {"states", "--states"},
      {"subset", "--subset"},
      {"sweeps_dir", "--sweeps"},
      {"tau", "--tau"},
      {"taus", "--tau"},
      {"test_images", "--test-images"},
      {"test_labels", "--test-labels"},
      {"threads", "--threads"},
      {"trace_weight", "--trace-weight"},
      {"train_images", "--train-images"},
      {"train_labels", "--train-labels"},
      {"trials", "--trials"},
      {"v0", "--v0"},
  };
  const auto it = kOptions.find(input);
  return it == kOptions.end() ? std::string() : it->second;
}

// An InputError as the CLI and the Python module show it: an input the
// libraries name by its parameter under the command's option ("trials: 0
// must be at least 1" -> "--trials: 0 must be at least 1"), any other
// message as it is.
inline std::string option_message(const InputError& e) {
  const std::string option = option_of_input(e.input());
  return option.empty() ? std::string(e.what()) : option + ": " + e.detail();
}

// "One line per error": control characters in a message (a state name or
// file name holding a newline could otherwise print a second, forged line,
// or send terminal escapes) are written as \n, \r, \t or \xHH.
inline std::string one_line(const std::string& text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) out += ch;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else out += std::string("\\x") + kHex[c >> 4] + kHex[c & 15];
  }
  return out;
}

}  // namespace ctmc::commands
