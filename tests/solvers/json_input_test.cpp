// The shared input helpers: quote_excerpt (user text in messages:
// short, one line), parse_json_strict (nesting cap, duplicate keys, short
// parse errors), typed members (InputError naming the key, not nlohmann's
// type_error), and read_input_file (a size cap naming the file), with the
// model reader built on them.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/input_file.hpp"
#include "ctmc/solvers/json_input.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/core/quote.hpp"

using namespace ctmc::solvers;
using ctmc::InputError;
using ctmc::quote_excerpt;

namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("quote_excerpt: quoted, control characters escaped, cut to 60 bytes with the length") {
  CHECK(quote_excerpt("abc") == "'abc'");
  CHECK(quote_excerpt("") == "''");
  CHECK(quote_excerpt("a\nb\tc\rd\\e\x01\x7f") == "'a\\nb\\tc\\rd\\\\e\\x01\\x7f'");
  const std::string sixty(60, 'x');
  CHECK(quote_excerpt(sixty) == "'" + sixty + "'");
  const std::string long_text = std::string(200000, 'y');
  CHECK(quote_excerpt(long_text) == "'" + std::string(57, 'y') + "...' (200000 bytes)");
  // Never cut inside a UTF-8 character: 56 ASCII bytes and then "é" (2 bytes)
  // would be split at 57.
  const std::string utf8 = std::string(56, 'a') + "\xC3\xA9" + std::string(10, 'b');
  CHECK(quote_excerpt(utf8) == "'" + std::string(56, 'a') + "...' (68 bytes)");
  // Bytes that are not well-formed UTF-8 never reach a message raw; whole
  // characters stay as they are (2, 3 and 4 bytes).
  CHECK(quote_excerpt("a\xFF\xFE" "b") == "'a\\xff\\xfeb'");
  CHECK(quote_excerpt("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80") == "'\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80'");
  CHECK(quote_excerpt("\xC3") == "'\\xc3'");                          // cut short
  CHECK(quote_excerpt("\xC0\xAF") == "'\\xc0\\xaf'");                  // overlong '/'
  CHECK(quote_excerpt("\xED\xA0\x80") == "'\\xed\\xa0\\x80'");          // a surrogate
  CHECK(quote_excerpt("\xF4\x90\x80\x80") == "'\\xf4\\x90\\x80\\x80'");  // above U+10FFFF
  CHECK(ctmc::is_utf8("ok \xC3\xA9"));
  CHECK_FALSE(ctmc::is_utf8("bad \xFF"));
  // A newline in the text never makes a second line.
  CHECK(quote_excerpt(std::string(100, '\n')).find('\n') == std::string::npos);
}

TEST_CASE("parse_json_strict: nesting cap, duplicate keys and short parse errors, for json and ordered_json") {
  const std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  CHECK(error_of([&] { parse_json_strict<nlohmann::json>(deep, "d.json"); }) ==
        "d.json: malformed JSON: at a[0]: nested deeper than 512 levels");
  CHECK(error_of([&] { parse_json_strict<nlohmann::ordered_json>(deep, "d.json"); }) ==
        "d.json: malformed JSON: at a[0]: nested deeper than 512 levels");
  CHECK(parse_json_strict<nlohmann::json>(std::string(511, '[') + std::string(511, ']'), "ok.json").is_array());
  CHECK(error_of([] { parse_json_strict<nlohmann::json>(R"({"a":1,"b":{"c":[{"k":1,"k":2}]}})", "k.json"); }) ==
        "k.json: malformed JSON: at b.c[0]: duplicate key 'k'");
  // A key that is not a plain name is quoted in the path, cut short.
  const std::string long_key(1000, 'q');
  const auto e = error_of([&] { parse_json_strict<nlohmann::json>("{\"" + long_key + "\": [1, x]}", "p.json"); });
  CHECK(e.rfind("p.json: malformed JSON: at '" + std::string(57, 'q') + "...' (1000 bytes)[1]: ", 0) == 0);
  // nlohmann quotes the token read so far: a 200 KB string literal must not be quoted whole.
  const auto s = error_of([] { parse_json_strict<nlohmann::json>("[\"" + std::string(200000, 's') + "\x01\"]", "s.json"); });
  CHECK(s.rfind("s.json: malformed JSON: at [0]: ", 0) == 0);
  CHECK(s.size() < 400);  // nlohmann's own text is about 200 bytes
  CHECK(s.find('\n') == std::string::npos);
  // The document names itself as the caller says.
  CHECK(error_of([] { parse_json_strict<nlohmann::json>("{", "h", nullptr, "safetensors header JSON"); }).rfind("h: malformed safetensors header JSON: ", 0) == 0);
  std::vector<std::string> texts;
  parse_json_strict<nlohmann::ordered_json>(R"({"b":1.50,"a":[2e3, -7]})", "n.json", &texts);
  CHECK(texts == std::vector<std::string>{"1.50", "2e3", "-7"});
}

