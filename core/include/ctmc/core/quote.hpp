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

// The length of the well-formed UTF-8 sequence at text[i] (1 to 4 bytes,
// Unicode's table 3-7: no overlong forms, no surrogates, nothing above
// U+10FFFF), or 0 where the bytes there are not one.
inline std::size_t utf8_sequence_length(std::string_view text, std::size_t i) {
  const auto at = [&](std::size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u; };
  const unsigned c = at(0);
  if (c < 0x80) return 1;
  const auto cont = [&](std::size_t k, unsigned lo = 0x80, unsigned hi = 0xBF) { return at(k) >= lo && at(k) <= hi; };
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return cont(1, lo, hi) && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return cont(1, lo, hi) && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

// Whether `text` is well-formed UTF-8 throughout.
inline bool is_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = utf8_sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

// `text` in single quotes, control characters, backslashes and bytes that
// are not well-formed UTF-8 escaped (\n, \t, \r, \\, \xNN), so a message
// is always UTF-8 text; over kExcerptBytes bytes it is cut to its first 57
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
  const auto hex = [&out](unsigned char c) {
    constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xF];
  };
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const char ch = shown[i];
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80) {
      const std::size_t n = utf8_sequence_length(shown, i);
      if (n == 0) {
        hex(c);
      } else {
        out.append(shown.substr(i, n));
        i += n - 1;
      }
      continue;
    }
    switch (ch) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      case '\\': out += "\\\\"; break;
      default:
        if (c < 0x20 || c == 0x7F) {
          hex(c);
        } else {
          out += ch;
        }
    }
  }
  if (cut) return out + "...' (" + std::to_string(text.size()) + " bytes)";
  return out + "'";
}

}  // namespace ctmc
