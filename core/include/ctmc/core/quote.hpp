// quote_excerpt: how every message quotes user text (a value, line, key or
// state name read from an input), so that an InputError stays one short
// line whatever the input holds (errors.hpp: messages are one line naming
// the input). A 200 KB table row or a 290 KB JSON value made messages of
// that size, and a newline in a state name forged a second message line.
#pragma once
#include <cstddef>
#include <string>
#include <string_view>

namespace ctmc {

// Longest piece of user text (bytes) that quote_excerpt shows whole.
inline constexpr std::size_t kExcerptBytes = 60;

// `text` in single quotes, control characters and backslashes escaped (\n,
// \t, \r, \\, \xNN); over kExcerptBytes bytes it is cut to its first 57
// (never inside a UTF-8 sequence) with "..." and its length:
// 'aaaa...' (412345 bytes).
inline std::string quote_excerpt(std::string_view text) {
  std::string_view shown = text;
  const bool cut = text.size() > kExcerptBytes;
  if (cut) {
    std::size_t n = kExcerptBytes - 3;
    // Back up over UTF-8 continuation bytes (10xxxxxx) so no character is split.
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    shown = text.substr(0, n);
  }
  std::string out = "'";
  for (const char ch : shown) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          constexpr char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[c >> 4];
          out += kHex[c & 0xF];
        } else {
          out += ch;
        }
    }
  }
  if (cut) return out + "...' (" + std::to_string(text.size()) + " bytes)";
  return out + "'";
}

}  // namespace ctmc
