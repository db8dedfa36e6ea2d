// End-to-end checks of the commands beyond `flux` and `counting`: their exit
// statuses (0 ran and held, 2 bad input with a one-line message naming the
// input) and outputs against hand-derived values.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_helpers.hpp"

using namespace ctmc_cli_test;

namespace {

bool one_line(const std::string& s) {
  // One message line (a trailing newline allowed).
  const auto pos = s.find('\n');
  return pos == std::string::npos || pos + 1 == s.size();
}

void check_exit2(const std::string& args, const std::string& needle) {
  const auto r = run_cli(args);
  INFO("ctmc-snn " << args << "\n" << r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find(needle) != std::string::npos);
  CHECK(one_line(r.output));
}

}  // namespace

TEST_CASE("formula: tree-theorem flux of the paper's three-state chain") {
  // Appendix A: w_B = d(b+c), w_G = a d, w_R = a c with a = r_B_G, b = r_G_B,
  // c = r_G_R, d = r_R_B, so F = c w_G / (w_B + w_G + w_R) = a c d / (...).
  const auto r = run_cli("formula \"" + fixture("three_state.json") + "\"");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("w_G = r_B_G*r_R_B") != std::string::npos);
  CHECK(r.output.find("w_R = r_B_G*r_G_R") != std::string::npos);
  CHECK(r.output.find("F = r_B_G*r_G_R*r_R_B / (") != std::string::npos);
  CHECK(r.output.find("\\frac{") != std::string::npos);
}

TEST_CASE("formula: a three-state family listed in another order keeps the paper's symbols by structure") {
  // G -> R (listed first) is c, not a; a family name without the shape gets r_X_Y.
  const auto reorder = write_file("reorder.json", R"({"states":["B","G","R"],"transitions":[
      {"from":"G","to":"R","offset":3,"spike":true},{"from":"B","to":"G","offset":2},
      {"from":"R","to":"B","offset":"1/2"},{"from":"G","to":"B","offset":1}],"meta":{"family":"three-state"}})");
  const auto r = run_cli("formula \"" + reorder + "\"");
  INFO(r.output);
  CHECK(r.status == 0);
  CHECK(r.output.find("c = 3   [G -> R, spike]") != std::string::npos);
  CHECK(r.output.find("a = 2   [B -> G]") != std::string::npos);
  CHECK(r.output.find("F = a*c*d / (a*c + a*d + b*d + c*d)") != std::string::npos);
  const auto wrong = write_file("wrongshape.json", R"({"states":["X","Y"],"transitions":[
      {"from":"Y","to":"X","offset":3},{"from":"X","to":"Y","offset":2,"spike":true}],"meta":{"family":"two-state"}})");
  const auto w = run_cli("formula \"" + wrong + "\"");
  INFO(w.output);
  CHECK(w.status == 0);
  CHECK(w.output.find("r_X_Y = 2   [X -> Y, spike]") != std::string::npos);
  CHECK(w.output.find("a = ") == std::string::npos);
}

TEST_CASE("formula: more than 7 states is bad input") {
  std::string states, transitions;
  for (int i = 0; i < 8; ++i) {
    states += (i ? ", " : "") + std::string("\"S") + std::to_string(i) + "\"";
    transitions += (i ? ", " : "") + std::string("{\"from\": \"S") + std::to_string(i) + "\", \"to\": \"S" +
                   std::to_string((i + 1) % 8) + "\", \"offset\": 1, \"spike\": " + (i == 0 ? "true" : "false") + "}";
  }
  const auto path = write_file("ring8.json", "{\"states\": [" + states + "], \"transitions\": [" + transitions + "]}");
  check_exit2("formula \"" + path + "\"", "7 states");
}

