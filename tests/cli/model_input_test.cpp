// End-to-end: the ctmc-snn executable on bad model files (exit status 2 and a
// one-line message naming the file and the field, DESIGN.md section 8) and on
// good ones (flux and counting against hand-derived exact values).
#include <doctest/doctest.h>

#include <string>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

std::string write_model(const std::string& name, const std::string& text) { return write_file(name, text); }

const char* kGoodTransitions = R"(
    {"from": "B", "to": "G", "offset": 2},
    {"from": "G", "to": "B", "offset": 1},
    {"from": "G", "to": "R", "offset": 3, "spike": true},
    {"from": "R", "to": "B", "offset": "1/2"})";

std::string three_state_with(const std::string& extra_transition) {
  return std::string(R"({"states": ["B", "G", "R"], "transitions": [)") + kGoodTransitions +
         (extra_transition.empty() ? "" : ",\n    " + extra_transition) + "]}";
}

// Runs `flux FILE --H 0` and checks exit status 2, a one-line message naming
// the file, and each of `needles` in it.
void check_bad_model(const std::string& name, const std::string& text, std::initializer_list<const char*> needles) {
  const std::string path = write_model(name, text);
  const auto r = run_cli("flux \"" + path + "\" --H 0");
  INFO("model: " << text << "\noutput: " << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(path) != std::string::npos);
  for (const char* needle : needles) CHECK(r.output.find(needle) != std::string::npos);
  // One line: the message ends with the only newline.
  CHECK(r.output.find('\n') == r.output.size() - 1);
}

}  // namespace

TEST_CASE("bad model files: exit 2, one line naming the file and the field") {
  check_bad_model("unknown_state.json", three_state_with(R"({"from": "B", "to": "X", "offset": 1})"),
                  {"transitions[4].to", "unknown state 'X'"});
  check_bad_model("duplicate.json", three_state_with(R"({"from": "G", "to": "R", "offset": 5})"),
                  {"transitions[4]", "duplicate transition 'G' -> 'R'"});
  check_bad_model("self_loop.json", three_state_with(R"({"from": "R", "to": "R", "offset": 1})"),
                  {"transitions[4]", "self-loop"});
  check_bad_model("negative.json", three_state_with(R"({"from": "R", "to": "G", "offset": -2})"),
                  {"transitions[4].offset", "negative constant rate"});
  check_bad_model("nan.json", three_state_with(R"({"from": "R", "to": "G", "offset": "nan"})"),
                  {"transitions[4].offset", "'nan' is not a finite"});
  check_bad_model("inf_string.json", three_state_with(R"({"from": "R", "to": "G", "offset": "1", "slope": "-inf"})"),
                  {"transitions[4].slope", "'-inf' is not a finite"});
  check_bad_model("inf_number.json", three_state_with(R"({"from": "R", "to": "G", "offset": 1e999})"),
                  {"transitions[4].offset", "overflow"});
  check_bad_model("inf_exact.json", three_state_with(R"({"from": "R", "to": "G", "offset": "1e999"})"),
                  {"transitions[4].offset", "out of range"});
  check_bad_model("no_spike.json",
                  R"({"states": ["B", "R"], "transitions": [{"from": "B", "to": "R", "offset": 1},
                      {"from": "R", "to": "B", "offset": 1}]})",
                  {"transitions", "no spike transition"});
  check_bad_model("empty.json", R"({"states": [], "transitions": []})", {"states", "no states"});
  check_bad_model("malformed.json", R"({"states": ["B", "R"], "transitions": [)", {"malformed JSON"});
  check_bad_model("not_object.json", R"([1, 2, 3])", {"top level must be an object"});
  check_bad_model("bad_from.json", three_state_with(R"({"to": "B", "offset": 1})"), {"transitions[4].from", "missing"});
  check_bad_model("missing_offset.json", three_state_with(R"({"from": "R", "to": "G"})"), {"transitions[4].offset", "missing"});
  check_bad_model("bad_spike.json", three_state_with(R"({"from": "R", "to": "G", "offset": 1, "spike": "yes"})"),
                  {"transitions[4].spike"});
}

