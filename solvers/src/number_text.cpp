#include "ctmc/solvers/number_text.hpp"

#include <fmt/format.h>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/core/quote.hpp"

namespace ctmc::solvers {

Rational parse_input_value(const std::string& text, const std::string& what) {
  auto q = parse_exact(text);
  if (!q) throw InputError(what, fmt::format("{} is not a finite number", quote_excerpt(text)));
  return *q;
}

std::vector<Rational> parse_input_list(const std::string& text, const std::string& what) {
  std::vector<Rational> out;
  for (const auto& item : split_input_list(text, what)) out.push_back(parse_input_value(item, what));
  return out;
}

std::pair<Rational, Rational> parse_interval(const std::string& text, const std::string& what) {
  const auto items = split_input_list(text, what);
  if (items.size() != 2) throw InputError(what, fmt::format("expected LO,HI, got {}", quote_excerpt(text)));
  const auto lo = parse_exact(items[0]);
  const auto hi = parse_exact(items[1]);
  if (!lo || !hi) throw InputError(what, fmt::format("{} is not two finite numbers LO,HI", quote_excerpt(text)));
  if (!(*hi > *lo)) throw InputError(what, fmt::format("empty interval {} (need LO < HI)", quote_excerpt(text)));
  return {*lo, *hi};
}

}  // namespace ctmc::solvers
