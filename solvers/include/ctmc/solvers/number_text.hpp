// Exact numbers, lists and intervals written as text (option values, claim
// fields, metadata): the one reading of each, shared by the libraries, the
// CLI and the Python module; plain doubles and the list splitter are core's
// (core/number_text.hpp). Errors are InputErrors naming the input by the `what`
// label the caller passes (a parameter name such as "domain", a CLI flag, or
// a field of a file).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "ctmc/core/number_text.hpp"
#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

// An exact value ("0.5", "1/3", "-2e-3"); InputError naming `what` when it is
// not a finite exact number.
Rational parse_input_value(const std::string& text, const std::string& what);
// A comma-separated list of exact values (split_input_list, then
// parse_input_value for each item).
std::vector<Rational> parse_input_list(const std::string& text, const std::string& what);

// An interval "LO,HI" of two exact values with LO < HI; InputError naming
// `what` otherwise. The one reading of a domain text.
std::pair<Rational, Rational> parse_interval(const std::string& text, const std::string& what);

}  // namespace ctmc::solvers