TEST_CASE("unknown or misspelt keys: exit 2, one line naming the file and the place") {
  // Ignored, a misspelt slope or spike would give a constant rate 1 with no spike.
  check_bad_model("typo_slope.json", three_state_with(R"({"from": "R", "to": "G", "offset": 1, "slpoe": 2})"),
                  {"transitions[4]: unknown key 'slpoe' (expected from, to, offset, slope, spike)"});
  check_bad_model("typo_spike.json", three_state_with(R"({"from": "R", "to": "G", "offset": 1, "spkie": true})"),
                  {"transitions[4]: unknown key 'spkie'"});
  check_bad_model("typo_meta.json",
                  R"({"states": ["B", "G", "R"], "transitions": [)" + std::string(kGoodTransitions) + R"(], "metta": {}})",
                  {"top level: unknown key 'metta' (expected states, transitions, meta)"});
  // A key with "/" once named transitions[0].offset (flux 1000/1001, not 1/2).
  check_bad_model("collide.json",
                  R"({"states":["A","B"],"transitions":[{"from":"A","to":"B","offset":1,"spike":true},
                      {"from":"B","to":"A","offset":1}],"transitions/0":{"offset":1000}})",
                  {"unknown key 'transitions/0'"});
}

TEST_CASE("flux with an H in the list that fails: exit 2 and no output before the message") {
  // {B} and {C} are both closed at H = 0 (rates B -> A and C -> A are max(0, H)).
  // At H = 1 the chain is fine; its block must not be printed before the
  // error at H = 0 (half a report).
  const std::string path = write_model("twoclass.json", R"({"states":["A","B","C"],"transitions":[
      {"from":"A","to":"B","offset":1,"spike":true},{"from":"A","to":"C","offset":1},
      {"from":"B","to":"A","offset":0,"slope":1},{"from":"C","to":"A","offset":0,"slope":1}]})");
  for (const char* mode : {"--exact", "--double", "--precision 64", "--exact --json"}) {
    const auto r = run_cli("flux \"" + path + "\" --H 1,0 " + mode);
    INFO(mode << ": " << r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("flux =") == std::string::npos);
    CHECK(r.output.find("2 closed classes") != std::string::npos);
    CHECK(r.output.find('\n') == r.output.size() - 1);
  }
  // Both inputs good: both blocks, in order.
  const auto r = run_cli("flux \"" + path + "\" --H 1,2 --exact");
  INFO(r.output);
  CHECK(r.status == 0);
  const auto first = r.output.find("H = 1\n  flux = 1/3"), second = r.output.find("H = 2\n  flux = 0.5");
  CHECK(first != std::string::npos);
  CHECK(second != std::string::npos);
  CHECK(first < second);
  CHECK(r.output.find("pi[C] = 0.25") != std::string::npos);
}

TEST_CASE("reducible chain with two closed classes: exit 2 naming both classes") {
  // S -> L (spike) and S -> R: {L} and {R} are both closed.
  check_bad_model("two_classes.json",
                  R"({"states": ["S", "L", "R"], "transitions": [{"from": "S", "to": "L", "offset": 1, "spike": true},
                      {"from": "S", "to": "R", "offset": 2}]})",
                  {"2 closed classes", "{L}", "{R}"});
}

TEST_CASE("a missing model file: exit 2 naming it") {
  const std::string path = (temp_dir() / "does_not_exist.json").string();
  const auto r = run_cli("flux \"" + path + "\" --H 0");
  CHECK(r.status == 2);
  CHECK(r.output.find(path) != std::string::npos);
}

TEST_CASE("a folder given as the model file: exit 2 saying so") {
  // It read as "malformed JSON ... unexpected end of input".
  const std::string dir = temp_dir().string();
  const auto r = run_cli("flux \"" + dir + "\" --H 0");
  CHECK(r.status == 2);
  CHECK(r.output.find(dir + ": is a folder, not a model file") != std::string::npos);
}

TEST_CASE("bad options: exit 2") {
  const std::string model = std::string(CTMC_FIXTURES_DIR) + "/three_state.json";
  CHECK(run_cli("flux \"" + model + "\" --H abc").status == 2);
  CHECK(run_cli("flux \"" + model + "\" --H 0 --precision 10").status == 2);
  CHECK(run_cli("counting \"" + model + "\" --H 0 --T 0").status == 2);
  CHECK(run_cli("counting \"" + model + "\" --H 0 --T 1 --from Q").status == 2);
}