TEST_CASE("simulate neuron: agrees with the exact mean and does not depend on --threads") {
  const std::string base = "simulate neuron \"" + fixture("three_state.json") + "\" --H 0 --T 5 --trials 400 --seed 3 --json";
  const auto one = run_cli(base + " --threads 1");
  const auto two = run_cli(base + " --threads 2");
  INFO(one.output);
  CHECK(one.status == 0);
  // Started from pi, E[N(T)] = F T = (1/3) 5 exactly (the fixture's flux is 1/3).
  CHECK(one.output.find("\"mean_count\": 1.66666666666") != std::string::npos);
  CHECK(one.output == two.output);
}

TEST_CASE("simulate neuron: trials that all count 0 spikes are judged on the mean only, not failed") {
  // Two-state fixture at H = 1: E N(T) = 0.75 T; at T = 0.001 every one of the
  // 100 trials counts 0 with probability ~0.93. The sample variance is then 0
  // with a sample standard error of 0: that must not read as infinitely many
  // standard errors (it exited 1 with z = -1e300).
  const auto r = run_cli("simulate neuron \"" + fixture("two_state_family.json") +
                         "\" --H 1 --T 0.001 --trials 100 --seed 2 --json");
  INFO(r.output);
  CHECK(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  REQUIRE(j["empirical"]["mean_count"].get<double>() == 0.0);
  CHECK(j["agreement"]["variance_tested"] == false);
  CHECK(j["agreement"]["z_variance"].is_null());
  // z of the mean from the exact Var N(T) = 0.000749...: -0.00075 / sqrt(0.00075 / 100) = -0.27.
  CHECK(j["agreement"]["z_mean"].get<double>() == doctest::Approx(-0.274).epsilon(0.01));
  CHECK(j["agreement"]["ok"] == true);
}

TEST_CASE("simulate neuron: bad options exit 2") {
  const std::string m = "\"" + fixture("three_state.json") + "\"";
  check_exit2("simulate neuron " + m + " --H 0 --T -1 --trials 10", "--T");
  check_exit2("simulate neuron " + m + " --H nan --T 1 --trials 10", "--H");
  check_exit2("simulate neuron " + m + " --H 0 --T 1 --trials 10 --start Q", "Q");
  // A seed beyond 2^64 - 1 ran as 2^64 - 1 (CLI11 clamps); 2^64 - 1 itself is a seed.
  check_exit2("simulate neuron " + m + " --H 0 --T 1 --trials 10 --seed 18446744073709551616",
              "--seed: '18446744073709551616' is beyond 18446744073709551615");
  CHECK(run_cli("simulate neuron " + m + " --H 0 --T 1 --trials 10 --seed 18446744073709551615").status == 0);
  // A rate beyond double's range names the option, not "ssa: transition 2: rate inf".
  check_exit2("simulate neuron " + m + " --H 0 --T 1e-300 --trials 10 --alpha 1e308", "--alpha: ");
  const auto sloped = write_file("sloped.json", R"({"states": ["A", "B"], "transitions": [
      {"from": "A", "to": "B", "offset": 1, "slope": 1, "spike": true}, {"from": "B", "to": "A", "offset": 1}]})");
  check_exit2("simulate neuron \"" + sloped + "\" --H 1e400 --T 1e-300 --trials 10", "--H: ");
}

