// The documents of flux, counting and formula.
#include "ctmc/commands/counting.hpp"
#include "ctmc/commands/flux.hpp"
#include "ctmc/commands/formula.hpp"

namespace ctmc::commands {

void write(DocumentWriter& w, const FluxResult& r) {
  const Array rows(w, "");
  for (const auto& x : r.rows) {
    const Object row(w, "");
    put(w, "H", x.H);
    {
      const Object pi(w, "pi");
      for (const auto& [state, value] : x.pi) put(w, state, value);
    }
    put(w, "flux", x.flux);
    if (x.family) {
      put(w, "family", *x.family);
      put(w, "closed_form", x.closed_form);
    }
    if (x.closed_form_value) put(w, "closed_form_value", *x.closed_form_value);
    if (x.difference) put(w, "difference", *x.difference);
    if (x.relative_difference) {
      put(w, "relative_difference", *x.relative_difference);
      put(w, "correct_bits", x.correct_bits);
    }
  }
}

void write(DocumentWriter& w, const CountingResult& r) {
  const Object doc(w, "");
  put(w, "model", r.model);
  put(w, "H", r.H);
  put(w, "T", r.T);
  put(w, "start", r.start);
  put(w, "mean", r.mean);
  put(w, "variance", r.variance);
  put(w, "fano_T", r.fano_T);
  put(w, "rate", r.rate);
  put(w, "variance_rate", r.variance_rate);
  put(w, "fano", r.fano);
}

void write(DocumentWriter& w, const FormulaResult& r) {
  const Object doc(w, "");
  put(w, "model", r.model);
  put(w, "states", r.states);
  {
    const Array legend(w, "symbols");
    for (const auto& s : r.symbols) {
      const Object symbol(w, "");
      put(w, "symbol", s.symbol);
      put(w, "latex", s.latex);
      put(w, "from", s.from);
      put(w, "to", s.to);
      put(w, "spike", s.spike);
      put(w, "rate", s.rate);
    }
  }
  {
    const Object sums(w, "tree_sums");
    for (std::size_t i = 0; i < r.states.size(); ++i) put(w, r.states[i], r.tree_sums[i]);
  }
  put(w, "spanning_trees", r.spanning_trees);
  const Object flux(w, "flux");
  put(w, "numerator", r.numerator);
  put(w, "denominator", r.denominator);
  put(w, "text", r.text);
  put(w, "latex", r.latex);
}

nlohmann::ordered_json to_json(const FluxResult& r) { return json_of(r); }
nlohmann::ordered_json to_json(const CountingResult& r) { return json_of(r); }
nlohmann::ordered_json to_json(const FormulaResult& r) { return json_of(r); }

}  // namespace ctmc::commands
