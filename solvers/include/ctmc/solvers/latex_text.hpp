// Literal text in generated LaTeX (defined in solvers/src/polynomial.cpp).
#pragma once
#include <string>

namespace ctmc::solvers {

// `text` (a state or variable name, any bytes) as LaTeX that typesets it
// literally in math mode, e.g. inside \mathrm{...}: the specials
// \ { } $ & # ^ _ % ~ become commands that print them, spaces "\ ", and
// control characters (a newline would end a % comment line) "\backslash{}xHH".
// No input makes the result run a command (\input, \write18) or leave the
// group it is put in.
std::string latex_text(const std::string& text);

}  // namespace ctmc::solvers