TEST_CASE("unknown commands are named; negative seeds and counts and empty list items are bad input") {
  check_exit2("bogus", "unknown command 'bogus'");
  check_exit2("report bogus", "report: unknown command 'bogus' (known: flux");
  check_exit2("simulate bogus", "simulate: unknown command 'bogus'");
  // CLI11 wrapped "-1" to 2^64 - 1 for unsigned options (the run went ahead
  // with seed 18446744073709551615).
  const std::string m = "\"" + fixture("three_state.json") + "\"";
  check_exit2("simulate neuron " + m + " --H 0 --T 1 --seed -1", "--seed: need a number >= 0");
  check_exit2("simulate neuron " + m + " --H 0 --T 1 --trials -5", "--trials: need a number >= 0");
  check_exit2("simulate network --net n.json --data d --neurons " + m + " --seed -1", "--seed");
  check_exit2("report flux --seed -1", "--seed: need a number >= 0");
  check_exit2("train --data d --output o.json --seed -1", "--seed");
  // Dropping empty items would make "--clip ''" evaluate nothing and exit 0:
  // an empty value is refused for every option when the command line is
  // parsed (main.cpp), before the list is read.
  check_exit2("evaluate --net n.json --data d --clip ''", "--clip: empty value");
  check_exit2("train --data d --output o.json --hidden 4,", "--hidden: empty item");
  check_exit2("simulate network --net n.json --data d --neurons " + m + ",", "--neurons: empty item");
  // IF options without --if would be ignored: refused.
  check_exit2("simulate network --net n.json --data d --neurons " + m + " --v0 0.5", "--v0 requires --if");
  check_exit2("simulate network --net n.json --data d --neurons " + m + " --if-steps 8", "--if-steps requires --if");
}

TEST_CASE("bernstein: bad input exits 2 with the reason") {
  check_exit2("bernstein --activation sigmoid --domain -8,8 --N 0", "--N");
  check_exit2("bernstein --activation sigmoid --domain 8,-8 --N 4", "--domain");
  check_exit2("bernstein --activation sigmoid --domain -8,8 --rho 0.5 --N 4", "--rho");
  // --cap and --bracket steer only the --eps search: without it they would be ignored silently.
  check_exit2("bernstein --activation sigmoid --domain -8,8 --N 4 --bracket 0.5", "--bracket requires --eps");
  check_exit2("bernstein --activation sigmoid --domain -8,8 --N 4 --cap 10", "--cap requires --eps");
  check_exit2("bernstein --activation sigmoid --domain -8,8 --eps 0", "--eps");
  check_exit2("bernstein --activation nosuch --domain -8,8 --N 4", "nosuch");
  // eps is used in double: 1e-400 rounds to 0 (the search would be skipped,
  // exit 0) and 1e400 to inf (claim 2 "proved" at N = 1): both refused.
  check_exit2("bernstein --activation sigmoid --domain -8,8 --eps 1e-400", "--eps");
  check_exit2("bernstein --activation sigmoid --domain -8,8 --eps 1e400", "--eps");
  // phi <= 0 on the domain: no --rho was given, so the message names the factor.
  check_exit2("bernstein --activation relu --domain -2,0 --N 3", "--rho-factor");
  // A decreasing target is outside the theorem's hypotheses.
  const auto table = write_file("decreasing.csv", "x,phi\n0,2\n1,1\n2,0.5\n");
  check_exit2("bernstein --activation table:" + table + " --domain 0,2 --N 4", "nondecreasing");
}


TEST_CASE("data info: a truncated IDX file exits 2 naming the file") {
  // A valid IDX header for 10 images of 28x28 but only 3 bytes of pixels.
  std::string img("\x00\x00\x08\x03\x00\x00\x00\x0a\x00\x00\x00\x1c\x00\x00\x00\x1c", 16);
  img += "abc";
  std::string lab("\x00\x00\x08\x01\x00\x00\x00\x0a", 8);
  lab += std::string(10, '\x01');
  const auto dir = write_idx_dir("truncated_idx", img, lab, img, lab);
  check_exit2("data info \"" + dir.string() + "\"", "images-idx3-ubyte");
}

TEST_CASE("data info: class counts are keyed by label, so a missing top class shows") {
  // 3 images of 2x2 with labels 0, 2, 0 (no 1, and no 9 as in a small test
  // set): a list indexed by label showed [2, 0, 1] and nothing about 3..9.
  std::string img("\x00\x00\x08\x03\x00\x00\x00\x03\x00\x00\x00\x02\x00\x00\x00\x02", 16);
  img += std::string(12, '\x10');
  std::string lab("\x00\x00\x08\x01\x00\x00\x00\x03", 8);
  lab += std::string("\x00\x02\x00", 3);
  const auto dir = write_idx_dir("labels_idx", img, lab, img, lab);
  const auto r = run_cli("data info \"" + dir.string() + "\" --json");
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("\"per_class\": {\n") != std::string::npos);
  CHECK(r.output.find("\"0\": 2") != std::string::npos);
  CHECK(r.output.find("\"2\": 1") != std::string::npos);
  CHECK(r.output.find("\"1\":") == std::string::npos);
}

