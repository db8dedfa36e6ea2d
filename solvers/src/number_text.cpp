#include "ctmc/solvers/number_text.hpp"

#include <fmt/format.h>

#include "ctmc/solvers/errors.hpp"
#include "ctmc/solvers/exact.hpp"
#include "ctmc/solvers/quote.hpp"

namespace ctmc::solvers {

std::string not_a_number_reason(const std::string& item) {
  char* end = nullptr;
  errno = 0;
  const double x = item.empty() ? 0 : std::strtod(item.c_str(), &end);
  if (!item.empty() && end == item.c_str() + item.size() && errno == ERANGE && std::isinf(x))
    return "is beyond the range of a double (about 1.8e308)";
  return "is not a number";
}

std::vector<std::string> split_input_list(const std::string& text, const std::string& what) {
  if (text.empty()) throw InputError(what, "empty list");
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (out.back().empty()) throw InputError(what, fmt::format("empty item in {}", quote_excerpt(text)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

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