TEST_CASE("typed JSON members: an InputError naming the file and key") {
  const auto j = nlohmann::json::parse(R"({"layers":[{"type":1}], "w": [], "o": {}, "s": "x", "b": true, "n": null, "f": -1.5})");
  const std::string path = json_member_path(json_element_path("layers", 0), "type");
  CHECK(path == "layers[0].type");
  CHECK(error_of([&] { json_string(j["layers"][0]["type"], "net.json", path); }) ==
        "net.json: layers[0].type: expected a string, got a non-negative integer");
  CHECK(error_of([&] { json_string(j["w"], "net.json", "w"); }) == "net.json: w: expected a string, got an array");
  CHECK(error_of([&] { json_expect(j["s"], JsonType::Object, "net.json", "s"); }) == "net.json: s: expected an object, got a string");
  CHECK(error_of([&] { json_expect(j["o"], JsonType::Boolean, "net.json", "o"); }) == "net.json: o: expected true or false, got an object");
  CHECK(error_of([&] { json_expect(j["f"], JsonType::UnsignedInteger, "net.json", "f"); }) ==
        "net.json: f: expected a non-negative integer, got a number");
  CHECK(error_of([&] { json_expect(j, JsonType::Array, "net.json", ""); }) == "net.json: top level: expected an array, got an object");
  CHECK(json_string(j["s"], "net.json", "s") == "x");
  CHECK(json_member_path("", "a b") == "'a b'");
  // Values in messages: never dumped whole.
  CHECK(json_excerpt(j["f"]) == "-1.5");
  CHECK(json_excerpt(j["b"]) == "true");
  CHECK(json_excerpt(nlohmann::json(std::string(100, 'z'))) == "'" + std::string(57, 'z') + "...' (100 bytes)");
  CHECK(json_excerpt(nlohmann::json::array({1, 2, 3})) == "an array of 3 elements");
}

TEST_CASE("read_input_file: a size cap naming the file; folders and missing files named") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("ctmc_input_file_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string f = (dir / "m.json").string();
  std::ofstream(f) << "12345";
  constexpr InputKind kTiny{"tiny file", 4, "a tiny file has 4 bytes"};
  CHECK(error_of([&] { read_input_file(f, kTiny); }) == f + ": larger than 4 bytes (a tiny file has 4 bytes); refusing");
  CHECK(read_input_file(f, kModelFileKind) == "12345");
  CHECK(error_of([&] { read_input_file(dir.string(), kModelFileKind); }) == dir.string() + ": is a folder, not a model file");
  CHECK(error_of([&] { read_input_file((dir / "absent").string(), kModelFileKind); }).rfind((dir / "absent").string() + ": cannot open model file (", 0) == 0);
  fs::remove_all(dir);
  CHECK(byte_size_text(64 * kMiB) == "64 MiB");
  CHECK(byte_size_text(std::uint64_t(2) << 30) == "2 GiB");
  CHECK(byte_size_text(12) == "12 bytes");
}
