// The model JSON reader (DESIGN.md sections 4 and 8): number texts keyed by
// escaped JSON pointers, unknown keys rejected, large chains read in linear
// time; and correct_bits / correct_digits on NaN errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "ctmc/core/errors.hpp"
#include "ctmc/solvers/model.hpp"
#include "ctmc/solvers/number_text.hpp"
#include "ctmc/core/quote.hpp"
#include "ctmc/solvers/scalar.hpp"
#include "ctmc/solvers/stationary.hpp"

using namespace ctmc;
using namespace ctmc::solvers;

namespace {

// The message of the InputError `text` raises (empty when it reads).
std::string read_error(const std::string& text, const std::string& source = "m.json") {
  try {
    model_from_json_text(text, source);
  } catch (const ctmc::InputError& e) {
    return e.what();
  }
  return "";
}

bool one_line(const std::string& s) { return s.find('\n') == std::string::npos; }

}  // namespace

TEST_CASE("number texts are keyed by RFC 6901 pointers: a key with '/' or '~' shadows nothing") {
  // Unescaped, "a/b" and a.b would both be "/a/b", and "m~1" and "m/" clash
  // once "/" is written "~1" without "~" first being written "~0".
  const std::string text = R"({"a/b": 1, "a": {"b": 2}, "m~1": 3, "m/": 4, "x": [5, {"~": 6.50}]})";
  const auto texts = json_number_texts(text, "t.json");
  CHECK(texts.size() == 6);
  CHECK(texts.at("/a~1b") == "1");
  CHECK(texts.at("/a/b") == "2");
  CHECK(texts.at("/m~01") == "3");
  CHECK(texts.at("/m~1") == "4");
  CHECK(texts.at("/x/0") == "5");
  CHECK(texts.at("/x/1/~0") == "6.50");  // the text as written, not 6.5
  // Every key is a pointer that nlohmann resolves to that very number.
  const auto doc = nlohmann::ordered_json::parse(text);
  for (const auto& [pointer, number] : texts) {
    INFO(pointer);
    CHECK(doc.at(nlohmann::ordered_json::json_pointer(pointer)).get<double>() == std::stod(number));
  }
}

TEST_CASE("a top-level key 'transitions/0' does not change transitions[0] (collide.json)") {
  // Read as a JSON pointer it would set transitions[0].offset = 1000 (flux 1000/1001, not 1/2).
  const std::string text = R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":1,"spike":true},
    {"from":"B","to":"A","offset":1}],"transitions/0":{"offset":1000}})";
  const auto e = read_error(text, "collide.json");
  CHECK(e == "collide.json: top level: unknown key 'transitions/0' (expected states, transitions, meta)");
  // Inside meta (free-form) the same key is harmless: the rates are as written.
  const std::string in_meta = R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":1,"spike":true},
    {"from":"B","to":"A","offset":1}],"meta":{"transitions/0":{"offset":1000},"/transitions/0/offset":1000}})";
  const auto m = model_from_json_text(in_meta, "meta.json");
  CHECK(m.transitions[0].offset.text == "1");
  CHECK(solve_stationary<Rational>(m, Rational(0)).flux == Rational(1, 2));
}

TEST_CASE("unknown or misspelt keys are rejected with one line naming the file and the place") {
  // Ignoring the misspelt keys of typo.json would read a constant rate 1 with no spike.
  CHECK(read_error(R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":"1","slpoe":"2","spike":true},
    {"from":"B","to":"A","offset":"1"}]})",
                   "typo.json") ==
        "typo.json: transitions[0]: unknown key 'slpoe' (expected from, to, offset, slope, spike)");
  CHECK(read_error(R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":"1","spike":true},
    {"from":"B","to":"A","offset":"1","spkie":true}]})",
                   "typo.json") ==
        "typo.json: transitions[1]: unknown key 'spkie' (expected from, to, offset, slope, spike)");
  CHECK(read_error(R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":"1","spike":true},
    {"from":"B","to":"A","offset":"1"}],"metta":{}})",
                   "typo.json") == "typo.json: top level: unknown key 'metta' (expected states, transitions, meta)");
  const auto e = read_error(R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":"1","Spike":true}]})");
  CHECK(e.find("m.json: transitions[0]: unknown key 'Spike'") == 0);
  CHECK(one_line(e));
  // meta is free-form, and every allowed key is accepted.
  const auto m = model_from_json_text(R"({"states":["A","B"],"transitions":[
    {"from":"A","to":"B","offset":"1","slope":"2","spike":true},{"from":"B","to":"A","offset":"1","slope":0,"spike":false}],
    "meta":{"family":"none","slpoe":1,"nested":{"anything":[1,2]}}})",
                                     "ok.json");
  CHECK(m.transitions[0].slope.value == 2);
  CHECK(m.meta["slpoe"] == 1);
}

TEST_CASE("deeply nested JSON is an error naming the place, not a stack overflow") {
  // A meta of 200,000 nested arrays (2 MB) crashed the reader with SIGSEGV:
  // the number-text walk and the copy into Model::meta recurse per level.
  const std::string head = R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":1,"spike":true},
    {"from":"B","to":"A","offset":1}],"meta":{"x":)";
  const std::size_t deep = 200000;
  const auto e = read_error(head + std::string(deep, '[') + std::string(deep, ']') + "}}", "deep.json");
  CHECK(e == "deep.json: malformed JSON: at meta.x: nested deeper than 512 levels");
  CHECK(one_line(e));
  // Nesting well within the limit is still read (meta is free-form).
  const auto m = model_from_json_text(head + std::string(500, '[') + "7" + std::string(500, ']') + "}}", "ok.json");
  CHECK(m.meta["x"].is_array());
}

