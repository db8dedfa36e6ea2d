// The CTMC neuron model (DESIGN.md sections 4 and 8).
//
// A transition i -> j has rate r_ij(H) = max(0, p_ij + s_ij H): rectified
// affine in the input H (s_ij = 0 is a constant rate). Transitions marked
// `spike` emit a spike. Offsets and slopes are exact rationals, kept together
// with the text they were written as.
//
// JSON schema: {"states": [names], "transitions": [{"from", "to", "offset",
// "slope", "spike"}], "meta": {...}}; offset/slope are JSON numbers (read from
// their decimal text) or exact strings ("5/48", "1.25e-12"); slope defaults to
// 0 and spike to false. Any other key at the top level or in a transition is
// an error (a misspelt "slpoe" would otherwise silently become slope 0); meta
// is free-form. Readers throw ctmc::InputError with a one-line message
// "<source>: <field>: <what is wrong>".
#pragma once
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ctmc/solvers/scalar.hpp"

namespace ctmc::solvers {

struct ExactValue {
  Rational value;
  std::string text;  // as written by the user (or exact_text(value))
  ExactValue() : value(0), text("0") {}
  explicit ExactValue(const Rational& q);
  ExactValue(const Rational& q, std::string t) : value(q), text(std::move(t)) {}
};

struct Transition {
  std::size_t from = 0, to = 0;
  ExactValue offset, slope;
  bool spike = false;
  // max(0, offset + slope * H), exactly.
  Rational rate(const Rational& H) const;
};

struct Model {
  std::vector<std::string> states;
  std::vector<Transition> transitions;
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();

  std::size_t size() const { return states.size(); }
  // A linear scan (throws std::out_of_range): for a lookup or two; the reader
  // hashes the names instead.
  std::size_t state_index(const std::string& name) const;
  // Rates of every transition at H, exactly, in transition order.
  std::vector<Rational> rates(const Rational& H) const;
};

// Validates: nonempty, known states, no self-loop, no duplicate transition,
// constant rates >= 0, at least one spike transition. `source` names the input
// in messages.
void validate(const Model& m, const std::string& source);

Model model_from_json_text(const std::string& text, const std::string& source);
// The decimal text of every number in a JSON document, as written, keyed by its
// RFC 6901 JSON pointer ("/transitions/0/offset"; "~" and "/" in a key are
// written "~0" and "~1", so no two values share a key). Throws InputError
// "<source>: malformed JSON: ..." on a syntax error or a duplicate key.
std::map<std::string, std::string> json_number_texts(const std::string& text, const std::string& source);
Model read_model_file(const std::string& path);
nlohmann::ordered_json model_to_json(const Model& m);  // offsets/slopes as exact strings
// Writes to a unique temporary file in the same folder ("<path>.tmp.<pid>.<random>",
// created exclusively) and renames it over path, so a failed write leaves nothing
// half-written and never touches an unrelated "<path>.tmp"; failures are
// InputErrors naming the path.
void write_model_file(const Model& m, const std::string& path);

}  // namespace ctmc::solvers
