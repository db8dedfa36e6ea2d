#include "ctmc/core/number_text.hpp"

#include <fmt/format.h>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"

namespace ctmc {

std::string not_a_number_reason(const std::string& item) {
  char* end = nullptr;
  errno = 0;
  const double x = item.empty() ? 0 : std::strtod(item.c_str(), &end);
  if (!item.empty() && end == item.c_str() + item.size() && errno == ERANGE && std::isinf(x))
    return "is beyond the range of a double (about 1.8e308)";
  return "is not a number";
}

std::optional<std::uint64_t> parse_whole_number(const std::string& item, std::uint64_t max, std::string& why) {
  if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos) {
    why = "is not a whole number";
    return std::nullopt;
  }
  std::uint64_t v = 0;
  for (char c : item) {
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (max - digit) / 10) {
      why = "is too large (at most " + std::to_string(max) + ")";
      return std::nullopt;
    }
    v = 10 * v + digit;
  }
  return v;
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

}  // namespace ctmc