TEST_CASE("flux --exact of a three-state family model: 1/3 and the closed form agrees exactly") {
  // a(H) = 1 + H/2 = 2 at H = 2; eq. 2: acd / (d(a+b+c) + ac) = 3 / (3 + 6) = 1/3.
  const auto r = run_cli("flux \"" + std::string(CTMC_FIXTURES_DIR) + "/three_state_family.json\" --H 2 --exact");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("flux = 1/3") != std::string::npos);
  CHECK(r.output.find("difference (exact) = 0") != std::string::npos);
  CHECK(r.output.find("pi[R] = 2/3") != std::string::npos);
}

TEST_CASE("counting --exact: lambda = 1/3 and Fano factor 14/27 (REFERENCES.md)") {
  const auto r = run_cli("counting \"" + std::string(CTMC_FIXTURES_DIR) + "/three_state.json\" --H 0 --T 5 --exact --json");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find(R"("rate": "1/3")") != std::string::npos);
  CHECK(r.output.find(R"("fano": "14/27")") != std::string::npos);
  CHECK(r.output.find(R"("mean": "1.666666666666666666666666666666666666666666666666666666666666666666)") !=
        std::string::npos);  // E N(5) = 5/3 from stationarity
}

TEST_CASE("flux --exact on the family fixtures: hand-derived values, closed form agrees") {
  struct Case {
    const char* file;
    const char* h;
    const char* flux;
  };
  // two-state a = H, d = 3 at H = 1: 3/4. Full three-state at H = 1/2: by the
  // tree theorem (see the fixture's note) 57/35, equal to the flux out of B,
  // pi_B (BG + BR) = 38/70 * 3. Bernstein N = 2, u = 0.9: M = 1 + 2u = 2.8,
  // 4 M / (4 + M) = 28/17.
  for (const Case& c : {Case{"two_state_family.json", "1", "flux = 0.75"},
                        Case{"full_three_state_family.json", "1/2", "flux = 57/35"},
                        Case{"bernstein_n2.json", "0.9", "flux = 28/17"}}) {
    const auto r = run_cli("flux \"" + std::string(CTMC_FIXTURES_DIR) + "/" + c.file + "\" --H " + c.h + " --exact");
    INFO(c.file << ": " << r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find(c.flux) != std::string::npos);
    CHECK(r.output.find("difference (exact) = 0") != std::string::npos);
  }
  // MPFR: the closed form and GTH agree to (nearly) every bit.
  const auto r = run_cli("flux \"" + std::string(CTMC_FIXTURES_DIR) + "/full_three_state_family.json\" --H 1/2 --json");
  INFO(r.output);
  CHECK(r.status == 0);
  const auto pos = r.output.find("\"correct_bits\": ");
  REQUIRE(pos != std::string::npos);
  CHECK(std::stod(r.output.substr(pos + 16)) >= 248);
}

TEST_CASE("flux --double: a closed form whose products overflow a double is not printed as -nan") {
  // a = max(0, 1.4 + 0.75 H) = 7.5e307 at H = 1e308: GTH is fine, and the
  // closed form's a c d and d (a + b + c) + a c would overflow (inf / inf =
  // -nan); they are evaluated on rates scaled by a power of two
  // (closed_form_flux), so the closed form is printed and agrees with GTH.
  const std::string path = write_model("overflow_closed_form.json", R"({"states": ["B", "G", "R"], "transitions": [
      {"from": "B", "to": "G", "offset": "1.4", "slope": "0.75"}, {"from": "G", "to": "B", "offset": "1.15"},
      {"from": "G", "to": "R", "offset": "1.8", "spike": true}, {"from": "R", "to": "B", "offset": "10"}],
      "meta": {"family": "three-state"}})");
  for (const char* mode : {"--double", "--double --json"}) {
    const auto r = run_cli("flux \"" + path + "\" --H 1e308 " + mode);
    INFO(mode << ": " << r.output);
    CHECK(r.status == 0);
    CHECK(r.output.find("nan") == std::string::npos);
    CHECK(r.output.find("overflow a double") == std::string::npos);
    // "correct_bits": 52.6 (JSON) or "(52.6 correct bits of 53)" (text).
    const bool json = std::string(mode).find("json") != std::string::npos;
    const auto key = r.output.find(json ? "\"correct_bits\": " : " correct bits of");
    REQUIRE(key != std::string::npos);
    const auto pos = json ? key + 16 : r.output.rfind('(', key) + 1;
    CHECK(std::stod(r.output.substr(pos)) >= 50);
  }
}
