#include "ctmc/analysis/activation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "ctmc/solvers/errors.hpp"

namespace ctmc::analysis {

namespace {

double parse_positive_param(const std::string& name, const std::string& text, bool allow_negative) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || (!allow_negative && v <= 0))
    throw InputError(fmt::format("--activation: '{}': parameter '{}' must be a {} number", name, text,
                                 allow_negative ? "finite" : "positive"));
  return v;
}

Activation read_table(const std::string& name, const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open activation table");
  Activation a;
  a.kind = ActivationKind::Tabulated;
  a.name = name;
  std::string line;
  std::size_t row = 0;
  while (std::getline(in, line)) {
    ++row;
    if (line.empty() || line[0] == '#') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream ss(line);
    double x, y;
    if (!(ss >> x >> y)) {
      if (a.xs.empty() && row == 1) continue;  // a header row
      throw InputError(fmt::format("{}: row {}: expected two numbers 'x,phi(x)'", path, row));
    }
    if (!std::isfinite(x) || !std::isfinite(y))
      throw InputError(fmt::format("{}: row {}: non-finite value", path, row));
    if (!a.xs.empty() && !(x > a.xs.back()))
      throw InputError(fmt::format("{}: row {}: x must be strictly increasing", path, row));
    a.xs.push_back(x);
    a.ys.push_back(y);
  }
  if (a.xs.size() < 2) throw InputError(path + ": activation table needs at least two rows");
  return a;
}

}  // namespace

Activation parse_activation(const std::string& name) {
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
    a.param = parse_positive_param(name, name.substr(9), false);
  } else if (name.rfind("sigmoid_shift_", 0) == 0) {
    a.kind = ActivationKind::ShiftedSigmoid;
    a.param = parse_positive_param(name, name.substr(14), true);
  } else if (name.rfind("table:", 0) == 0) {
    return read_table(name, name.substr(6));
  } else {
    throw InputError(fmt::format("--activation: unknown activation '{}' (known: {})", name, activation_names_help()));
  }
  return a;
}

std::string activation_names_help() {
  return "sigmoid, relu, softplus, cliprelu_K, sigmoid_shift_S, tanh1, table:FILE";
}

}  // namespace ctmc::analysis