TEST_CASE("a model written by model_to_json reads back (only schema keys are written)") {
  const auto m = model_from_json_text(R"({"states":["B","R"],"transitions":[
    {"from":"B","to":"R","offset":"1/3","slope":"-2","spike":true},{"from":"R","to":"B","offset":"5"}],"meta":{"k":1}})",
                                      "a.json");
  const auto back = model_from_json_text(model_to_json(m).dump(), "b.json");
  CHECK(back.states == m.states);
  REQUIRE(back.transitions.size() == 2);
  CHECK(back.transitions[0].offset.value == Rational(1, 3));
  CHECK(back.transitions[0].slope.value == -2);
  CHECK(back.transitions[0].spike);
  CHECK(back.meta == m.meta);
}

TEST_CASE("a 20,000-state chain reads, every endpoint resolved (states hashed, not scanned per transition)") {
  // A ring S0 -> S1 -> ... -> S19999 -> S0 plus the reverse edges, the names in
  // shuffled-looking order so that a wrong index would show.
  constexpr std::size_t n = 20000;
  std::string text = R"({"states": [)";
  for (std::size_t i = 0; i < n; ++i) text += (i ? ",\"S" : "\"S") + std::to_string((i * 7919) % n) + "\"";
  text += R"(], "transitions": [)";
  for (std::size_t i = 0; i < n; ++i) {
    const std::string a = "S" + std::to_string(i), b = "S" + std::to_string((i + 1) % n);
    text += (i ? "," : "") + std::string(R"({"from":")") + a + R"(","to":")" + b + R"(","offset":2,"spike":)" +
            (i == 0 ? "true" : "false") + R"(},{"from":")" + b + R"(","to":")" + a + R"(","offset":1})";
  }
  text += "]}";
  const auto m = model_from_json_text(text, "ring.json");
  REQUIRE(m.size() == n);
  REQUIRE(m.transitions.size() == 2 * n);
  for (std::size_t k = 0; k < m.transitions.size(); k += 997) {
    const auto& t = m.transitions[k];
    const std::size_t i = k / 2;
    const std::string a = "S" + std::to_string(i), b = "S" + std::to_string((i + 1) % n);
    CHECK(m.states[t.from] == (k % 2 ? b : a));
    CHECK(m.states[t.to] == (k % 2 ? a : b));
  }
  CHECK(m.state_index("S7919") == 1);  // the scan stays available for single lookups
}

TEST_CASE("correct_bits / correct_digits: a NaN error has no correct bit; results lie in [0, cap]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(correct_bits(nan, 256) == 0);
  CHECK(correct_digits(nan, 17) == 0);
  CHECK(correct_bits(0, 256) == 256);
  CHECK(correct_digits(0, 17) == 17);
  CHECK(correct_bits(0x1p-10, 256) == 10);
  CHECK(correct_digits(1e-5, 17) == doctest::Approx(5));
  CHECK(correct_bits(1e-300, 53) == 53);
  CHECK(correct_bits(4, 53) == 0);  // 400% wrong: none, not -2
  CHECK(correct_bits(inf, 53) == 0);
  CHECK(correct_digits(inf, 17) == 0);
}

TEST_CASE("split_input_list / parse_input_list: empty lists and items are errors naming the input") {
  CHECK(split_input_list("256,128", "--hidden") == std::vector<std::string>{"256", "128"});
  CHECK(parse_input_list("0,1/3,-2e-3", "--H") == std::vector<Rational>{Rational(0), Rational(1, 3), Rational(-2, 1000)});
  CHECK_THROWS_WITH_AS(split_input_list("", "--clip"), "--clip: empty list", ctmc::InputError);
  CHECK_THROWS_WITH_AS(split_input_list("a.json,", "--neurons"), "--neurons: empty item in 'a.json,'", ctmc::InputError);
  CHECK_THROWS_WITH_AS(parse_input_list("0,,1", "--H"), "--H: empty item in '0,,1'", ctmc::InputError);
  CHECK_THROWS_WITH_AS(parse_input_list("0,x", "--H"), "--H: 'x' is not a finite number", ctmc::InputError);
}

namespace {
template <class F>
std::string read_error_of(F&& f) {
  try {
    f();
  } catch (const ctmc::InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("the model reader refuses /dev/zero before reading a byte, instead of reading forever") {
  if (!std::filesystem::exists("/dev/zero")) return;
  CHECK(read_error_of([] { read_model_file("/dev/zero"); }) ==
        "/dev/zero: not a regular file (a character device); a device, pipe or socket is never read as input");
}

TEST_CASE("the model reader quotes state names and rate texts short and on one line") {
  const std::string name = "B\nctmc-snn: forged" + std::string(100, '!');
  const std::string text = R"({"states":["A","B"],"transitions":[{"from":"A","to":")" + std::string("B\\nctmc-snn: forged") +
                           std::string(100, '!') + R"(","offset":1,"spike":true}]})";
  const auto e = read_error_of([&] { model_from_json_text(text, "m.json"); });
  CHECK(e == "m.json: transitions[0].to: unknown state " + ctmc::quote_excerpt(name));
  CHECK(e.find('\n') == std::string::npos);
  const std::string rate = std::string(300000, '9') + "x";
  const auto r = read_error_of([&] {
    model_from_json_text(R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":")" + rate + R"(","spike":true}]})", "m.json");
  });
  CHECK(r == "m.json: transitions[0].offset: " + ctmc::quote_excerpt(rate) + " is not a finite exact number");
}