TEST_CASE("evaluate and train: a data folder without test images exits 2, not a test accuracy of 0%") {
  // 3 training images of 1x2 (the size tiny_mlp.json takes), labels 0, 1, 0; no test images.
  std::string img("\x00\x00\x08\x03\x00\x00\x00\x03\x00\x00\x00\x01\x00\x00\x00\x02", 16);
  img += std::string(6, '\x10');
  std::string lab("\x00\x00\x08\x01\x00\x00\x00\x03", 8);
  lab += std::string("\x00\x01\x00", 3);
  const std::string empty_img("\x00\x00\x08\x03\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02", 16);
  const std::string empty_lab("\x00\x00\x08\x01\x00\x00\x00\x00", 8);
  const auto dir = write_idx_dir("no_test_idx", img, lab, empty_img, empty_lab);
  const std::string d = "\"" + dir.string() + "\"";
  check_exit2("evaluate --net \"" + fixture("tiny_mlp.json") + "\" --data " + d, "no test images");
  const auto out = temp_dir() / "no_test_net.json";
  check_exit2("train --data " + d + " --hidden 2 --epochs 1 --threads 1 --output \"" + out.string() + "\"",
              "no test images");
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("train: an --output that is a folder (or whose weights file is) exits 2 before any data is read") {
  // Checked before training, not when writing after it. A data folder that
  // does not exist shows the order: the --output error comes first.
  const auto folder = temp_dir() / "train_out_folder.json";
  fs::create_directories(folder);
  const std::string no_data = "\"" + (temp_dir() / "no_such_data").string() + "\"";
  check_exit2("train --data " + no_data + " --hidden 2 --epochs 1 --output \"" + folder.string() + "\"",
              "--output: '" + folder.string() + "' is a folder, not a file");
  const auto weights = temp_dir() / "train_out2.safetensors";
  fs::create_directories(weights);
  check_exit2("train --data " + no_data + " --hidden 2 --epochs 1 --output \"" +
                  (temp_dir() / "train_out2.json").string() + "\"",
              "is a folder, not a file");
}

TEST_CASE("report: an unknown report name exits 2") {
  const auto r = run_cli("report nosuch");
  CHECK(r.status == 2);
}

TEST_CASE("simulate network: a missing network manifest exits 2 naming it") {
  const auto missing = (temp_dir() / "no_net.json").string();
  check_exit2("simulate network --net \"" + missing + "\" --data \"" + temp_dir().string() + "\" --neurons \"" +
                  fixture("three_state.json") + "\" --T 1 --trials 1",
              "no_net.json");
}

TEST_CASE("bernstein: a sufficient N beyond 2^62 is reported as such, not as a negative number or a refutation") {
  // (L_h / (2 eps))^2 ~ 1e29 here: a cast to int64 would be undefined (on
  // x86, -9223372036854775808, below any N_lo, which would read as "refuted").
  const auto r = run_cli("bernstein --activation relu --domain 1,10001 --rho 1000000000000 --eps 1e-6 --cap 4");
  CHECK_MESSAGE(r.status == 0, r.output);
  CHECK_MESSAGE(r.output.find("paper's sufficient N = > 2^62") != std::string::npos, r.output);
  CHECK(r.output.find("-9223372036854775808") == std::string::npos);
  const auto j = run_cli("bernstein --activation relu --domain 1,10001 --rho 1000000000000 --eps 1e-6 --cap 4 --json");
  CHECK_MESSAGE(j.output.find("\"paper_sufficient_N\": null") != std::string::npos, j.output);
}

TEST_CASE("report: an unusable --out exits 2 naming --out before any report runs") {
  const auto file = write_file("not_a_folder", "x\n");
  check_exit2("report flux --out \"" + file + "\"", "--out");
  check_exit2("report all --out \"" + file + "\"", "--out");
  check_exit2("report flux --out /etc/passwd", "--out");
  // Nothing was written beside the file (no temporary folders left behind).
  std::size_t entries = 0;
  for (const auto& e : fs::directory_iterator(temp_dir()))
    if (e.path().filename().string().find(".flux") != std::string::npos) ++entries;
  CHECK(entries == 0);
}

TEST_CASE("--threads out of 0..1024 exits 2 naming --threads") {
  const std::string m = "\"" + fixture("three_state.json") + "\"";
  check_exit2("report flux --threads -7 --out \"" + temp_dir().string() + "\"", "--threads");
  check_exit2("report all --threads 5000 --out \"" + temp_dir().string() + "\"", "--threads");
  check_exit2("simulate neuron " + m + " --H 0 --T 1 --trials 10 --threads -5", "--threads");
  check_exit2("simulate neuron " + m + " --H 0 --T 1 --trials 10 --threads 1025", "--threads");
}

TEST_CASE("unbounded sizes exit 2 naming the option instead of running out of memory or time") {
  const std::string m = "\"" + fixture("three_state.json") + "\"";
  const auto d = temp_dir().string();
  check_exit2("train --data \"" + d + "\" --output \"" + d + "/n.json\" --hidden 2000000000", "--hidden");
  check_exit2("train --data \"" + d + "\" --output \"" + d + "/n.json\" --hidden 16,65537", "--hidden");
  check_exit2("simulate neuron " + m + " --H 0 --T 1 --trials 100000000000", "--trials");
  // --T 1e300 ran forever: refused up front by the transition budget.
  check_exit2("simulate neuron " + m + " --H 0 --T 1e300 --trials 10", "--T");
  check_exit2("simulate neuron " + m + " --H 0 --T 1e9 --trials 1000", "--trials");
}

TEST_CASE("counting: a horizon beyond double's range exits 2 naming --T") {
  const std::string m = "\"" + fixture("three_state.json") + "\"";
  check_exit2("counting " + m + " --H 0 --T 1e1000", "--T");
  check_exit2("counting " + m + " --H 0 --T 1e1000 --double", "--T");
  check_exit2("counting " + m + " --H 0 --T 1e-400 --double", "--T");
}

TEST_CASE("simulate: the command group has one description") {
  const auto r = run_cli("--help");
  CHECK(r.status == 0);
  std::size_t n = 0;
  for (std::size_t pos = r.output.find("\n  simulate "); pos != std::string::npos;
       pos = r.output.find("\n  simulate ", pos + 1))
    ++n;
  CHECK_MESSAGE(n == 1, r.output);
  CHECK(r.output.find("Simulate CTMC neurons and networks") != std::string::npos);
}

TEST_CASE("out of memory is a one-line exit 2, not an internal error") {
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer reserves terabytes of shadow address space at start-up,
  // which no `ulimit -v` leaves room for: the sanitizer build cannot pose this.
  MESSAGE("skipped under AddressSanitizer (ulimit -v leaves no room for its shadow memory)");
  return;
#endif
  // 1e9 trials (within the --trials cap) need 8 GB of counts, let past the
  // memory estimate by --max-memory: under a 1 GB address-space limit that
  // allocation fails with std::bad_alloc.
  const auto r = run_cli("simulate neuron \"" + fixture("three_state.json") +
                             "\" --H 0 --T 1e-9 --trials 1000000000 --max-memory 100",
                         "ulimit -v 1000000; ");
  INFO(r.output);
  CHECK(r.status == 2);
  CHECK(r.output.find("out of memory") != std::string::npos);
  CHECK(r.output.find("internal error") == std::string::npos);
  CHECK(one_line(r.output));
}
