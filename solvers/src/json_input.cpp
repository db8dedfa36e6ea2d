// Strict JSON parsing shared by every JSON reader (json_input.hpp).
#include "ctmc/solvers/json_input.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

namespace ctmc::solvers {

std::string json_member_path(const std::string& parent, std::string_view key) {
  const bool plain = !key.empty() && key.size() <= kExcerptBytes && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
  const std::string shown = plain ? std::string(key) : quote_excerpt(key);
  return parent.empty() ? shown : parent + "." + shown;
}

std::string json_element_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

const char* json_type_name(JsonType t) {
  switch (t) {
    case JsonType::String: return "a string";
    case JsonType::Number: return "a number";
    case JsonType::UnsignedInteger: return "a non-negative integer";
    case JsonType::Boolean: return "true or false";
    case JsonType::Array: return "an array";
    case JsonType::Object: return "an object";
  }
  return "a value";
}

namespace {

// nlohmann's parse errors end in "; last read: '<token>'", the token read so
// far, whole (a 200 KB string literal is quoted whole): cut it short.
std::string short_parse_error(const std::string& what) {
  const std::string marker = "; last read: '";
  const auto at = what.find(marker);
  if (at == std::string::npos) return what.size() <= 200 ? what : what.substr(0, 197) + "...";
  const auto from = at + marker.size();
  const auto end = what.size() > from && what.back() == '\'' ? what.size() - 1 : what.size();
  return what.substr(0, at) + "; last read: " + quote_excerpt(std::string_view(what).substr(from, end - from));
}

struct StrictSax {
  // Where the parser is, so that an error names the field ("transitions[4].offset").
  struct Frame {
    bool array = false;
    std::size_t count = 0;  // arrays: elements started so far
    std::string key;        // objects: the current key
    std::set<std::string> keys;
  };
  std::vector<std::string>* texts = nullptr;
  std::vector<Frame> frames;
  std::string error;

  void value() {
    if (!frames.empty() && frames.back().array) ++frames.back().count;
  }
  void text(std::string s) {
    if (texts) texts->push_back(std::move(s));
  }
  bool null() { value(); return true; }
  bool boolean(bool) { value(); return true; }
  bool number_integer(std::int64_t v) { value(); text(std::to_string(v)); return true; }
  bool number_unsigned(std::uint64_t v) { value(); text(std::to_string(v)); return true; }
  bool number_float(double, const std::string& s) { value(); text(s); return true; }
  bool string(std::string&) { value(); return true; }
  bool binary(std::vector<std::uint8_t>&) { value(); return true; }
  bool too_deep() {
    if (frames.size() < kMaxJsonDepth) return false;
    // Named by its outermost two levels ("at meta.x: "): the full path would be 512 steps long.
    error = where(2) + "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return true;
  }
  bool start_object(std::size_t) {
    value();
    if (too_deep()) return false;
    frames.emplace_back();
    return true;
  }
  bool key(std::string& k) {
    if (!frames.back().keys.insert(k).second) {
      frames.back().key.clear();  // named as the object's place: "at layers[0]: duplicate key 'bias'"
      error = where() + "duplicate key " + quote_excerpt(k);
      return false;
    }
    frames.back().key = k;
    return true;
  }
  bool end_object() { frames.pop_back(); return true; }
  bool start_array(std::size_t) {
    value();
    if (too_deep()) return false;
    frames.emplace_back();
    frames.back().array = true;
    return true;
  }
  bool end_array() { frames.pop_back(); return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    // The failing token is the next element of an array, or the current key's value.
    if (!frames.empty() && frames.back().array) ++frames.back().count;
    error = where() + short_parse_error(e.what());
    return false;
  }
  // "at transitions[4].offset: " (empty at the top level), from the outermost
  // `levels` frames.
  std::string where(std::size_t levels = std::numeric_limits<std::size_t>::max()) const {
    std::string path;
    for (std::size_t i = 0; i < frames.size() && i < levels; ++i) {
      const auto& f = frames[i];
      if (f.array) {
        if (f.count > 0) path = json_element_path(path, f.count - 1);
      } else if (!f.key.empty()) {
        path = json_member_path(path, f.key);
      }
    }
    return path.empty() ? std::string() : "at " + path + ": ";
  }
};

}  // namespace

template <class Json>
Json parse_json_strict(std::string_view text, const std::string& source, std::vector<std::string>* number_texts,
                       const char* what) {
  StrictSax sax;
  sax.texts = number_texts;
  if (!Json::sax_parse(text, &sax) || !sax.error.empty())
    throw InputError(source + ": malformed " + what + ": " + (sax.error.empty() ? std::string("parse error") : sax.error));
  // Checked above: well-formed, at most kMaxJsonDepth deep, no duplicate keys.
  return Json::parse(text);
}

template nlohmann::json parse_json_strict<nlohmann::json>(std::string_view, const std::string&, std::vector<std::string>*,
                                                          const char*);
template nlohmann::ordered_json parse_json_strict<nlohmann::ordered_json>(std::string_view, const std::string&,
                                                                          std::vector<std::string>*, const char*);

}  // namespace ctmc::solvers
