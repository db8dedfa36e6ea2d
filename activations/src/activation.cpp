#include "ctmc/activations/activation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/input_file.hpp"

namespace ctmc::activations {

namespace {

// True when `t` is a plain decimal: [+-]digits[.digits][e[+-]digits] (or
// [+-].digits...), nothing else: no spaces, hex, inf or nan.
bool plain_decimal(std::string_view t) {
  std::size_t i = 0;
  if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
  std::size_t digits = 0;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i, ++digits;
  if (i < t.size() && t[i] == '.') {
    ++i;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    std::size_t exp_digits = 0;
    while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == t.size();
}

// A plain decimal that is a finite double; nullopt otherwise.
std::optional<double> parse_plain(std::string_view t) {
  if (!plain_decimal(t)) return std::nullopt;
  const std::string s(t);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Activation parameters (K of cliprelu_K, S of sigmoid_shift_S): a plain
// decimal with |v| in [1e-6, 1e6] (or 0 where allowed).
constexpr double kParamMin = 1e-6, kParamMax = 1e6;

double parse_positive_param(const std::string& name, const std::string& text, bool allow_negative,
                            const std::string& what) {
  const auto v = parse_plain(text);
  const bool ok = v && std::abs(*v) <= kParamMax &&
                  (allow_negative ? (*v == 0 || std::abs(*v) >= kParamMin) : *v >= kParamMin);
  if (!ok)
    throw InputError(what, fmt::format("{}: parameter {} must be a plain decimal number {}", quote_excerpt(name), quote_excerpt(text),
                                 allow_negative ? fmt::format("0 or with magnitude in [{:g}, {:g}]", kParamMin, kParamMax)
                                                : fmt::format("in [{:g}, {:g}]", kParamMin, kParamMax)));
  return *v;
}

std::string_view trim(std::string_view t) {
  const auto b = t.find_first_not_of(" \t\r");
  if (b == std::string_view::npos) return {};
  const auto e = t.find_last_not_of(" \t\r");
  return t.substr(b, e - b + 1);
}

Activation read_table(const std::string& name, const std::string& path) {
  const std::string content = solvers::read_input_file(path, solvers::kActivationTableKind);
  Activation a;
  a.kind = ActivationKind::Tabulated;
  a.name = name;
  std::size_t row = 0;
  bool seen_content = false;
  for (std::size_t at = 0; at < content.size();) {
    const auto nl = content.find('\n', at);
    std::string_view line = std::string_view(content).substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? content.size() : nl + 1;
    ++row;
    if (row == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // UTF-8 byte-order mark
    const auto t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    // The first non-blank, non-comment row is a header only if it has no digit
    // ("x,phi"); anything with a digit is data and must parse.
    if (!seen_content) {
      seen_content = true;
      if (std::none_of(t.begin(), t.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
        continue;
    }
    const auto comma = t.find(',');
    const bool two_fields = comma != std::string_view::npos && t.find(',', comma + 1) == std::string_view::npos;
    const auto x = two_fields ? parse_plain(trim(t.substr(0, comma))) : std::nullopt;
    const auto y = two_fields ? parse_plain(trim(t.substr(comma + 1))) : std::nullopt;
    if (!x || !y)
      throw InputError(fmt::format("{}: row {}: expected two finite numbers 'x,phi(x)', got {}", path, row, quote_excerpt(t)));
    if (!a.xs.empty() && !(*x > a.xs.back()))
      throw InputError(fmt::format("{}: row {}: x must be strictly increasing", path, row));
    a.xs.push_back(*x);
    a.ys.push_back(*y);
  }
  if (a.xs.size() < 2) throw InputError(path + ": activation table needs at least two rows");
  return a;
}

}  // namespace

Activation parse_activation(const std::string& name, const std::string& what) {
  Activation a;
  a.name = name;
  if (name == "sigmoid") {
    a.kind = ActivationKind::Sigmoid;
  } else if (name == "relu") {
    a.kind = ActivationKind::Relu;
  } else if (name == "softplus") {
    a.kind = ActivationKind::Softplus;
  } else if (name == "tanh1") {
    a.kind = ActivationKind::TanhPlusOne;
  } else if (name.rfind("cliprelu_", 0) == 0) {
    a.kind = ActivationKind::ClipRelu;
    a.param = parse_positive_param(name, name.substr(9), false, what);
  } else if (name.rfind("sigmoid_shift_", 0) == 0) {
    a.kind = ActivationKind::ShiftedSigmoid;
    a.param = parse_positive_param(name, name.substr(14), true, what);
  } else if (name.rfind("table:", 0) == 0) {
    return read_table(name, name.substr(6));
  } else {
    throw InputError(what, fmt::format("unknown activation {} (known: {})", quote_excerpt(name), activation_names_help()));
  }
  return a;
}

std::optional<std::string> table_coverage_violation(const Activation& a, double lo, double hi) {
  if (a.kind != ActivationKind::Tabulated || a.xs.empty()) return std::nullopt;
  if (lo >= a.xs.front() && hi <= a.xs.back()) return std::nullopt;
  return fmt::format("{} has rows for x in [{:g}, {:g}] only, but the domain is [{:g}, {:g}]; add rows "
                     "covering the domain (beyond its rows the table would be taken as constant)",
                     a.name, a.xs.front(), a.xs.back(), lo, hi);
}

std::string activation_names_help() {
  return "sigmoid, relu, softplus, cliprelu_K, sigmoid_shift_S, tanh1, table:FILE";
}

}  // namespace ctmc::activations
